"""A plugin whose import calls sys.exit(0): it must not silence gemmreg."""

import sys

sys.exit(0)
