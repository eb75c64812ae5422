"""The options that say what kind of problem a command is about, beyond M, N,
K, dtype and layout: fp8's output dtype and scaling, a batch, an MoE layer's
grouped members. ``check`` takes several of each (its matrix runs them all),
``compare`` and ``bench`` one; the three always come together
(:func:`problem_form_options`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from gemmreg.contract import options as opt


def problem_form_options(parser: argparse.ArgumentParser, many: bool) -> None:
    """:func:`fp8_options`, :func:`batch_options` and :func:`group_options`."""
    fp8_options(parser, many)
    batch_options(parser, many)
    group_options(parser, many)


def fp8_options(parser: argparse.ArgumentParser, many: bool) -> None:
    """``--out-dtype`` and ``--scaling``, for the fp8 dtypes: ``check`` takes
    several of each (default: all), ``compare`` and ``bench`` one (default:
    bf16, per tensor)."""
    if many:
        out, scaling = "comma-separated of bf16, fp16, fp32 (default: all)", "(default: both)"
    else:
        out, scaling = "one of bf16, fp16, fp32 (default: bf16)", "(default: tensor)"
    parser.add_argument(
        "--out-dtype", default=None, help=f"fp8 dtypes: C's dtype, {out}; int8 writes int32"
    )
    parser.add_argument(
        "--scaling",
        default=None,
        help="fp8 dtypes: tensor (one scale per operand) or rowwise (one per row of A and "
        f"column of B) {scaling}",
    )


def batch_options(parser: argparse.ArgumentParser, many: bool) -> None:
    """``--batch`` and ``--batch-layout``, for batched problems (C[i] = A[i] @ B[i]):
    ``check`` takes several of each (default: batch 1, the plain matrix; every
    batch layout), ``compare`` and ``bench`` one (default: batch 1; packed)."""
    from gemmreg.contract.batching import MAX_BATCH

    sizes = "comma-separated batch sizes, 1 the plain cases" if many else "one batch size"
    parser.add_argument(
        "--batch",
        type=_batch_sizes(MAX_BATCH, many),
        default=None,
        help=f"{sizes}, each 1 to {MAX_BATCH} (default: 1, unbatched); above 1, the "
        "operands are 3-D: A (batch, M, K), B (batch, K, N), as torch.bmm takes them",
    )
    layouts = "comma-separated (default: both)" if many else "(default: packed)"
    parser.add_argument(
        "--batch-layout",
        dest="batch_layout",
        default=None,
        help="batched problems: packed (one contiguous 3-D tensor) or strided (a gap of NaN "
        f"between items: a batch stride above the item's size) {layouts}",
    )


def _batch_sizes(largest: int, many: bool) -> Callable[[str], tuple[int, ...]]:
    one = opt.integer("--batch", 1, largest)

    def parse(text: str) -> tuple[int, ...]:
        sizes = tuple(one(item) for item in text.split(","))
        if not many and len(sizes) != 1:
            raise argparse.ArgumentTypeError(f"takes one batch size, got {text!r}")
        if len(set(sizes)) != len(sizes):
            raise argparse.ArgumentTypeError(f"names a batch size twice: {text!r}")
        return sizes

    parse.__name__ = "--batch"
    return parse


def group_options(parser: argparse.ArgumentParser, many: bool) -> None:
    """Grouped problems (an MoE layer's grouped GEMM): ``check --grouped`` adds
    the matrix's grouped cases; ``compare`` and ``bench`` take ``--groups``,
    the members' sizes, beside ``--shape NxK``."""
    if many:
        parser.add_argument(
            "--grouped",
            action="store_true",
            help="also the grouped cases (an MoE layer's experts: members of m_i rows "
            "sharing n and k, with empty, one-row and uneven members)",
        )
        return
    parser.add_argument(
        "--groups",
        type=_group_sizes,
        default=None,
        help="a grouped GEMM, as an MoE layer's experts run it: comma-separated member "
        "sizes (each member's m, 0 for an empty one), every member sharing the n and k "
        "--shape gives as NxK; A is the members' rows stacked, B one KxN per member",
    )


def _group_sizes(text: str) -> tuple[int, ...]:
    from gemmreg.contract.grouping import parse_sizes

    try:
        return parse_sizes(text, "--groups")
    except opt.UsageError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--groups: ")) from None
