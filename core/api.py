"""gemmreg's Python API: the command line's ``compare``, ``bench`` (and
``bench --resume``: :func:`resume`; both written in :mod:`gemmreg.commands.sweep_calls`),
``check`` and ``report``'s reading of a saved run, as calls that return typed records
(for a notebook, a test, a script), importable from ``gemmreg`` itself.

Each call builds the same request record the command line parses its
options into (:mod:`gemmreg.commands.requests`) and hands it to the same
work (:mod:`gemmreg.commands.compare_command` and its siblings): the
verdicts, the files saved and the refusals are the command's. What only
the command line does is left out: printing (ask a result for its
``table()``), spreading the work over GPUs (``--devices``, ``--ray``) and
the profilers (``--ncu``, ``--nsys``).

Bad input (an unknown plugin, a malformed shape, an option out of bounds,
a folder that holds a run) raises :class:`gemmreg.UsageError` before any
worker starts, with the one line the command would print. Progress lines
go to ``progress`` (``print``, say); by default nowhere. Ctrl-C during the
timing returns what finished, marked ``partial``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gemmreg.commands import (
    check_command,
    compare_command,
    keywords,
    launching,
    option_effects,
)
from gemmreg.commands.keywords import Names, PathLike, Shape
from gemmreg.commands.requests import (
    CheckRequest,
    CompareRequest,
    TimingAsked,
)
from gemmreg.commands.results import BenchResult, CheckResult, CompareResult, Run
from gemmreg.commands.sweep_calls import bench, resume
from gemmreg.contract.low_precision import FP8_OUT_DTYPES, FP8_SCALINGS
from gemmreg.contract.options import UsageError
from gemmreg.contract.records import ALL_DTYPES, BATCH_LAYOUTS, DTYPES, LAYOUTS

__all__ = [
    "BenchResult",
    "CheckResult",
    "CompareResult",
    "Run",
    "UsageError",
    "bench",
    "check",
    "compare",
    "load_run",
    "resume",
]


def compare(
    kernels: Sequence[str],
    shape: Shape | None = None,
    dtype: str = "fp32",
    layout: str = "rowmajor",
    *,
    out_dtype: str | None = None,
    scaling: str | None = None,
    batch: int = 1,
    batch_layout: str = "packed",
    groups: Sequence[int] | str | None = None,
    processes: int | None = None,
    budget: float | None = None,
    seed: int | None = None,
    margin: float | None = None,
    repeats: int | None = None,
    warmup: int | None = None,
    max_time: float | None = None,
    timeout: float | None = None,
    l2: str | None = None,
    device_processes: int | None = None,
    out: PathLike | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> CompareResult:
    """``gemmreg compare``: time two or more kernels at one point, in
    independent processes, and judge every pair (``result.verdict(kernel)``).

    ``shape`` defaults to the backend's (512^3 on a GPU, 128^3 on the CPU).
    The keywords are the command's options: ``margin`` in percent (1.0 is
    +-1%), ``budget`` and ``max_time`` and ``timeout`` in seconds;
    ``processes`` fixes the count (3 on the CPU by default), ``budget`` lets
    it grow until every pair is decided (the default on a GPU). ``out``:
    save the run there, as ``compare --out`` does (``force``: replace a run
    it holds). ``out_dtype`` and ``scaling``: an fp8 ``dtype``'s C dtype and
    scaling (default: bf16, per tensor). ``batch`` above 1: C[i] = A[i] @ B[i]
    for that many items, laid out as ``batch_layout`` says (``packed`` or
    ``strided``), as ``--batch`` and ``--batch-layout``. ``groups``: an MoE
    grouped GEMM's member sizes beside ``shape`` ``"NxK"``, as ``--groups``."""
    timing = keywords.timing(locals())
    fp8 = dict(out_dtype=out_dtype, scaling=scaling)
    batched = dict(batch=batch, batch_layout=batch_layout, groups=groups)
    asked = dict(
        shape=shape, dtype=dtype, layout=layout, **fp8, **batched, **timing, out=out, force=force
    )
    dtype_ = keywords.one(dtype, "dtype", ALL_DTYPES)
    option_effects.refuse_unused_problem_keywords(
        [dtype_], [keywords.batch(batch)], out_dtype, scaling, batch_layout
    )
    request = CompareRequest(
        kernels=keywords.names("compare", kernels),
        shape=None if shape is None else keywords.shape(shape, keywords.groups(groups)),
        dtypes=(dtype_,),
        layout=keywords.one(layout, "layout", LAYOUTS),
        out_dtype=keywords.fp8_out(out_dtype),
        scaling=keywords.fp8_scaling(scaling),
        batch=keywords.batch(batch),
        batch_layout=keywords.batch_layout(batch_layout),
        groups=keywords.groups(groups),
        timing=TimingAsked(**timing),
        out=keywords.folder(out, "out"),
        force=force,
        manifest={"command": keywords.call("compare", kernels, **asked)},
    )
    return launching.answered(compare_command.compare, compare_command.save, request, progress)


