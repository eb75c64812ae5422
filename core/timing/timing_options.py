"""What a timing command runs with where the user does not say, one constant
each: the number of processes, ``compare``'s shape, the time caps and the
budgets of one timing process (:class:`Policy`), here; the seed
(:data:`gemmreg.contract.inputs.DEFAULT_SEED`, the matrix's too) and the margin
(:data:`gemmreg.timing.stats.DEFAULT_MARGIN`) where they belong. The commands, the
worker and the parser's ``--help`` all read them, so the help cannot drift
from what runs.
"""

from __future__ import annotations

import math

import attrs
from gemmreg.contract import inputs
from gemmreg.timing import sequential, stats
from gemmreg.timing.rounds import StopRule

L2_STATES = ("clean", "dirty")
"""What the flush before each sample leaves in L2 (``compare --l2``, ``bench --l2``):
``clean`` reads the flush buffer (the default, ``L2_FLUSH_MULTIPLE``);
``dirty`` zeroes it, as ``triton.testing.do_bench`` does and gemmreg did
until December 2026, so each call starts on an L2 full of someone else's dirty
lines, as after a kernel that wrote a large output. Both evict A, B and C.
A kernel that suffers more than another from the dirty start shows it there
(``evidence/2026-12-02-h200-l2-flush-write-back/p2``: a persistent Triton kernel 2-5%
behind cuBLAS at two long shapes dirty, 0.3-0.8% clean); the default is the
state whose cost does not depend on where the flush buffer lies
(:data:`gemmreg.timing.clocks.L2_FLUSH_MULTIPLE`)."""
DEFAULT_L2 = "clean"

GPU_DEFAULT_PROCESSES = 5
CPU_DEFAULT_PROCESSES = 3
"""Independent processes of a fixed count: at least the seed's 3; 5 on a GPU
where a command runs a fixed count without being asked (``--ray``). A GPU
run is sequential by default instead (:data:`GPU_DEFAULT_BUDGET_S`)."""
GPU_DEFAULT_BUDGET_S: float | None = sequential.DEFAULT_BUDGET_S
"""A GPU sweep (``bench``) adds processes until every pair is decided, within
this budget per point (:mod:`gemmreg.timing.sequential`, ``--budget``)."""
GPU_COMPARE_BUDGET_S: float | None = 3 * sequential.DEFAULT_BUDGET_S
"""``compare`` asks about one point, so it may spend longer on it than a
sweep spends on each of its points. At a large point a process takes some
11 s on an H200 (8192x8192x32768 bf16: prepare, heat-soak, checks), so the
sweep's 40 s held only the first look there, and one of nine comparisons of
a known 1% difference stopped INCONCLUSIVE after it
(``evidence/2026-12-03-h200-decisive-verdicts``); three times that holds the
first three looks (3, 6 and 12 processes). A pair decided at the first look
(the seed ``compare``, 3x apart) stops there whatever the budget."""
CPU_DEFAULT_BUDGET_S: float | None = None
"""On the CPU a run keeps its fixed 3 processes unless ``--budget`` is given:
a process under Triton's interpreter takes seconds a call, and its figures
compare NumPy on the host (a correctness tool), not worth a minute more."""
DEFAULT_DEVICE_PROCESSES = 1
"""Profiling processes (CUPTI) on a GPU, ``--device-processes``. With 1 the
device-kernel regime is one process's figure beside the verdict; from
:data:`gemmreg.timing.stats.MIN_PROCESSES` it is judged across them like the
timed regimes. One process's figure can mislead: split-K's device-kernel
ratio against cuBLAS at 128x128x32768 bf16 moved 0.990-1.016x between five
processes whose own rounds each spanned under 0.7%
(``evidence/2026-12-02-h200-device-figure-spread/device-figures.txt``). Why 1 by default
all the same: each profiling process pays CUPTI's set-up (4 of the 5 s the one
process took in the README's two-kernel comparison), and they run one after
another, so 3 would add about 10 s to its 30 s; the figure says how
to get the verdict."""
GPU_DEFAULT_SHAPE = (512, 512, 512)
CPU_DEFAULT_SHAPE = (128, 128, 128)
"""On the CPU the Triton interpreter takes ~0.25 s per 128^3 call, so the
default comparison finishes well inside a minute."""
BENCH_MAX_TIME_S = 1.0
"""A sweep times many points: a shorter cap keeps 5 processes x many shapes
affordable (on a GPU; on the CPU a sweep keeps the policy's cap)."""


@attrs.frozen(kw_only=True)
class Policy:
    """Budgets of one process. Every threshold is here."""

    slot_s: float
    """Wall-clock budget of one kernel's slot in a round (at least one call)."""
    soak_min_s: float
    soak_max_s: float
    soak_min_calls: int
    stop: StopRule
    """When the primary regime's rounds stop; a regime measured beside them
    takes rounds of its own (:mod:`gemmreg.timing.regimes`)."""


GPU_POLICY = Policy(
    slot_s=0.01,
    soak_min_s=0.25,
    soak_max_s=3.0,
    soak_min_calls=10,
    stop=StopRule(min_rounds=10, min_kernel_s=0.05, max_rounds=5000, max_time_s=3.0),
)
CPU_POLICY = Policy(
    # Triton's interpreter takes ~0.25 s per 128^3 call: a short, honest run.
    slot_s=0.02,
    soak_min_s=0.0,
    soak_max_s=5.0,
    soak_min_calls=2,
    stop=StopRule(min_rounds=5, min_kernel_s=0.0, max_rounds=400, max_time_s=3.0),
)


