"""The records a plugin fills in, and the problem the core hands it.

Every record is a frozen attrs class whose validators run when it is built, so
a nonsensical declaration fails inside the plugin's own hook, with the kernel
and field named, instead of halfway through a run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

import attrs
from gemmreg.contract import batching, grouping, known_limits, low_precision
from gemmreg.contract.declaration_checks import SpecError as SpecError  # its home for users
from gemmreg.contract.declaration_checks import (
    UnsupportedProblem,
    _boolean,
    _capability_set,
    _fail,
    _instance_of,
    _member_of,
    _optional_callable,
    _optional_positive,
    _positive,
    _required_callable,
    _tile,
    by_name,
    check_precision_mapping,
    defining_file,
    name_set,
    strings,
)
from gemmreg.contract.serialization import OMITTED_WHEN
from gemmreg.contract.tolerance_bounds import LOOSE_RTOL as LOOSE_RTOL  # was defined here
from gemmreg.contract.tolerance_bounds import Tolerance as Tolerance  # its home for users
from gemmreg.contract.tolerance_bounds import check_tolerances
from gemmreg.contract.vocabulary import (  # the records' words; importers find them here too
    ALL_DTYPES,
    BACKENDS,
    BATCH_LAYOUTS,
    DTYPES,  # noqa: F401
    ELEMENT_BYTES,  # noqa: F401
    LAYOUTS,
    LOW_PRECISION_DTYPES,  # noqa: F401
    MATH_MODES,
    NAME_PATTERN,
    OUT_DTYPES,
    SCALINGS,
    Availability,
    Backend,
    BatchLayout,
    DType,
    InputGenerator,
    Launch,  # noqa: F401
    Layout,
    MathMode,
    OutDType,
    Prepare,
    Scaling,
)

# ---------------------------------------------------------------------------
# The problem
# ---------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Problem:
    """One GEMM to run: C (m x n) = A (m x k) @ B (k x n); batched, C[i] = A[i] @ B[i];
    grouped, C_i = A_i @ B_i for members of m_i rows sharing n and k."""

    m: int = attrs.field(validator=_positive)
    n: int = attrs.field(validator=_positive)
    k: int = attrs.field(validator=_positive)
    dtype: DType = attrs.field(default="fp32", validator=_member_of(ALL_DTYPES))
    layout: Layout = attrs.field(default="rowmajor", validator=_member_of(LAYOUTS))
    out_dtype: OutDType = attrs.field(
        default=attrs.Factory(lambda self: low_precision.default_out(self.dtype), takes_self=True),
        validator=_member_of(OUT_DTYPES),
        metadata={OMITTED_WHEN: low_precision.fixed_by_dtype},
    )
    """C's dtype: fp8's choice of bf16, fp16, fp32; else fixed by ``dtype`` (int8's is
    int32), which it then follows whatever is given (``attrs.evolve`` included)."""
    scaling: Scaling = attrs.field(
        default=attrs.Factory(lambda self: low_precision.default_scaling(self.dtype), True),
        validator=_member_of(SCALINGS),
        metadata={OMITTED_WHEN: low_precision.fixed_by_dtype},
    )
    """How A and B are scaled (:data:`Scaling`): ``tensor`` or ``rowwise`` for fp8."""
    batch: int = attrs.field(default=1, validator=_positive, metadata=batching.OMITTED)
    """How many GEMMs of this shape (:mod:`gemmreg.contract.batching`); 1: the plain GEMM."""
    batch_layout: BatchLayout = attrs.field(
        default="packed", validator=_member_of(BATCH_LAYOUTS), metadata=batching.OMITTED
    )
    """Where a batched problem's items of A and B sit (:data:`BatchLayout`); batch 1: packed."""
    groups: tuple[int, ...] = attrs.field(
        default=(), converter=grouping.sizes, metadata=grouping.OMITTED
    )
    """Grouped (MoE): each member's m, n and k shared, m their sum (:mod:`.grouping`)."""

    def __attrs_post_init__(self) -> None:
        low_precision.settle(self)  # fixed by the dtype: follow it; fp8's: checked
        batching.settle(self)
        grouping.settle(self)

    @property
    def number_format(self) -> str:
        """``fp16``, or for fp8 ``fp8e4m3-bf16-rowwise``: how ids and tables name
        the element types and scaling (:func:`low_precision.format_label`)."""
        return low_precision.format_label(self.dtype, self.out_dtype, self.scaling)

    @property
    def shape(self) -> str:
        """``MxNxK``, the spelling used on the command line and in test ids."""
        return f"{self.m}x{self.n}x{self.k}"

    @property
    def mnk(self) -> tuple[int, int, int]:
        """``(m, n, k)``, in the order kernels usually take them."""
        return (self.m, self.n, self.k)

    @property
    def flops(self) -> int:
        """Algorithmic work, 2MNK per item (grouped: M the rows of every member)."""
        return 2 * self.batch * self.m * self.n * self.k

    @property
    def label(self) -> str:
        """``bf16-rowmajor-MxNxK``; batched, ``b8-bf16-...`` (``b8strided-`` strided)."""
        return batching.labelled(self, f"{self.number_format}-{self.layout}-{self.shape}")


