"""What ``compare`` and ``bench`` decide from their shape options before any
work: the points (``--shape`` or ``--shapes``, ``--dtype``, ``--layout``),
and, once the plugins are read, the run's estimated time (a warning when it
is long) and the meter that shows progress against it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from gemmreg.deciding import options as opt
from gemmreg.deciding.options import UsageError
from gemmreg.deciding.points import Point, points
from gemmreg.interface.cli_common import _dtypes, _progress

DEFAULT_LAYOUT = "rowmajor"
"""``compare`` and ``bench`` time row-major operands unless ``--layout`` says."""


def layouts(value: str | None) -> list[Any]:
    from gemmreg.contract.records import LAYOUTS

    return opt.choices(DEFAULT_LAYOUT if value is None else value, LAYOUTS, "layout", "--layout")


def sweep_points(args: argparse.Namespace) -> list[Point]:
    """``bench``'s points: from ``--shape`` or the rows of ``--shapes``."""
    from gemmreg.deciding import shape_files

    dtypes, chosen = _dtypes(args.dtype), layouts(args.layout)
    if args.shapes is not None:
        return points([], shape_files.read_shapes(args.shapes), dtypes, chosen)
    return points(opt.parse_shapes(args.shape), [], dtypes, chosen)


def compare_point(args: argparse.Namespace, default_shape: Any) -> Point | None:
    """``compare``'s one point; None when no shape was given (the backend's
    default is filled in once the backend is known: ``default_shape``)."""
    from gemmreg.deciding import shape_files

    dtype, layout = _dtypes(args.dtype), layouts(args.layout)
    if len(dtype) != 1:
        raise UsageError("compare takes one --dtype")
    if len(layout) != 1:
        raise UsageError("compare takes one --layout")
    if args.shapes is not None:
        chosen = points([], shape_files.read_shapes(args.shapes), dtype, layout)
        if len(chosen) != 1:
            raise UsageError(
                f"--shapes {str(args.shapes)!r} makes {len(chosen)} points: compare times "
                "one (use bench for many)"
            )
        return chosen[0]
    if args.shape is None:
        return None
    return points([opt.parse_shape(args.shape)], [], dtype, layout)[0]


def interpreted(kernels: Sequence[Any]) -> list[bool]:
    """Per runnable kernel: does it run under Triton's interpreter here."""
    from gemmreg.contract.known_limits import triton_interpreted

    return [triton_interpreted(k.spec.capabilities.triton) for k in kernels if not k.unavailable]


def warn_if_long(
    command: str, kernels: Sequence[Any], problems: Sequence[Any], timing: Any, gpu: bool
) -> float:
    """The run's estimated seconds, with a warning line first when it is long."""
    from gemmreg.deciding import run_estimate, timing_options

    policy = timing_options.policy_for(gpu, timing.repeats, timing.warmup, timing.max_time_s)
    slow = interpreted(kernels)
    estimate = run_estimate.run_s(problems, slow, timing.processes, policy)
    warning = run_estimate.long_run_warning(
        estimate, len(problems), timing.processes, sum(slow), command
    )
    if warning:
        _progress(warning)
    return estimate
