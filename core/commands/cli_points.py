"""What ``compare`` and ``bench`` parse from their options, once, into the
request the command's work reads (:mod:`gemmreg.commands.requests`, the
same records the Python API builds): the points (``--shape`` or
``--shapes``, ``--dtype``, ``--layout``) and the timing options."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gemmreg.contract import options as opt
from gemmreg.contract.low_precision import FP8_DTYPES
from gemmreg.contract.options import UsageError

if TYPE_CHECKING:
    from gemmreg.contract.records import Layout
from gemmreg.commands.cli_common import _dtypes, _one_out_dtype, _one_scaling
from gemmreg.commands.requests import BenchRequest, CompareRequest, TimingAsked
from gemmreg.timing.points import Point, points

DEFAULT_LAYOUT = "rowmajor"
"""``compare`` and ``bench`` time row-major operands unless ``--layout`` says."""


def layouts(value: str | None) -> list[Layout]:
    from gemmreg.contract.records import LAYOUTS

    return opt.choices(DEFAULT_LAYOUT if value is None else value, LAYOUTS, "layout", "--layout")


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


def sweep_points(args: argparse.Namespace) -> list[Point]:
    """``bench``'s points: from ``--shape`` or the rows of ``--shapes``."""
    from gemmreg.timing import shape_files

    dtypes, chosen = _dtypes(args.dtype), layouts(args.layout)
    fp8 = _one_out_dtype(args.out_dtype), _one_scaling(args.scaling)
    if args.shapes is not None:
        return points([], shape_files.read_shapes(args.shapes), dtypes, chosen, *fp8)
    return points(opt.parse_shapes(args.shape), [], dtypes, chosen, *fp8)


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
    )


def compare_point(args: argparse.Namespace) -> Point | None:
    """``compare``'s one point; None when no shape was given (the backend's
    default is filled in once the backend is known)."""
    from gemmreg.timing import shape_files

    dtype, layout = _dtypes(args.dtype), layouts(args.layout)
    fp8 = _one_out_dtype(args.out_dtype), _one_scaling(args.scaling)
    if len(dtype) != 1:
        raise UsageError("compare takes one --dtype")
    if len(layout) != 1:
        raise UsageError("compare takes one --layout")
    if args.shapes is not None:
        chosen = points([], shape_files.read_shapes(args.shapes), dtype, layout, *fp8)
        if len(chosen) != 1:
            raise UsageError(
                f"--shapes {str(args.shapes)!r} makes {len(chosen)} points: compare times "
                "one (use bench for many)"
            )
        return chosen[0]
    if args.shape is None:
        return None
    return points([opt.parse_shape(args.shape)], [], dtype, layout, *fp8)[0]


def compare_request(args: argparse.Namespace) -> CompareRequest:
    """``compare``'s request; its point from ``--shape``, a one-row
    ``--shapes`` file (with its weight) or, given neither, the backend's default."""
    given = compare_point(args)
    from_file = args.shapes is not None
    if given is None:
        problem = None
        dtype, layout = _dtypes(args.dtype)[0], layouts(args.layout)[0]
        fp8 = _one_out_dtype(args.out_dtype), _one_scaling(args.scaling)
    else:
        problem = given.problem
        dtype, layout = problem.dtype, problem.layout
        fp8 = (problem.out_dtype, problem.scaling) if problem.dtype in FP8_DTYPES else (None, None)
    return CompareRequest(
        kernels=tuple(args.names),
        shape=None if problem is None else problem.mnk,
        dtype=dtype,
        layout=layout,
        out_dtype=fp8[0],
        scaling=fp8[1],
        timing=timing_asked(args),
        out=args.out,
        force=args.force,
        weight=given.weight if given is not None and from_file else None,
        manifest={"shapes_file": str(args.shapes)} if from_file else {},
    )
