"""A check's error column in its tolerance's own terms: the error is in units
of |A|@|B| (what rtol bounds), the bound adds an absolute atol, and where the
absolute part carries it (K of 1, values near zero) an error far past rtol
passes. The share of the whole bound the worst element used says so."""

from __future__ import annotations

import pytest
import torch
from gemmreg.checking import output_check
from gemmreg.contract.records import Tolerance
from gemmreg.reporting.render import tolerance_note

TOL = Tolerance(rtol=0.002, atol=0.001)


def test_an_error_past_rtol_that_the_absolute_part_allows_passes_at_half_its_bound():
    a = torch.tensor([[1e-3]], dtype=torch.float32)
    b = torch.tensor([[1e-3]], dtype=torch.float32)
    out = torch.tensor([[1e-6 + 5e-4]], dtype=torch.float32)  # |A|@|B| is 1e-6: atol carries it
    found = output_check.compare(a, b, out, TOL)
    assert found.passed
    assert found.max_error > 100 * TOL.rtol  # "max err 500 (tol 0.002 + 0.001 abs)", passing
    assert found.tolerance_used == pytest.approx(0.5, rel=1e-3)
    assert tolerance_note(TOL, found.tolerance_used) == " (tol 0.002 + 0.001 abs: 50% used)"


def test_a_failing_element_uses_more_than_its_whole_bound():
    a = torch.ones(2, 4)
    b = torch.ones(4, 3)
    out = a @ b
    out[1, 2] += 0.1  # |A|@|B| = 4: bound 0.009
    found = output_check.compare(a, b, out, TOL)
    assert not found.passed and found.tolerance_used > 1
    assert tolerance_note(TOL, found.tolerance_used).endswith("x used)")  # 11.1x the bound


def test_checks_saved_before_the_share_render_as_they_did():
    assert tolerance_note(TOL) == " (tol 0.002 + 0.001 abs)"
