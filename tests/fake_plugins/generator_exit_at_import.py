"""A plugin whose import raises GeneratorExit (a BaseException, not an Exception)."""

raise GeneratorExit("closed at import")
