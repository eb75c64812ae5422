"""Input generation and layouts.

Inputs are drawn on the CPU from a seeded ``torch.Generator`` and then moved,
so one seed gives the same elements on every device. They are never all-ones
or zeros: such inputs hide wrong strides, and zeros run faster than real data
on power-limited GPUs.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

from gemmreg.contract.batching import BATCH_GAP
from gemmreg.contract.grouping import operand_shapes
from gemmreg.contract.low_precision import is_low_precision
from gemmreg.contract.low_precision import torch_dtype as torch_dtype  # its home was here
from gemmreg.contract.low_precision_inputs import low_precision_inputs

if TYPE_CHECKING:
    import torch
    from gemmreg.contract.records import InputGenerator, KernelSpec, Problem

DEFAULT_SEED = 20260719
"""The seed chapter's seed: every case of the matrix and every timing run
draws its inputs from it unless ``--seed`` says otherwise."""


def normal_inputs(problem: Problem, seed: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    """Standard normal A and B: signed, so cancellation in C is exercised.
    Fresh tensors on every call (a kernel may write into its inputs). For fp8
    and int8, the format's ``normal`` values (with fp8's scales:
    :mod:`gemmreg.contract.low_precision_inputs`)."""
    if is_low_precision(problem.dtype):
        return low_precision_inputs(problem, seed, device, "normal")
    a, b = _normal_draw(*operand_shapes(problem), seed)
    dtype = torch_dtype(problem.dtype)
    return (
        a.to(device=device, dtype=dtype, copy=True),
        b.to(device=device, dtype=dtype, copy=True),
    )


@functools.lru_cache(maxsize=1)
def _normal_draw(
    a_shape: tuple[int, ...], b_shape: tuple[int, ...], seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The CPU draw behind :func:`normal_inputs`, kept for the next caller: a
    timing process prepares every kernel of a comparison on the same seed,
    and drawing 2 x 8192^2 normals on the CPU took about a second per kernel
    on the H200's host (ten of a sweep point's 25 s per process). Only the
    last draw is kept (2 GB of host memory at 8192 x 8192 x 32768). A batched
    problem's are (batch, m, k) and (batch, k, n), every item drawn in turn; a
    grouped one's A its members' rows stacked and B one per member
    (:func:`~gemmreg.contract.grouping.operand_shapes`)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    a = torch.randn(a_shape, generator=generator)
    b = torch.randn(b_shape, generator=generator)
    return a, b


def default_generator() -> InputGenerator:
    return normal_inputs


def generator_name(spec: KernelSpec) -> str:
    """A stable name for a kernel's input generator, shown beside timing figures.
    Here rather than on the spec: the records never import the inputs."""
    fn = spec.make_inputs or default_generator()
    module = RECORDED_MODULE if fn.__module__ == __name__ else fn.__module__
    return f"{module}.{getattr(fn, '__qualname__', repr(fn))}"


RECORDED_MODULE = "gemmreg.inputs"  # the old path, on purpose (relayer: keep)
"""The module gemmreg's own generators are named under in saved runs: where
they lived before the core moved into layers (now this module). Runs compare
their generators by name, so a run saved before the move and one after are
not told apart as unlike inputs."""


MIXED_BINADES = {"fp32": 12, "fp16": 4, "bf16": 4}
"""``mixed`` scales each element by 2^e, e uniform in [-B, B]: wide in fp32, and
narrow enough in 16 bits that C stays far inside the fp16 range."""
SMALLINT_RANGE = 3
"""``smallint`` draws integers in [-3, 3]: exact in every dtype."""
DRAW_ON_DEVICE_ABOVE = 2**26
"""Operands with more elements than this are drawn on the GPU (GPU-only cases)."""


def core_inputs(
    problem: Problem, seed: int, device: torch.device, kind: str
) -> tuple[torch.Tensor, ...]:
    """The matrix's own value distributions (see ``gemmreg.checking.matrix.ValueKind``):
    ``(a, b)``, or for a scaled problem ``(a, b, scale_a, scale_b)``."""
    import torch

    if is_low_precision(problem.dtype):
        return low_precision_inputs(problem, seed, device, kind)

    # Large operands are drawn on the device itself: drawing 2^31 elements on the
    # CPU and copying them over would take longer than the case.
    a_shape, b_shape = operand_shapes(problem)
    largest = max(math.prod(a_shape), math.prod(b_shape))
    on_device = device.type != "cpu" and largest > DRAW_ON_DEVICE_ABOVE
    where = device if on_device else torch.device("cpu")
    generator = torch.Generator(device=where).manual_seed(seed)

    def draw(shape: tuple[int, ...]) -> torch.Tensor:
        if kind == "normal":
            x = torch.randn(shape, generator=generator, device=where)
        elif kind == "uniform":
            x = torch.rand(shape, generator=generator, device=where)
        elif kind == "mixed":
            binades = MIXED_BINADES[problem.dtype]
            exponent = torch.randint(
                -binades, binades + 1, shape, generator=generator, device=where
            )
            x = (
                torch.randn(shape, generator=generator, device=where)
                / problem.k**0.5
                * 2.0**exponent
            )
        elif kind == "smallint":
            x = torch.randint(
                -SMALLINT_RANGE, SMALLINT_RANGE + 1, shape, generator=generator, device=where
            )
        else:
            raise ValueError(f"unknown value kind {kind!r}")
        return x.to(device=device, dtype=torch_dtype(problem.dtype))

    return draw(a_shape), draw(b_shape)


PAD = 3
"""Poison elements (:func:`_poison`) after every row of a ``padded``
operand: odd, so that row starts are not aligned to any power of two past
the first row's."""
LEAD_BYTES = 16
"""Poison before a ``padded`` operand's first row: the view starts this many
bytes into its storage (a non-zero storage offset), as a slice of a larger
tensor does (Q, K and V cut from a fused projection's output). A kernel that
reads from the storage's base instead of the tensor's own start
(``untyped_storage().data_ptr()``, or ``as_strided`` at offset 0) reads
poison there, and every other layout starts at offset 0, so only this one
shows it. 16 bytes, so every row start keeps the alignment it had at offset
0, and a kernel choosing vector loads or TMA by the base's alignment chooses
as it did."""


