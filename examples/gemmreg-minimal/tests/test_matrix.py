"""minimal_triton against gemmreg's whole correctness matrix: one line."""

from gemmreg.testing import matrix

test_minimal_triton = matrix("minimal_triton")
