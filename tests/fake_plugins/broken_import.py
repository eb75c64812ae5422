"""A plugin whose import fails."""

import gemmreg_dependency_that_does_not_exist  # noqa: F401