def apply_layout(a: torch.Tensor, b: torch.Tensor, layout: str) -> tuple[torch.Tensor, ...]:
    """Return A and B with the same values, laid out in memory as ``layout`` says.

    The core lays out every case's operands with it, so a plugin that builds
    operands of its own (to tune on, say) gets exactly the strides and storage
    offsets it will be handed, the NaN in the padding of ``padded`` included:
    there the rows sit in a buffer that begins with :data:`LEAD_BYTES` of
    poison and holds :data:`PAD` poison elements after every row, so the view
    starts at a non-zero storage offset, its row stride is the row length
    plus ``PAD``, and poison sits before every row's first element and after
    every row's last (the last row's included). A batched problem's 3-D
    operands get it item by item (their last two dimensions), packed; then
    :func:`apply_batch_layout`."""
    import torch

    def transposed(x: torch.Tensor) -> torch.Tensor:
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)

    def padded(x: torch.Tensor) -> torch.Tensor:
        cols, lead = x.shape[-1], LEAD_BYTES // x.element_size()
        rows = math.prod(x.shape[:-1])
        flat = torch.full((lead + rows * (cols + PAD),), _poison(x), dtype=x.dtype, device=x.device)
        wide = flat[lead:].view(*x.shape[:-1], cols + PAD)
        wide[..., :cols] = x
        return wide[..., :cols]

    if layout == "rowmajor":
        return a.contiguous(), b.contiguous()
    if layout == "transposedA":
        return transposed(a), b.contiguous()
    if layout == "transposedB":
        return a.contiguous(), transposed(b)
    if layout == "padded":
        return padded(a), padded(b)
    raise ValueError(f"unknown layout {layout!r}")


def _poison(x: torch.Tensor) -> float | int:
    """What padding holds: NaN, so a kernel that reads it sees NaN (int8, which
    has none: its largest value, which the sums it reaches cannot hide)."""
    import torch

    return float("nan") if x.dtype.is_floating_point else torch.iinfo(x.dtype).max


def apply_batch_layout(
    a: torch.Tensor, b: torch.Tensor, batch_layout: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """A batched problem's A and B (3-D, each item already laid out by
    :func:`apply_layout`) with the same values, their items placed as
    ``batch_layout`` says (:data:`gemmreg.contract.vocabulary.BatchLayout`):
    ``packed`` as they are; ``strided`` with :data:`BATCH_GAP` elements of
    NaN between one item's storage and the next, so the batch stride exceeds
    the item's size and a kernel that assumes a packed batch reads the wrong
    elements."""
    if batch_layout == "packed":
        return a, b
    if batch_layout == "strided":
        return _spread(a), _spread(b)
    raise ValueError(f"unknown batch layout {batch_layout!r}")


def _spread(x: torch.Tensor) -> torch.Tensor:
    """``x``'s items a gap apart, each laid out as in ``x``: the same strides
    within an item, and the view at the same storage offset (a ``padded``
    item's first row starts :data:`LEAD_BYTES` into its block, poison
    before it as in ``x``). Every element outside the view holds poison."""
    import torch

    item, rows, cols = x.stride()
    step = item + BATCH_GAP
    start = x.storage_offset()
    size = start + x.shape[0] * step
    buffer = torch.full((size,), _poison(x), dtype=x.dtype, device=x.device)
    spread = buffer.as_strided(x.shape, (step, rows, cols), start)
    spread.copy_(x)  # the padding inside an item, if any, keeps its poison
    return spread
