"""What ``compare`` and ``bench`` parse from their options, once, into the
request the command's work reads (:mod:`gemmreg.commands.requests`, the
same records the Python API builds): the points (``--shape`` or
``--shapes``, ``--dtype``, ``--layout``) and the timing options."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gemmreg.contract import options as opt
from gemmreg.contract.grouping import parse_nk
from gemmreg.contract.low_precision import FP8_DTYPES
from gemmreg.contract.options import UsageError

if TYPE_CHECKING:
    from gemmreg.contract.records import BatchLayout, DType, Layout, OutDType, Scaling
from gemmreg.commands import option_effects
from gemmreg.commands.cli_common import _batch_layouts, _dtypes, _one_out_dtype, _one_scaling
from gemmreg.commands.requests import BenchRequest, CompareRequest, TimingAsked
from gemmreg.timing.points import Point, points

DEFAULT_LAYOUT = "rowmajor"
"""``compare`` and ``bench`` time row-major operands unless ``--layout`` says."""


def layouts(value: str | None) -> list[Layout]:
    from gemmreg.contract.records import LAYOUTS

    return opt.choices(DEFAULT_LAYOUT if value is None else value, LAYOUTS, "layout", "--layout")


def batch(args: argparse.Namespace) -> tuple[int, BatchLayout]:
    """``--batch`` and ``--batch-layout``: one of each (default: 1, packed)."""
    layouts = _batch_layouts(args.batch_layout)
    if len(layouts) > 1:
        raise UsageError(f"--batch-layout {args.batch_layout!r}: compare and bench take one")
    return (args.batch or (1,))[0], layouts[0] if layouts else "packed"


def timing_asked(args: argparse.Namespace) -> TimingAsked:
    """The timing options as given (argparse has bounded each)."""
    return TimingAsked(
        processes=args.processes,
        budget=args.budget,
        repeats=args.repeats,
        warmup=args.warmup,
        seed=args.seed,
        max_time=args.max_time,
        margin=args.margin,
        timeout=args.timeout,
        l2=args.l2,
        device_processes=args.device_processes,
    )


DEFAULT_DTYPE = "fp32"
"""``compare`` and ``bench`` time fp32 unless ``--dtype`` says (the option's
own default is None, so that a ``--dtype`` no point takes, or one beside
``bench --resume``, can be refused)."""


def dtypes(value: str | None) -> list[DType]:
    return _dtypes(DEFAULT_DTYPE if value is None else value)


def sweep_points(args: argparse.Namespace) -> list[Point]:
    """``bench``'s points: from ``--shape`` or the rows of ``--shapes``."""
    made = _sweep_points(args)
    option_effects.refuse_unused_point_options(args, _sweep_points, made)
    return made


def _sweep_points(args: argparse.Namespace) -> list[Point]:
    from gemmreg.timing import shape_files

    dtypes_, chosen = dtypes(args.dtype), layouts(args.layout)
    fp8 = _one_out_dtype(args.out_dtype), _one_scaling(args.scaling)
    if args.shapes is not None:
        _no_groups_with_shapes(args)
        rows = shape_files.read_shapes(args.shapes)
        return points([], rows, dtypes_, chosen, *fp8, batch(args))
    return points(_shapes(args), [], dtypes_, chosen, *fp8, batch(args), args.groups or ())


def _shapes(args: argparse.Namespace) -> list[tuple[int, int, int]]:
    """``--shape``'s shapes; beside ``--groups``, each ``NxK`` with m the members' sum."""
    if not args.groups:
        return opt.parse_shapes(args.shape)
    return [(sum(args.groups), n, k) for n, k in parse_nk(args.shape)]


def _no_groups_with_shapes(args: argparse.Namespace) -> None:
    if args.groups:
        raise UsageError(
            "--groups goes with --shape; a --shapes file names each row's own in its groups column"
        )


def bench_request(args: argparse.Namespace) -> BenchRequest:
    source = {"shapes_file": str(args.shapes)} if args.shapes is not None else {}
    return BenchRequest(
        kernels=tuple(args.names),
        points=tuple(sweep_points(args)),
        timing=timing_asked(args),
        out=args.out,
        force=args.force,
        weighted=args.shapes is not None,
        manifest={"shapes": args.shape, **source},
        sweep_wide=args.sweep_wide,
    )


