"""Making a grouped problem from what a caller knows: the members' sizes and
the n and k they share (:mod:`gemmreg.contract.grouping` says what one is).
Apart from that module because it builds a :class:`Problem`, whose record
settles its groups through that module."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gemmreg.contract.declaration_checks import SpecError
from gemmreg.contract.grouping import shown_sizes, sizes
from gemmreg.contract.records import Problem


def grouped_problem(groups: Sequence[int], n: int, k: int, **fields: Any) -> Problem:
    """The grouped problem of these member sizes, n and k (``m``: their sum);
    members that hold no row at all are refused here, in words (the record
    alone would say only that m must be positive)."""
    groups = sizes(groups)
    if groups and all(isinstance(g, int) and g == 0 for g in groups):
        raise SpecError(f"Problem: every group is empty ({shown_sizes(groups)}): nothing to run")
    total = sum(g for g in groups if isinstance(g, int))
    return Problem(m=total, n=n, k=k, groups=groups, **fields)
