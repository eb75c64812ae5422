"""The memory traffic a GEMM needs at the least, and the bandwidth that is at
a given time: one definition for the tables' ideal GB/s, the roofline's
arithmetic intensity and the operands' footprint on the device.

The ideal traffic reads A and B once in the problem's dtype and writes C
once in its output dtype (the same for fp32, fp16 and bf16; fp8's and int8's
own: :data:`gemmreg.contract.records.ELEMENT_BYTES`).
A real kernel moves more (tiles of A and B read again from DRAM, split-K's
partial sums), and nothing here measures what it moved: the GB/s it gives
is the rate the call needed, never measured DRAM traffic. It sits in the
contract because the timing room (the summaries) and the reporting room
(the roofline) both divide by it.
"""

from __future__ import annotations

from gemmreg.contract.records import ELEMENT_BYTES, Problem


def operand_bytes(m: int, n: int, k: int, dtype: str, out_dtype: str | None = None) -> int:
    """Bytes of A (m x k) and B (k x n) in ``dtype``, and C (m x n) in
    ``out_dtype`` (None: ``dtype`` too)."""
    return (m * k + k * n) * ELEMENT_BYTES[dtype] + m * n * ELEMENT_BYTES[out_dtype or dtype]


def b_reads(problem: Problem) -> int:
    """How many B matrices a call must read: one per batch item, or one per
    grouped member that has rows (an empty member's B is never needed, and a
    kernel that skips it rightly moves less)."""
    if problem.groups:
        return sum(1 for rows in problem.groups if rows)
    return problem.batch


def ideal_bytes(problem: Problem) -> int:
    """The least traffic a call of ``problem`` needs: its operands, once each
    (every item's, for a batched problem; a grouped one's A and C stacked, and
    the B of each member with rows: :func:`b_reads`)."""
    a_and_c = operand_bytes(problem.m, problem.n, problem.k, problem.dtype, problem.out_dtype)
    one_b = problem.k * problem.n * ELEMENT_BYTES[problem.dtype]
    return problem.batch * (a_and_c - one_b) + b_reads(problem) * one_b


def footprint_bytes(problem: Problem) -> int:
    """The operands' bytes on the device: :func:`ideal_bytes` with every
    member's B, an empty member's included (the core allocates them all)."""
    empty = len(problem.groups) - b_reads(problem) if problem.groups else 0
    return ideal_bytes(problem) + empty * problem.k * problem.n * ELEMENT_BYTES[problem.dtype]


def ideal_gbps(problem: Problem, ms: float | None) -> float | None:
    """:func:`ideal_bytes` over ``ms``, in GB/s (10^9 bytes a second, as
    datasheets give bandwidth); None without a positive time."""
    if ms is None or not ms > 0:
        return None
    return ideal_bytes(problem) / (ms * 1e-3) / 1e9
