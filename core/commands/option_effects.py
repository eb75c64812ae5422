"""Options that would change nothing in the run asked for, refused in one
line before any work. A user who gives an option believes it took effect:
``--batch-layout strided`` on unbatched points, ``--out-dtype`` where no
point is fp8, ``--dtype`` beside a ``--shapes`` file whose every row names
its own, ``--grouped`` on dtypes no grouped problem takes. Each would run
and save a different run than the one the user thinks was measured, which
is worse than a refusal.

``check``'s options are judged against the matrix they would build (cheap,
pure: :func:`gemmreg.checking.matrix.build`); ``compare``'s and ``bench``'s
problem options by building the points again with the option's value
changed: an option whose value changes no point is not used by any."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from gemmreg.contract.options import UsageError

if TYPE_CHECKING:
    from gemmreg.commands.request_values import Spell
    from gemmreg.commands.requests import CheckRequest, TimingAsked
    from gemmreg.contract.records import Problem


def refuse_unused_check_options(request: CheckRequest, spell: Spell) -> None:
    """``check``'s problem options that no case of its matrix would take."""
    from gemmreg.checking import matrix
    from gemmreg.contract.low_precision import FP8_DTYPES
    from gemmreg.contract.records import BATCH_LAYOUTS, DTYPES, LAYOUTS

    dtypes = request.dtypes or DTYPES
    cases = matrix.build(
        request.level,
        False,  # the GPU adds larger shapes, never a kind of problem
        dtypes,
        request.layouts or LAYOUTS,
        request.out_dtypes,
        request.scalings,
        request.batches,
        request.batch_layouts or BATCH_LAYOUTS,
        request.grouped,
    )
    problems = [case.problem for case in cases]
    named = f"the dtypes: {','.join(dtypes)}"
    if not any(p.dtype in FP8_DTYPES for p in problems):
        for field, given in (("out_dtypes", request.out_dtypes), ("scalings", request.scalings)):
            if given:
                raise UsageError(
                    f"{spell(field)} {','.join(given)}: no case is fp8 ({named}; it narrows "
                    "the fp8 cases, and int8 writes int32): name an fp8 dtype, or drop it"
                )
    plain = "fp32, fp16 or bf16"
    for size in request.batches:
        if size > 1 and not any(p.batch == size for p in problems):
            raise UsageError(
                f"{spell('batches')} {size}: no case is batched (batched problems are {plain}; "
                f"{named})"
            )
    if request.batch_layouts and not any(p.batch > 1 for p in problems):
        raise UsageError(
            f"{spell('batch_layouts')} {','.join(request.batch_layouts)}: no case is batched "
            f"(it places a batch's items: add {spell('batches')} 1,N with N above 1)"
        )
    if request.grouped and not any(p.groups for p in problems):
        raise UsageError(
            f"{spell('grouped')}: no grouped case runs (grouped problems are {plain}; {named})"
        )


def refuse_force_without_out(out: object, force: bool, spell: Spell, new_folder: bool) -> None:
    """``--force`` replaces a run in ``--out``; without ``--out`` nothing is
    replaced (``new_folder``: ``bench``'s default folder is new, and empty)."""
    if force and out is None:
        where = "bench saves into a new, empty folder" if new_folder else "nothing is saved"
        raise UsageError(
            f"{spell('force')} replaces the run in {spell('out')}; without {spell('out')} "
            f"{where}: name the folder, or drop {spell('force')}"
        )


def refuse_unused_timing_options(timing: TimingAsked, spell: Spell, pairs: bool) -> None:
    """Timing options another option or the run's kernels leave unread:
    ``--repeats`` runs exactly that many rounds, so no time cap applies;
    with one kernel (not ``pairs``) no pair is judged, so no margin judges
    one and no budget adds processes to decide one."""
    repeats, max_time = spell("repeats"), spell("max_time")
    if timing.repeats is not None and timing.max_time is not None:
        raise UsageError(
            f"{repeats} and {max_time}: one or the other ({repeats} runs exactly that many "
            f"rounds, however long they take; {max_time} caps rounds that stop once steady)"
        )
    if pairs:
        return
    for field, what in (("margin", "judges a pair"), ("budget", "adds processes to decide a pair")):
        if getattr(timing, field) is not None:
            raise UsageError(
                f"{spell(field)} {what}: one kernel makes no pair; name a baseline first"
                + (f", or fix the count with {spell('processes')}" if field == "budget" else "")
            )