def policy_for(
    gpu: bool,
    repeats: int | None = None,
    warmup: int | None = None,
    max_time_s: float | None = None,
) -> Policy:
    """The backend's policy. ``repeats`` fixes the number of rounds,
    ``warmup`` the minimum heat-soak calls per kernel, ``max_time_s`` caps
    the rounds of one process (sweeps use a short cap)."""
    policy = GPU_POLICY if gpu else CPU_POLICY
    if max_time_s is not None:
        policy = attrs.evolve(policy, stop=attrs.evolve(policy.stop, max_time_s=max_time_s))
    if repeats is not None:
        fixed = attrs.evolve(
            policy.stop,
            min_rounds=repeats,
            max_rounds=repeats,
            min_kernel_s=0.0,
            max_time_s=math.inf,
            target_halfwidth=-1.0,  # never "steady": exactly this many rounds
        )
        policy = attrs.evolve(policy, stop=fixed)
    if warmup is not None:
        policy = attrs.evolve(policy, soak_min_calls=warmup, soak_min_s=0.0)
    return policy


def default_processes(gpu: bool) -> int:
    return GPU_DEFAULT_PROCESSES if gpu else CPU_DEFAULT_PROCESSES


def budget(
    gpu: bool, processes: int | None, budget_s: float | None, fixed: bool, sweep: bool = True
) -> float | None:
    """A run's budget (None: a fixed count): ``--budget``'s, else none when
    ``--processes`` fixes the count or the run cannot look (``fixed``: a Ray
    run), else the backend's default for a sweep's point or (not ``sweep``)
    for ``compare``'s one point."""
    if budget_s is not None:
        return budget_s
    if processes is not None or fixed:
        return None
    if not gpu:
        return CPU_DEFAULT_BUDGET_S
    return GPU_DEFAULT_BUDGET_S if sweep else GPU_COMPARE_BUDGET_S


def first_processes(gpu: bool, processes: int | None, budget_s: float | None) -> int:
    """The processes a run starts with: ``--processes``, else a sequential
    run's first batch, else the backend's fixed default."""
    if processes is not None:
        return processes
    return sequential.FIRST_BATCH if budget_s is not None else default_processes(gpu)


def default_shape(gpu: bool) -> tuple[int, int, int]:
    return GPU_DEFAULT_SHAPE if gpu else CPU_DEFAULT_SHAPE


@attrs.define
class TimingOptions:
    """A timing command's options, with the defaults filled in where the user
    gave none (the options themselves are bounded by the parser)."""

    processes: int
    repeats: int | None
    warmup: int | None
    seed: int
    max_time_s: float | None
    """None: the policy's own cap (:data:`GPU_POLICY`, :data:`CPU_POLICY`)."""
    margin: float
    """The equivalence margin, as a fraction (0.01 for +-1%)."""
    task_timeout: float | None
    l2: str = DEFAULT_L2
    """What the L2 flush before each sample leaves on a GPU
    (:data:`gemmreg.timing.timing_options.L2_STATES`, ``--l2``)."""
    device_processes: int = DEFAULT_DEVICE_PROCESSES
    """Profiling processes on a GPU (``--device-processes``, :data:`DEFAULT_DEVICE_PROCESSES`)."""
    budget_s: float | None = None
    """Seconds of timed processes a point may spend adding processes until
    every pair is decided (``--budget``), :attr:`processes` being the first
    batch; None: exactly :attr:`processes`."""
    family: int = 1
    """The points whose verdicts are judged together (``bench --sweep-wide``:
    :attr:`gemmreg.timing.timing_records.CompareReport.family`); 1: each on its own."""


def timing_options(
    gpu: bool,
    *,
    sweep: bool = False,
    processes: int | None = None,
    repeats: int | None = None,
    warmup: int | None = None,
    seed: int | None = None,
    max_time_s: float | None = None,
    margin_pct: float | None = None,
    task_timeout: float | None = None,
    l2: str | None = None,
    device_processes: int | None = None,
    budget_s: float | None = None,
    fixed: bool = False,
) -> TimingOptions:
    """The options of ``compare`` (or of ``bench``: ``sweep``), defaults
    filled in; ``fixed``: the run cannot add processes (``--ray``)."""
    if max_time_s is None and sweep and gpu:
        max_time_s = BENCH_MAX_TIME_S
    spend = budget(gpu, processes, budget_s, fixed, sweep)
    return TimingOptions(
        processes=first_processes(gpu, processes, spend),
        budget_s=spend,
        repeats=repeats,
        warmup=warmup,
        seed=inputs.DEFAULT_SEED if seed is None else seed,
        max_time_s=max_time_s,
        margin=stats.DEFAULT_MARGIN if margin_pct is None else margin_pct / 100,
        task_timeout=task_timeout,
        l2=DEFAULT_L2 if l2 is None else l2,
        device_processes=DEFAULT_DEVICE_PROCESSES if device_processes is None else device_processes,
    )