def check(
    plugins: Sequence[str] | None = None,
    *,
    full: bool = False,
    dtypes: Names | None = None,
    layouts: Names | None = None,
    out_dtypes: Names | None = None,
    scalings: Names | None = None,
    batches: Sequence[int] = (1,),
    batch_layouts: Names | None = None,
    grouped: bool = False,
    seed: int | None = None,
    timeout: float | None = None,
    out: PathLike | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> CheckResult:
    """``gemmreg check``: the correctness matrix on ``plugins`` (every one
    installed, by default), in crash-isolated workers; ``full``: the full
    matrix, else the quick one. ``dtypes`` and ``layouts`` narrow the
    cases (default: fp32, fp16 and bf16, every layout); fp8 and int8 run when
    named, their cases narrowed by ``out_dtypes`` and ``scalings`` (default:
    all). ``batches``: the batch sizes (1, the matrix as it always was; each
    above it, batched cases in ``batch_layouts``, default every one), as
    ``--batch`` and ``--batch-layout``; ``grouped``: the grouped cases too, as
    ``--grouped``. ``result.passed`` is the command's exit 0."""
    request = CheckRequest(
        plugins=() if plugins is None else keywords.names("check", plugins),
        level="full" if full else "quick",
        dtypes=tuple(DTYPES if dtypes is None else keywords.many(dtypes, "dtypes", ALL_DTYPES)),
        layouts=tuple(keywords.many(layouts, "layouts", LAYOUTS)),
        out_dtypes=tuple(keywords.many_or_none(out_dtypes, "out_dtypes", FP8_OUT_DTYPES)),
        scalings=tuple(keywords.many_or_none(scalings, "scalings", FP8_SCALINGS)),
        batches=tuple(batches),
        batch_layouts=tuple(keywords.many_or_none(batch_layouts, "batch_layouts", BATCH_LAYOUTS)),
        grouped=bool(grouped),
        seed=seed,
        timeout=timeout,
        out=keywords.folder(out, "out"),
        force=force,
    )
    return launching.answered(check_command.check, check_command.save, request, progress)


def load_run(path: PathLike, *, accept_edited: bool = False) -> Run:
    """A run saved by ``compare --out``, ``bench`` or :func:`compare` (the
    records ``gemmreg report`` reads): its reports, manifest and whether it
    is partial. A folder that holds no readable run raises
    :class:`UsageError`; so does one whose content no longer matches its
    checksum, unless ``accept_edited``."""
    from gemmreg.reporting import runs

    folder = keywords.folder(path, "path")
    assert folder is not None
    try:
        manifest, reports, partial = runs.load_run(folder, not accept_edited)
    except runs.RunError as error:
        raise UsageError(str(error)) from None
    return Run(reports=tuple(reports), manifest=manifest, partial=partial, out=folder.absolute())