def compare_points(args: argparse.Namespace) -> list[Point] | None:
    """``compare``'s points: one shape and layout, at each dtype (a
    ``--shapes`` row's own dtype where it names one); None when no shape was
    given (the backend's default is filled in once the backend is known)."""
    made = _compare_points(args)
    option_effects.refuse_unused_point_options(args, _any_shape, made)
    return made


def _any_shape(args: argparse.Namespace) -> list[Point]:
    """``compare``'s points, at a stand-in shape where none was given:
    whether an option is used does not depend on the shape."""
    if args.shapes is None and args.shape is None:
        args = argparse.Namespace(**{**vars(args), "shape": "1x1" if args.groups else "1x1x1"})
    made = _compare_points(args)
    assert made is not None
    return made


def _compare_points(args: argparse.Namespace) -> list[Point] | None:
    from gemmreg.timing import shape_files

    dtypes_, layout = dtypes(args.dtype), layouts(args.layout)
    fp8 = _one_out_dtype(args.out_dtype), _one_scaling(args.scaling)
    if len(layout) != 1:
        raise UsageError("compare takes one --layout")
    if args.shapes is not None:
        _no_groups_with_shapes(args)
        rows = shape_files.read_shapes(args.shapes)
        chosen = points([], rows, dtypes_, layout, *fp8, batch(args))
        shapes = {(p.problem.mnk, p.problem.layout, *_batched(p), p.problem.groups) for p in chosen}
        if len(shapes) != 1:
            raise UsageError(
                f"--shapes {str(args.shapes)!r} makes {len(chosen)} points over {len(shapes)} "
                "shapes: compare times one shape, at each dtype (use bench for many)"
            )
        return chosen
    if args.shape is None:
        return None
    if args.groups:
        (n, k), *more = parse_nk(args.shape)
        if more:
            raise UsageError(f"--shape {args.shape!r}: compare takes one shape")
        shape = (sum(args.groups), n, k)
    else:
        shape = opt.parse_shape(args.shape)
    return points([shape], [], dtypes_, layout, *fp8, batch(args), args.groups or ())


def _batched(point: Point) -> tuple[int, BatchLayout]:
    return point.problem.batch, point.problem.batch_layout


def _fp8_choice(given: list[Point]) -> tuple[OutDType | None, Scaling | None]:
    """The one output dtype and scaling of ``given``'s fp8 points (a request
    carries one pair for all its fp8 dtypes); (None, None) when none is fp8."""
    chosen = {
        (p.problem.out_dtype, p.problem.scaling) for p in given if p.problem.dtype in FP8_DTYPES
    }
    if len(chosen) > 1:
        raise UsageError(
            "compare takes one output dtype and scaling for its fp8 points "
            f"(the file gives {len(chosen)}): use bench for several"
        )
    return chosen.pop() if chosen else (None, None)


def compare_request(args: argparse.Namespace) -> CompareRequest:
    """``compare``'s request; its shape from ``--shape``, a ``--shapes`` file
    of one shape (with its weights) or, given neither, the backend's default."""
    given = compare_points(args)
    from_file = args.shapes is not None
    if given is None:
        shape = None
        chosen, layout = dtypes(args.dtype), layouts(args.layout)[0]
        fp8 = _one_out_dtype(args.out_dtype), _one_scaling(args.scaling)
        batched = batch(args)
        groups = args.groups or ()
    else:
        shape = given[0].problem.mnk
        chosen, layout = [p.problem.dtype for p in given], given[0].problem.layout
        fp8 = _fp8_choice(given)
        batched = _batched(given[0])
        groups = given[0].problem.groups
    return CompareRequest(
        kernels=tuple(args.names),
        shape=shape,
        dtypes=tuple(chosen),
        layout=layout,
        out_dtype=fp8[0],
        scaling=fp8[1],
        batch=batched[0],
        batch_layout=batched[1],
        groups=groups,
        timing=timing_asked(args),
        out=args.out,
        force=args.force,
        weights=tuple(p.weight for p in given) if given is not None and from_file else None,
        manifest={"shapes_file": str(args.shapes)} if from_file else {},
    )
