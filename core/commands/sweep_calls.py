"""The Python API's sweeps: ``gemmreg bench`` (:func:`bench`) and ``bench
--resume`` (:func:`resume`), the rest of a sweep cut short, as calls that
return a :class:`~gemmreg.commands.results.BenchResult`. Written apart from
:mod:`gemmreg.api`, which exports them with the other calls (and lends them
to the ``gemmreg`` namespace); what :mod:`gemmreg.api` says of every call
(the same requests and work as the command line, bad input raised as
:class:`gemmreg.UsageError` before any worker starts) holds here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gemmreg.commands import bench_command, keywords, launching, option_effects
from gemmreg.commands.keywords import Names, PathLike, Shape
from gemmreg.commands.requests import BenchRequest, TimingAsked
from gemmreg.commands.results import BenchResult
from gemmreg.contract.records import ALL_DTYPES, LAYOUTS

__all__ = ["bench", "resume"]


def bench(
    kernels: Sequence[str],
    shapes: str | Sequence[Shape],
    dtypes: Names = "fp32",
    layouts: Names = "rowmajor",
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
    sweep_wide: bool = False,
    out: PathLike | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> BenchResult:
    """``gemmreg bench``: time kernels at every point of a sweep, every
    shape in every dtype and layout, the run saved after each point (in
    ``out``, by default a new folder under ``runs/``).

    ``shapes``: as ``--shape`` takes them (``"256:1024:256,2048"``, squares
    and ranges included), or a list of ``"MxNxK"`` and ``(m, n, k)``.
    ``sweep_wide``: judge the points together (``--sweep-wide``), so that a
    claim anywhere among them holds at the run's level. The other keywords
    are :func:`gemmreg.api.compare`'s (``batch`` and ``groups``: every point's)."""
    from gemmreg.timing.points import points

    timing = keywords.timing(locals())
    fp8 = dict(out_dtype=out_dtype, scaling=scaling)
    batched = dict(batch=batch, batch_layout=batch_layout, groups=groups)
    wide = keywords.flag(sweep_wide, "sweep_wide")
    asked = dict(shapes=shapes, dtypes=dtypes, layouts=layouts, **fp8, **batched, **timing)
    chosen = points(
        keywords.shapes(shapes, keywords.groups(groups)),
        [],
        keywords.many(dtypes, "dtypes", ALL_DTYPES),
        keywords.many(layouts, "layouts", LAYOUTS),
        keywords.fp8_out(out_dtype),
        keywords.fp8_scaling(scaling),
        (keywords.batch(batch), keywords.batch_layout(batch_layout)),
        keywords.groups(groups),
    )
    problems = [point.problem for point in chosen]
    option_effects.refuse_unused_problem_keywords(
        [p.dtype for p in problems], [p.batch for p in problems], out_dtype, scaling, batch_layout
    )
    request = BenchRequest(
        kernels=keywords.names("bench", kernels),
        points=tuple(chosen),
        timing=TimingAsked(**timing),
        out=keywords.folder(out, "out"),
        force=force,
        manifest={
            "shapes": keywords.label(shapes),
            "command": keywords.call(
                "bench", kernels, **asked, sweep_wide=wide, out=out, force=force
            ),
        },
        sweep_wide=wide,
    )
    return launching.answered(bench_command.bench, None, request, progress)


def resume(
    run: PathLike,
    kernels: Sequence[str] | None = None,
    *,
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
    sweep_wide: bool = False,
    out: PathLike | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> BenchResult:
    """``gemmreg bench KERNELS --resume RUN``: the points the sweep saved at
    ``run`` planned and lacks whole (cut short: Ctrl-C, a time limit), timed
    with its kernels (``kernels``, if given, must be those, in its order),
    in its order and with its weights, and saved as a run of their own
    (``run`` is never written); ``report --parts RUN OUT`` joins the two.
    With no timing keyword, the rest is timed as ``run`` was asked to be
    (a progress line says so), and judged as ``run`` judged its points
    (together where it was sweep-wide); the keywords are :func:`bench`'s."""
    from gemmreg.commands import resuming

    timing = keywords.timing(locals())
    wide = keywords.flag(sweep_wide, "sweep_wide")
    request, lines = resuming.called(run, kernels, TimingAsked(**timing), out, force, wide)
    if progress is not None:  # what it times and what the run has, before the work
        for line in lines:
            progress(line)
    return launching.answered(bench_command.bench, None, request, progress)
