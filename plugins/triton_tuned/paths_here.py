"""Which of triton_tuned's paths can run here, and the candidates the tuner
weighs for a problem: what the GPU and the installed Triton offer (TMA
descriptors from Hopper on, Gluon's sm_90 kernel on a Triton that has the
API it is written in) and what the operands' strides allow, decided on
storage-less operands before anything is allocated. ``prepare``
(:mod:`gemmreg_plugins.triton_tuned`) and ``scripts/probe_decode_kernels.py``
take their candidate lists from here, so both see one list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import gemmreg
from gemmreg_plugins.triton_tuned import configs, dispatch, tma_rules, tuning_cache

if TYPE_CHECKING:
    import torch


def meta_operands(problem: gemmreg.Problem, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    """Operands with the strides the core will hand over, and no storage."""
    import torch

    a = torch.empty(problem.m, problem.k, dtype=dtype, device="meta")
    b = torch.empty(problem.k, problem.n, dtype=dtype, device="meta")
    out = torch.empty(problem.m, problem.n, dtype=dtype, device="meta")
    return (*gemmreg.apply_layout(a, b, problem.layout), out)


def tma_supported(where: gemmreg.Environment) -> bool:
    """TMA descriptors: NVIDIA compute capability 9 (Hopper) or later, and a
    Triton that has them."""
    if where.backend != "cuda" or where.capability is None or where.capability[0] < 9:
        return False
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: F401
    except ImportError:
        return False
    return True


GLUON_TRITON = (3, 6)
"""The oldest Triton whose Gluon API :mod:`.gluon_ws` is written in (compiled
for sm_90 with 3.6, 3.7 and 3.9, run on the H200 with 3.6; 3.5's
``warp_specialize`` took its arguments another way)."""


def triton_version() -> tuple[int, ...]:
    """Triton's major and minor version, as (3, 6); ``ValueError`` where its
    version string does not begin with them. Where a kernel path, or a test of
    one, depends on the Triton it was written and compiled with."""
    import triton

    return tuple(int(part) for part in triton.__version__.split(".")[:2])


def gluon_supported(where: gemmreg.Environment) -> bool:
    """Gluon's Hopper kernel: ``wgmma`` is sm_90 only (Blackwell has other
    tensor-core instructions), and it needs a Triton with the Gluon it is
    written in."""
    if not tma_supported(where) or where.capability is None or where.capability[0] != 9:
        return False
    try:
        version = triton_version()
        from triton.experimental.gluon.language.nvidia import hopper  # noqa: F401
    except (ImportError, ValueError):
        return False
    return version >= GLUON_TRITON


def gluon_layouts(a: torch.Tensor, b: torch.Tensor) -> bool:
    """The layouts the Gluon kernels take: A row-major, B row-major or a
    transposed view of a row-major N x K weight (``B_TRANSPOSED``), and for
    fp32 (:mod:`.gluon_tf32`) B row-major only, the one layout it is for."""
    if tma_rules.is_transposed(a):
        return False
    if a.element_size() == 4:
        return not tma_rules.is_transposed(b)
    return True


def transposed_view_offered(problem: gemmreg.Problem, where: gemmreg.Environment) -> bool:
    """Whether the tuner weighs the Gluon kernel on a transposed view of B for
    ``problem``: where its 128x256 tiles fill the GPU (the ``tiles`` family
    of :func:`.dispatch.family`), or anywhere under
    :func:`.tuning_cache.unmeasured_offered`. Right over the whole matrix on
    the H200. On an H100, the same points benched with it offered and without
    (one machine, one after the other, 5 processes each): level with cuBLAS
    where the tuner's other forms were SLOWER, at 8192x14336x4096 bf16 and
    2048x4096x4096 fp16, and no gain where the wide tiles leave SMs idle
    (``evidence/2026-12-06-h100-gluon-transposed-view``), as an H200 probe had
    found there (``plugins/triton_tuned/README.md``)."""
    if tuning_cache.unmeasured_offered():
        return True
    sms = where.multiprocessors
    return sms is not None and dispatch.family(problem.m, problem.n, problem.k, sms) == "tiles"


def candidates_for(problem: gemmreg.Problem, where: gemmreg.Environment) -> list[configs.Config]:
    """Every config the tuner weighs for ``problem`` on this GPU, in its
    order (``scripts/probe_decode_kernels.py`` times the same list)."""
    dtype = gemmreg.torch_dtype(problem.dtype)
    operands = meta_operands(problem, dtype)
    tma = tma_supported(where) and tma_rules.tma_stride_refusal(*operands) is None
    # candidates() also needs tma for the Gluon configs (TMA-able strides)
    a, b = operands[:2]
    gluon = gluon_supported(where) and gluon_layouts(a, b)
    if gluon and tma_rules.is_transposed(b):
        gluon = transposed_view_offered(problem, where)
    found = configs.candidates(
        where.backend, problem.dtype, problem.m, problem.n, problem.k, tma, gluon,
        where.multiprocessors,
    )  # fmt: skip
    if tuning_cache.unmeasured_offered():
        return found
    return [config for config in found if not configs.unmeasured(config)]
