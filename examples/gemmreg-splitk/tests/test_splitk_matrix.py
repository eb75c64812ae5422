"""The whole gemmreg correctness matrix for both split-K kernels: one line."""

from gemmreg.testing import matrix

test_splitk = matrix("splitk", "splitk_atomic")
