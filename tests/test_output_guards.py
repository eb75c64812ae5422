"""What a kernel may not do to the tensors it is handed, caught in the check
and in the timing's precheck alike: re-point C at a result of its own, write
into the padding around A's rows (before their starts or past their ends),
or change an input's bits in a way that compares equal after ``nan_to_num``."""

from __future__ import annotations

import pytest
import torch
from fake_plugins import fp32_spec
from gemmreg.checking import output_check
from gemmreg.contract.inputs import PAD
from gemmreg.contract.records import Problem
from gemmreg.timing import timed_kernel

ROWMAJOR = Problem(m=17, n=19, k=23)
PADDED = Problem(m=17, n=19, k=23, layout="padded")


def honest(a, b, out):
    torch.mm(a, b, out=out)


def sets_c(a, b, out):
    out.set_(torch.mm(a, b))


def assigns_c_data(a, b, out):
    out.data = torch.mm(a, b)


def fill_a_padding(a):
    """7 in the padding past the end of each of A's rows (the last's included)."""
    m, k = a.shape
    torch.as_strided(a, (m, PAD), a.stride(), a.storage_offset() + k).fill_(7.0)


def writes_a_padding(a, b, out):
    torch.mm(a, b, out=out)
    fill_a_padding(a)


def writes_before_a_s_rows(a, b, out):
    """7 in the element before each of A's rows (the view starts inside its buffer)."""
    torch.mm(a, b, out=out)
    m, _ = a.shape
    torch.as_strided(a, (m, 1), a.stride(), a.storage_offset() - 1).fill_(7.0)


def nan_over_a_zero(a, b, out):
    torch.mm(a, b, out=out)
    a[0, 0] = float("nan")  # was 0 (with_zero): equal under nan_to_num


def with_zero(problem, seed, device):
    generator = torch.Generator().manual_seed(seed)
    a = torch.randn(problem.m, problem.k, generator=generator).to(device)
    b = torch.randn(problem.k, problem.n, generator=generator).to(device)
    a[0, 0] = 0.0
    return a, b


def check(launch, problem, **overrides):
    spec = fp32_spec("k", launch, **overrides)
    return output_check.check_case(spec, problem, seed=3)


@pytest.mark.parametrize("problem", [ROWMAJOR, PADDED], ids=["rowmajor", "padded"])
def test_an_honest_kernel_still_passes(problem):
    result = check(honest, problem, make_inputs=with_zero)
    assert result.passed, result.reason


@pytest.mark.parametrize("launch", [sets_c, assigns_c_data])
def test_a_kernel_that_re_points_c_at_its_own_result_fails(launch):
    result = check(launch, ROWMAJOR)
    assert not result.passed
    assert result.reason.startswith("replaced C instead of writing it (storage")


@pytest.mark.parametrize("launch", [writes_a_padding, writes_before_a_s_rows])
def test_a_write_into_the_padding_beside_a_s_rows_fails(launch):
    result = check(launch, PADDED)
    assert not result.passed
    assert result.reason == "wrote into its inputs A or B"


def test_nan_written_over_an_input_zero_fails():
    result = check(nan_over_a_zero, ROWMAJOR, make_inputs=with_zero)
    assert not result.passed
    assert result.reason == "wrote into its inputs A or B"


def test_an_input_re_pointed_elsewhere_is_named():
    def re_points_a(a, b, out):
        torch.mm(a, b, out=out)
        a.set_(a.clone())

    result = check(re_points_a, ROWMAJOR)
    assert not result.passed
    assert result.reason == "replaced its input A's memory (storage changed)"


@pytest.mark.parametrize(
    ("launch", "problem", "reason"),
    [
        (sets_c, ROWMAJOR, "precheck: replaced C instead of writing it"),
        (writes_a_padding, PADDED, "precheck: wrote into its inputs A or B"),
    ],
)
def test_the_timing_precheck_holds_kernels_to_the_same_rules(launch, problem, reason):
    kernel = timed_kernel.TimedKernel(name="k", spec=fp32_spec("k", launch))
    assert not timed_kernel.prepare(kernel, problem, seed=3, device="cpu")
    assert kernel.result.reason.startswith(reason)


def writes_a_padding_after_its_first_a(a, b, out):
    """Honest on the A it was prechecked with; writes past the rows of any other."""
    torch.mm(a, b, out=out)
    seen = writes_a_padding_after_its_first_a.__dict__.setdefault("first", a.data_ptr())
    if a.data_ptr() != seen:
        fill_a_padding(a)


def test_a_further_placement_s_padding_is_watched_with_the_prechecked_copy():
    """Timing rotates copies of the operands; their padding used to go unwatched."""
    from gemmreg.timing.placements import more_placements

    writes_a_padding_after_its_first_a.__dict__.pop("first", None)
    spec = fp32_spec("k", writes_a_padding_after_its_first_a)
    kernel = timed_kernel.TimedKernel(name="k", spec=spec)
    assert timed_kernel.prepare(kernel, PADDED, seed=3, device="cpu")
    assert kernel.inputs is not None
    kernel.place(more_placements(kernel.inputs, PADDED, "cpu", 2))
    assert [w.copies is kernel.inputs.copies for w in kernel.watched] == [True, True, True]
    for index in range(3):
        kernel.use_placement(index)
        kernel.call()
    check = kernel.verify_every_placement(PADDED)
    assert check is not None and not check.passed
    assert check.reason.startswith("placement 2 of 3")
    assert "wrote into its inputs A or B" in check.reason


def test_a_generator_that_leaves_its_padding_unset_keeps_view_watching():
    """A further placement whose bytes differ from the prechecked one (padding
    never written by the plugin's generator) cannot share its copy."""
    from gemmreg.checking.guarded_inputs import InputStorages

    def unset_padding(problem, seed, device):
        a = torch.empty(problem.m, problem.k + 4).normal_(
            generator=torch.Generator().manual_seed(seed)
        )
        b = torch.randn(problem.k, problem.n, generator=torch.Generator().manual_seed(seed))
        return a[:, : problem.k], b

    taken = InputStorages.take(unset_padding(ROWMAJOR, 3, "cpu"))
    other = unset_padding(ROWMAJOR, 3, "cpu")
    storage = other[0].untyped_storage()
    storage[storage.nbytes() - 1] = 1  # the padding differs; the view holds the same values
    assert InputStorages.watch(other, like=taken).copies is None
    assert InputStorages.watch(unset_padding(ROWMAJOR, 3, "cpu"), like=taken).copies is taken.copies
