"""Deliberately broken GEMM kernels: each one a bug the seed write-ups name.

They are registered as throwaway plugins (``GEMMREG_EXTRA_PLUGINS=mutants.triton_mutants``
with ``tests/`` on PYTHONPATH) and the correctness matrix must flag every one
of them, with the right reason, while passing the correct built-ins.
"""