def refuse_gpu_timing_options(timing: TimingAsked, gpu: bool, spell: Spell) -> None:
    """``--l2`` (the flush before each GPU sample) and ``--device-processes``
    (CUPTI's profiling processes) on a run timed on the CPU, which has neither."""
    if gpu:
        return
    for field, what in (
        ("l2", "no L2 flush precedes a sample"),
        ("device_processes", "no process profiles a GPU's device work (CUPTI)"),
    ):
        value = getattr(timing, field)
        if value is not None:
            raise UsageError(
                f"{spell(field)} {value}: this run is timed on the CPU, where {what}; drop it"
            )


Build = Callable[[argparse.Namespace], Sequence[Any]]
"""``compare``'s or ``bench``'s points from options (each a Point)."""

_WHY: dict[str, tuple[str, str, str]] = {
    "out_dtype": (
        "no point is fp8 (it sets an fp8 point's C dtype; int8 writes int32)",
        "no point is fp8",
        "out_dtype",
    ),
    "scaling": (
        "no point is fp8 (it sets how an fp8 point is scaled)",
        "no point is fp8",
        "scaling",
    ),
    "batch_layout": (
        "no point is batched (it places a batch's items: add --batch N)",
        "no point is batched",
        "batch_layout",
    ),
    "dtype": ("", "", "dtype"),
    "layout": ("", "", "layout"),
    "batch": ("", "", "batch"),
}
"""Each problem option's reason where no point is of its kind (in full,
and short), and the column of a ``--shapes`` file that gives a row its own
value: there the row's wins over the option."""


def refuse_unused_point_options(
    args: argparse.Namespace, build: Build, made_already: Sequence[Any] | None = None
) -> None:
    """Each problem option given to ``compare`` or ``bench`` whose value
    changes none of the points ``build`` makes (``made_already``: the
    points it made from ``args``, where the caller has them): refused. With
    ``--shapes`` a row's own column wins over the option (``--dtype`` beside
    rows that each name their dtype)."""
    made = _problems(build(args) if made_already is None else made_already)
    shapes = getattr(args, "shapes", None)
    for field, (why, short, column) in _WHY.items():
        value = getattr(args, field, None)
        if value is None or (not why and shapes is None):
            continue
        changed = argparse.Namespace(**{**vars(args), field: _other(field, value)})
        try:
            if _problems(build(changed)) != made:
                continue
        except UsageError:  # the other value makes a point that cannot be: this one is used
            continue
        shown = ",".join(map(str, value)) if isinstance(value, tuple) else value
        if shapes is None:
            reason = why
        elif short:
            reason = f"{short}, or each such row of --shapes names its own {column}"
        else:
            reason = f"every row of --shapes names its own {column}"
        option = "--" + field.replace("_", "-")
        raise UsageError(f"{option} {shown}: {reason}; drop it")


def refuse_unused_problem_keywords(
    dtypes: Iterable[str],
    batches: Iterable[int],
    out_dtype: str | None,
    scaling: str | None,
    batch_layout: str,
) -> None:
    """The Python API's ``out_dtype``, ``scaling`` and ``batch_layout`` (a
    layout other than its default, ``packed``) where no problem of the call
    (its ``dtypes`` and ``batches``) is of their kind: refused, as on the
    command line."""
    from gemmreg.contract.low_precision import FP8_DTYPES

    fp8 = any(dtype in FP8_DTYPES for dtype in dtypes)
    batched = any(size > 1 for size in batches)
    given = (
        ("out_dtype", out_dtype, fp8),
        ("scaling", scaling, fp8),
        ("batch_layout", None if batch_layout == "packed" else batch_layout, batched),
    )
    for field, value, used in given:
        if value is not None and not used:
            raise UsageError(f"{field} {value!r}: {_WHY[field][1]}; drop it")


def _problems(points: Sequence[Any]) -> list[Problem]:
    return [point.problem for point in points]


def _other(field: str, value: Any) -> Any:
    """A value of ``field`` other than ``value``, as the option is written."""
    from gemmreg.contract.batching import MAX_BATCH
    from gemmreg.contract.low_precision import FP8_OUT_DTYPES, FP8_SCALINGS
    from gemmreg.contract.records import ALL_DTYPES, BATCH_LAYOUTS, LAYOUTS

    if field == "batch":
        return (value[0] % MAX_BATCH + 1,)
    choices: Sequence[str] = {
        "out_dtype": FP8_OUT_DTYPES,
        "scaling": FP8_SCALINGS,
        "batch_layout": BATCH_LAYOUTS,
        "dtype": ALL_DTYPES,
        "layout": LAYOUTS,
    }[field]
    given = str(value).split(",")
    others = [choice for choice in choices if choice not in given]
    return others[0] if others else given[0]  # every choice given: one of them alone
