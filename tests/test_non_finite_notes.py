"""A failing output's NaN and Inf are reported as seen: a cause is named only
where the case shows it could be one (NaN computed from finite inputs that sat
beside NaN padding), never guessed for an output that is NaN everywhere."""

from __future__ import annotations

import types

import torch
from gemmreg.checking import output_check
from gemmreg.contract.records import Problem, Tolerance

TOLERANCE = Tolerance(rtol=1e-4)
SPEC = types.SimpleNamespace(name="k", make_inputs=None, tolerance_for=lambda dtype: TOLERANCE)
"""All that checking one output asks of a kernel's spec: inputs from the
default generator, and its tolerance."""
READ_OUTSIDE = "read before a row's start or past its end?"


def _operands(m=6, n=5, k=4):
    generator = torch.Generator().manual_seed(3)
    return torch.randn(m, k, generator=generator), torch.randn(k, n, generator=generator)


def _checked(layout, launch):
    problem = Problem(m=6, n=5, k=4, layout=layout)
    return output_check.run_and_compare(SPEC, launch, problem, seed=1, device="cpu")


def test_an_output_nan_everywhere_says_so_and_guesses_no_cause():
    def nan_everywhere(a, b, out):
        out.fill_(float("nan"))  # a computed NaN: not the sentinel's bit pattern

    result = _checked("rowmajor", nan_everywhere)
    assert not result.passed
    assert result.reason == (
        "30/30 elements outside tolerance (NaN computed by the kernel in every element)"
    )


def test_an_output_inf_everywhere_says_so():
    a, b = _operands()
    for value, said in ((float("inf"), "+Inf"), (float("-inf"), "-Inf")):
        out = torch.full((6, 5), value)
        result = output_check.compare(a, b, out, TOLERANCE)
        assert result.reason == f"30/30 elements outside tolerance (every element is {said})"
    out[0, 0] = float("inf")
    mixed = output_check.compare(a, b, out, TOLERANCE)
    assert mixed.reason.endswith("(every element is +Inf or -Inf)")


def test_a_kernel_that_reads_the_nan_padding_past_a_row_is_asked_about_it():
    """The padded layout's last row of A read one element too far: the
    padding's NaN reaches that row of C, and only the padding held NaN."""

    def reads_past_the_last_row(a, b, out):
        out.copy_(a @ b)
        (rows, columns), (row_stride, _) = a.shape, a.stride()
        after_last_row = a.storage_offset() + (rows - 1) * row_stride + columns
        out[-1] += 0 * torch.as_strided(a, (1,), (1,), after_last_row)

    result = _checked("padded", reads_past_the_last_row)
    assert result.reason == (
        "5/30 elements outside tolerance (NaN computed by the kernel in 5 elements; "
        f"A and B are finite, the padding around their rows is NaN: {READ_OUTSIDE})"
    )
    unpadded = _checked("rowmajor", lambda a, b, out: out.copy_(a @ b).__setitem__(-1, torch.nan))
    assert (
        unpadded.reason
        == "5/30 elements outside tolerance (NaN computed by the kernel in 5 elements)"
    )


def test_a_kernel_that_reads_the_nan_padding_before_a_row_is_asked_about_it():
    """The padded layout's views start inside their buffers, after poison:
    one element before A's first row reaches that row of C."""

    def reads_before_the_first_row(a, b, out):
        out.copy_(a @ b)
        out[0] += 0 * torch.as_strided(a, (1,), (1,), a.storage_offset() - 1)

    result = _checked("padded", reads_before_the_first_row)
    assert result.reason == (
        "5/30 elements outside tolerance (NaN computed by the kernel in 5 elements; "
        f"A and B are finite, the padding around their rows is NaN: {READ_OUTSIDE})"
    )


def test_no_read_past_is_suggested_where_the_inputs_held_nan_themselves():
    """A's NaN makes C's first row NaN, which agrees with the reference; the
    kernel's NaN in the last row is its own, and the padding is not blamed."""
    a, b = _operands()
    a[0, 0] = float("nan")
    out = a @ b
    assert output_check.compare(a, b, out, TOLERANCE, nan_padding=True).passed
    out[-1] = float("nan")
    result = output_check.compare(a, b, out, TOLERANCE, nan_padding=True)
    assert result.reason == (
        "5/30 elements outside tolerance "
        "(NaN computed by the kernel in 5 elements where the reference is finite)"
    )


def test_a_number_where_the_inputs_nan_belongs_says_the_nan_was_read_as_one():
    a, b = _operands()
    b[2, 3] = float("nan")
    out = (a @ b).nan_to_num()
    result = output_check.compare(a, b, out, TOLERANCE)
    assert result.reason == (
        "6/30 elements outside tolerance (6 elements are numbers where A's row or "
        "B's column holds NaN: the kernel read NaN as a number)"
    )
