"""gemmreg-splitk: split-K GEMM for skinny problems, as a gemmreg plugin.

When M and N are small and K is large, the output grid has too few tiles to
fill the GPU. Split-K gives each output tile ``SPLIT_K`` programs, each summing
one slice of K into an fp32 partial; in the same launch, the last program to
finish a tile reduces its partials and writes C (:mod:`gemmreg_splitk.kernel`
says why one launch).
"""

__version__ = "0.1.0"
