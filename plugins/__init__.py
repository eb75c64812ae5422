"""gemmreg's built-in plugins. Each sub-package is a plugin in its own right,
registered through the same ``gemmreg`` entry-point group as third-party ones."""
