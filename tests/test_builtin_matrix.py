"""Every built-in plugin through the same pytest plugin third-party authors use.

On the CPU this is the quick matrix (HIP cases skip: no GPU); on a GPU run it
with ``--gemmreg-level=full``.
"""

from gemmreg.testing import matrix

test_builtins = matrix(
    "hip_naive",
    "hip_tiled",
    "hip_regtiled",
    "torch_ref",
    "torch_ref_tf32",
    "torch_ref_fp8",
    "torch_ref_int8",
    "triton_baseline",
    "triton_grouped",
    "triton_tuned",
)

test_builtins_low_precision = matrix(
    "torch_ref_fp8",
    "torch_ref_int8",
    dtypes=("fp8e4m3", "fp8e5m2", "int8"),
    layouts=("rowmajor", "transposedB"),
)
