"""The memory traffic a GEMM needs at the least, and the bandwidth that is at
a given time: one definition for the tables' ideal GB/s, the roofline's
arithmetic intensity and the operands' footprint on the device.

The ideal traffic reads A and B once and writes C once, each in the
problem's dtype (the core makes C in it: :data:`gemmreg.contract.records.ELEMENT_BYTES`).
A real kernel moves more (tiles of A and B read again from DRAM, split-K's
partial sums), and nothing here measures what it moved: the GB/s it gives
is the rate the call needed, never measured DRAM traffic. It sits in the
contract because the timing room (the summaries) and the reporting room
(the roofline) both divide by it.
"""

from __future__ import annotations

from gemmreg.contract.records import ELEMENT_BYTES, Problem


def operand_bytes(m: int, n: int, k: int, dtype: str) -> int:
    """Bytes of A (m x k), B (k x n) and C (m x n) in ``dtype``."""
    return (m * k + k * n + m * n) * ELEMENT_BYTES[dtype]


def ideal_bytes(problem: Problem) -> int:
    """The least traffic a call of ``problem`` needs: its operands, once each."""
    return operand_bytes(problem.m, problem.n, problem.k, problem.dtype)


def ideal_gbps(problem: Problem, ms: float | None) -> float | None:
    """:func:`ideal_bytes` over ``ms``, in GB/s (10^9 bytes a second, as
    datasheets give bandwidth); None without a positive time."""
    if ms is None or not ms > 0:
        return None
    return ideal_bytes(problem) / (ms * 1e-3) / 1e9