# ---------------------------------------------------------------------------
# What a plugin declares
# ---------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Precision:
    """The math a kernel really uses for one dtype.

    Two results are compared as like-for-like only when their ``math`` agrees;
    ``detail`` says how, in words (which instruction, which flag).
    """

    math: MathMode = attrs.field(validator=_member_of(MATH_MODES))
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.math} ({self.detail})" if self.detail else self.math


@attrs.frozen(kw_only=True)
class Capabilities:
    """What a kernel can run, and with what arithmetic.

    The core only hands a kernel problems inside its capabilities; a problem
    outside them is reported as *skipped (reason)*, never as a failure.
    """

    precision: Mapping[DType, Precision] = attrs.field(converter=by_name)
    """The math really used per dtype, for example
    ``{"fp32": Precision(math="tf32", detail="tl.dot default on NVIDIA")}``. It is
    printed beside every figure, so unlike precisions are never compared silently."""
    dtypes: frozenset[DType] = attrs.field(
        default=attrs.Factory(lambda self: frozenset(self.precision), takes_self=True),
        converter=name_set,
        validator=_capability_set(ALL_DTYPES),
    )
    """The dtypes the kernel runs; by default, those it states a precision for."""
    out_dtypes: frozenset[OutDType] = attrs.field(
        default=frozenset({"bf16"}),
        converter=name_set,
        validator=_capability_set(low_precision.FP8_OUT_DTYPES),
    )
    """The dtypes its fp8 problems write (bf16, fp16, fp32); by default bf16.
    Every other problem writes the dtype its input fixes (int8: int32)."""
    scalings: frozenset[Scaling] = attrs.field(
        default=frozenset({"tensor"}),
        converter=name_set,
        validator=_capability_set(low_precision.FP8_SCALINGS),
    )
    """How its fp8 operands may be scaled (tensor, rowwise); by default per tensor."""
    backends: frozenset[Backend] = attrs.field(
        default=frozenset(BACKENDS), converter=name_set, validator=_capability_set(BACKENDS)
    )
    """Where the kernel runs; by default everywhere (CUDA, ROCm, the CPU), with
    ``KernelSpec.available`` saying why not on a machine where it cannot."""
    layouts: frozenset[Layout] = attrs.field(
        default=frozenset({"rowmajor"}), converter=name_set, validator=_capability_set(LAYOUTS)
    )
    batch_layouts: frozenset[BatchLayout] = attrs.field(
        default=frozenset(), converter=name_set, validator=_capability_set(BATCH_LAYOUTS, True)
    )
    """The batch layouts of the batched problems it runs (packed, strided); none
    by default: a problem of batch above 1 is refused, as an undeclared dtype is."""
    grouped: bool = attrs.field(default=False, validator=_boolean)
    """It runs grouped problems (:mod:`gemmreg.contract.grouping`); by default not."""
    max_dim: int | None = attrs.field(default=None, validator=_optional_positive)
    """Largest M, N or K the kernel accepts (for example, 32-bit size arguments)."""
    constraint: Callable[[Problem], str | None] | None = attrs.field(
        default=None, validator=_optional_callable
    )
    """Any further limit: returns the reason a problem is unsupported, or None."""
    tile: tuple[int, int, int] | None = attrs.field(default=None, validator=_tile)
    """(BLOCK_M, BLOCK_N, BLOCK_K) of the work each program or block does, if
    fixed: the core reports the tail waste (useful 2MNK against padded-tile work)."""
    triton: bool = attrs.field(default=False, validator=_boolean)
    """The kernel is written in Triton: the core applies Triton's known limits
    (:mod:`gemmreg.contract.known_limits`: bf16 under the interpreter is unsupported, no
    Triton installed is unavailable), so no Triton plugin restates them."""

    @precision.validator
    def _check_precision(self, attribute: attrs.Attribute, value: dict) -> None:
        check_precision_mapping(self, attribute, value, self.dtypes, ALL_DTYPES, Precision)

    def require(self, problem: Problem) -> None:
        """Raise :class:`UnsupportedProblem` unless ``problem`` is inside these
        capabilities. Call it at the top of ``prepare``."""
        if reason := self.unsupported(problem):
            raise UnsupportedProblem(reason)

    def unsupported(self, problem: Problem) -> str | None:
        """The reason this problem is outside the declared capabilities, or None."""
        if problem.dtype not in self.dtypes:
            return f"dtype {problem.dtype} not declared (declares {', '.join(sorted(self.dtypes))})"
        if problem.layout not in self.layouts:
            declared = ", ".join(sorted(self.layouts))
            return f"layout {problem.layout} not declared (declares {declared})"
        fp8 = problem.dtype in low_precision.FP8_DTYPES
        reason = fp8 and low_precision.undeclared_fp8(problem, self.out_dtypes, self.scalings)
        reason = reason or batching.undeclared(problem, self.batch_layouts)
        if reason or (reason := grouping.undeclared(problem, self.grouped)):
            return reason
        if self.max_dim is not None and max(problem.m, problem.n, problem.k) > self.max_dim:
            return f"a dimension exceeds the declared max_dim {self.max_dim}"
        if self.triton and (reason := known_limits.triton_unsupported(problem)):
            return reason
        if self.constraint is not None:
            return self.constraint(problem)
        return None


