"""triton_tuned's fp8 path: e4m3 A and B, scaled per tensor or per row of A
and column of B, C in bf16, fp16 or fp32, through :mod:`.fp8_kernel`.

What is declared: math ``fp8`` (exact products, partial sums promoted into
fp32 every ``BLOCK_K`` elements of K, as cuBLASLt does without fast
accumulation), so the standard fp8 tolerance holds; e4m3 only (e5m2 would be
the same kernel, but is neither timed nor checked on a GPU yet); NVIDIA from
Hopper (sm90) only: the one target where Triton promotes (``max_num_imprecise_acc``
is honoured by its ``wgmma`` lowering, 64 rows and up) or widens e4m3 to fp16
(``mma.sync`` below 64 rows). On Ada (sm89) and sm12x Triton's fp8 dot is
``mma.sync`` on e4m3 chained through the tensor core's short running sum with
no promotion (``acc += tl.dot(a, b)`` is folded back into that chain), and
sm10x's ``tcgen05`` path is unchecked; not ROCm, whose MI300 takes the
other e4m3 (``fnuz``: no negative zero, another bias), not this one. Under
Triton's interpreter the core refuses fp8 (NumPy has no such type); the
tests run this same kernel there on fp16 operands that hold e4m3 values
(every e4m3 value is exact in fp16), which proves its indexing and scales.

The config is a rule, not a tuning (no GPU has timed it yet): ``BLOCK_K``
128 (fp8's ``wgmma`` takes 32 of K per instruction; four per promotion),
``BLOCK_M`` by M (16 to 128: a decode step's few rows in a 16-row tile on
``mma.sync``, on fp16 to which Triton widens e4m3 exactly; 64 rows and up
on fp8 ``wgmma``), 128 x 128 tiles on 8 warps for many rows, and for fewer
rows 64-wide columns where 128-wide ones would leave SMs idle. No 128 x 256
tile: promotion keeps two fp32 accumulators a thread (the running sum and
the partial one ``wgmma`` writes), 128 registers each at that size, and
ptxas spills them (255 registers and a stack for sm_90, where 128 x 128 on
8 warps takes 170 and none); the CPU tests hold every chosen config to no
stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from gemmreg_plugins.triton_tuned.fp8_kernel import fp8_kernel
from gemmreg_plugins.triton_tuned.launch_config import GROUP_M

if TYPE_CHECKING:
    import gemmreg
    import torch

DTYPES: tuple[gemmreg.DType, ...] = ("fp8e4m3",)
FP8_LEAST_CAPABILITY = (8, 9)
"""fp8 tensor cores came with NVIDIA Ada (sm89) and Hopper (sm90)."""
PROMOTING_MAJOR = 9
"""Hopper: where the kernel's partial sums are promoted (the module's docstring)."""
PRECISION_DETAIL = (
    "tl.dot on fp8 (wgmma on sm90), partial sums promoted into fp32 every BLOCK_K "
    "(max_num_imprecise_acc), scales applied to the fp32 tile"
)
ROCM_REFUSAL = (
    "triton_tuned's fp8 path is built for NVIDIA's e4m3 (float8_e4m3fn); an MI300 "
    "multiplies the other e4m3 (fnuz), and no AMD GPU has checked it"
)


@attrs.frozen(kw_only=True)
class Fp8Config:
    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    num_stages: int
    group_m: int = GROUP_M


INTERPRETED = Fp8Config(block_m=16, block_n=32, block_k=32, num_warps=4, num_stages=1)
"""The config the tests run under the interpreter (small tiles: NumPy)."""


def _tiles(m: int, n: int, block_m: int, block_n: int) -> int:
    return -(-m // block_m) * -(-n // block_n)


def config_for(m: int, n: int, num_sms: int) -> Fp8Config:
    """The GPU config for an M x N output on ``num_sms`` SMs (the module's rule)."""
    block_m = next((edge for edge in (16, 32, 64) if m <= edge), 128)
    if block_m == 128:
        return Fp8Config(block_m=128, block_n=128, block_k=128, num_warps=8, num_stages=4)
    block_n = 64 if _tiles(m, n, block_m, 128) < num_sms else 128
    return Fp8Config(block_m=block_m, block_n=block_n, block_k=128, num_warps=4, num_stages=4)


def refusal(problem: gemmreg.Problem, where: gemmreg.Environment) -> str | None:
    """Why this process cannot run ``problem``'s fp8 here, or None."""
    if problem.dtype not in DTYPES:
        return None
    if where.backend == "rocm":
        return ROCM_REFUSAL
    if where.backend != "cuda":
        return None
    major, minor = where.capability or (0, 0)
    if (major, minor) < FP8_LEAST_CAPABILITY:
        return "fp8 tensor cores need NVIDIA Ada (sm89) or later"
    if major != PROMOTING_MAJOR:
        return (
            "triton_tuned's fp8 promotes its partial sums into fp32 on Hopper (sm90) only; "
            f"on sm{major}{minor} Triton ignores max_num_imprecise_acc, so the declared "
            "math (fp8, cuBLASLt's precision) would not be assured"
        )
    return None


def run(
    config: Fp8Config,
    rowwise: bool,
    a: torch.Tensor,
    b: torch.Tensor,
    out: torch.Tensor,
    scale_a: torch.Tensor,
    scale_b: torch.Tensor,
) -> Any:
    """One launch: C = (scale_a * A) @ (B * scale_b), written into ``out``."""
    m, k = a.shape
    n = b.shape[1]
    grid = (_tiles(m, n, config.block_m, config.block_n),)
    return fp8_kernel()[grid](
        a,
        b,
        out,
        scale_a,
        scale_b,
        m,
        n,
        k,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        out.stride(0),
        out.stride(1),
        scale_a.stride(0),
        scale_b.stride(1),
        BLOCK_M=config.block_m,
        BLOCK_N=config.block_n,
        BLOCK_K=config.block_k,
        GROUP_M=config.group_m,
        ROWWISE=rowwise,
        PROMOTE_EVERY=config.block_k,
        num_warps=config.num_warps,
        num_stages=config.num_stages,
    )


def fp8_launcher(problem: gemmreg.Problem, where: gemmreg.Environment) -> gemmreg.Launch:
    """``launch(a, b, out, scale_a, scale_b)`` for ``problem``."""
    config = config_for(problem.m, problem.n, where.multiprocessors or 1)
    rowwise = problem.scaling == "rowwise"

    def launch(
        a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, sa: torch.Tensor, sb: torch.Tensor
    ) -> Any:
        return run(config, rowwise, a, b, out, sa, sb)

    return launch
