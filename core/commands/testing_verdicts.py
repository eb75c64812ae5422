"""A speed verdict as a test assertion (:func:`gemmreg.testing.verdict`): a
kernel author writes "my kernel is not SLOWER than cuBLAS at these shapes"
as a pytest test, on gemmreg's own protocol (independent processes, the
sequential budget, every guard), and gets the typed verdict back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from gemmreg.commands.keywords import Shape
    from gemmreg.timing.timing_records import Verdict

NO_GPU = (
    "no GPU here: a speed verdict is taken on a GPU (on the CPU Triton kernels run "
    "under its interpreter, whose speed says nothing of the kernel's); pass "
    "allow_cpu=True to time them here anyway"
)


def verdict(
    kernel: str,
    baseline: str,
    shape: Shape | None = None,
    dtype: str = "fp32",
    layout: str = "rowmajor",
    *,
    allow_cpu: bool = False,
    **options: Any,
) -> Verdict:
    """``kernel`` timed against ``baseline`` at one point, as ``gemmreg
    compare BASELINE KERNEL`` times them, and the verdict on the pair::

        from gemmreg.testing import verdict

        def test_my_gemm_keeps_up_with_cublas():
            assert verdict("my_gemm", "vendor_gemm", shape="4096x4096x4096", dtype="bf16").not_slower

    ``options`` are :func:`gemmreg.compare`'s (``budget``, ``processes``,
    ``seed``, ...). The calling test is skipped, with the reason, where no
    verdict can be taken: no GPU here (unless ``allow_cpu``), a kernel that
    cannot run the problem here, or kernels that run unlike each other (one
    under Triton's interpreter, one native). A kernel that fails its checks
    gives an INVALID verdict, which no assertion above passes."""
    from gemmreg.contract import backend

    if not allow_cpu and not backend.gpu_likely():
        pytest.skip(NO_GPU)
    import gemmreg

    result = gemmreg.compare([baseline, kernel], shape, dtype, layout, **options)
    if not allow_cpu and not backend.current().is_gpu:
        pytest.skip(NO_GPU)
    for summary in result.summaries:
        if summary.status == "skipped":
            pytest.skip(f"{summary.kernel} cannot run it here: {summary.reason}")
    found = result.verdict(kernel, baseline)
    if found.verdict == "no verdict":
        pytest.skip(f"{kernel} vs {baseline}: no verdict: {found.explanation}")
    return found