def _always_available() -> str | None:
    return None


@attrs.frozen(kw_only=True)
class KernelSpec:
    """One GEMM implementation, as a plugin registers it.

    A plugin never times itself, never prints pass/fail and never chooses
    shapes: it says how to run, how close is correct, how its inputs are made,
    and what it can do. The core does the rest.
    """

    names_a_kernel: ClassVar[bool] = True
    """A refused field of this record names its kernel (SpecError.kernel)."""

    name: str = attrs.field()
    """Unique across all installed plugins: lower case, digits and ``_``."""
    summary: str = attrs.field()
    """One line for ``gemmreg list``."""
    prepare: Prepare = attrs.field(validator=_required_callable)
    capabilities: Capabilities = attrs.field(validator=_instance_of(Capabilities))
    tolerances: Mapping[DType, Tolerance] = attrs.field(
        converter=by_name, validator=check_tolerances
    )
    """One tolerance per declared dtype (bounds: :mod:`gemmreg.contract.tolerance_bounds`)."""
    make_inputs: InputGenerator | None = attrs.field(default=None, validator=_optional_callable)
    """None means the core's default generator (``gemmreg.normal_inputs``;
    :func:`gemmreg.contract.inputs.generator_name` names whichever is used)."""
    available: Availability = attrs.field(default=_always_available, validator=_required_callable)
    """Checked lazily, on the machine that will run the kernel."""
    sources: tuple[str, ...] = attrs.field(
        default=attrs.Factory(lambda self: defining_file(self.prepare), takes_self=True),
        converter=strings,
    )
    """Paths of the kernel's source files, hashed into every run's manifest; by
    default, the file that defines ``prepare``. Name them all where the kernel
    lives in other files too (a ``.hip`` source, a module of kernels)."""
    vendor_library: bool = False
    """True for a vendor library (cuBLAS, hipBLAS...): the core flags any kernel
    that claims to beat one by more than ``SUSPICIOUS_SPEEDUP``."""

    @name.validator
    def _check_name(self, attribute: attrs.Attribute, value: str) -> None:
        if not isinstance(value, str) or not NAME_PATTERN.match(value):
            raise _fail(
                self, attribute, f"{value!r} must match {NAME_PATTERN.pattern} (e.g. 'my_splitk')"
            )

    @summary.validator
    def _check_summary(self, attribute: attrs.Attribute, value: str) -> None:
        if not isinstance(value, str) or not value.strip() or "\n" in value:
            raise _fail(self, attribute, "must be one non-empty line")

    def tolerance_for(self, dtype: DType) -> Tolerance:
        return self.tolerances[dtype]
