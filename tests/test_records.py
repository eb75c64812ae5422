"""Records are validated when built, and errors name the kernel and the field."""

from __future__ import annotations

import math

import gemmreg
import pytest
from gemmreg import Capabilities, KernelSpec, Precision, Problem, SpecError, Tolerance

IEEE = Precision(math="ieee_fp32")


def caps(**overrides):
    fields = {"dtypes": {"fp32"}, "backends": {"cpu"}, "precision": {"fp32": IEEE}}
    fields.update(overrides)
    return Capabilities(**fields)


def spec(**overrides):
    fields = {
        "name": "k",
        "summary": "a kernel",
        "prepare": lambda problem: None,
        "capabilities": caps(),
        "tolerances": {"fp32": Tolerance(rtol=1e-5)},
    }
    fields.update(overrides)
    return KernelSpec(**fields)


def test_a_valid_spec_builds_and_keeps_its_fields():
    built = spec()
    assert built.name == "k"
    assert built.capabilities.dtypes == frozenset({"fp32"})
    assert built.tolerance_for("fp32").rtol == 1e-5


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        ({"name": "Bad Name"}, "name", "must match"),
        ({"summary": ""}, "summary", "non-empty"),
        ({"prepare": "not callable"}, "prepare", "callable"),
        ({"tolerances": {}}, "tolerances", "no tolerance for declared dtypes ['fp32']"),
        ({"tolerances": {"fp32": Tolerance(rtol=1e-2)}}, "tolerances", "say why"),
        (
            {"tolerances": {"fp32": Tolerance(rtol=3e-5, atol=1e30)}},
            "tolerances",
            "atol 1e+30 is loose (> 1e-05); say why",
        ),
        ({"tolerances": {"fp32": 1e-5}}, "tolerances", "must be a Tolerance"),
        ({"capabilities": "fast"}, "capabilities", "must be a Capabilities"),
    ],
)
def test_a_bad_spec_names_the_kernel_and_the_field(overrides, field, words):
    with pytest.raises(SpecError) as caught:
        spec(**overrides)
    message = str(caught.value)
    assert f"field '{field}'" in message
    assert words in message
    if field != "name":
        assert "KernelSpec 'k'" in message


@pytest.mark.parametrize("field", ["rtol", "atol"])
@pytest.mark.parametrize("bad", [math.inf, math.nan, -1.0])
def test_a_tolerance_bound_must_be_finite_and_non_negative_even_with_a_reason(field, bad):
    with pytest.raises(SpecError, match=f"field '{field}': must be a finite, non-negative"):
        Tolerance(**{"rtol": 1e-5, field: bad}, why="says why")


def test_a_loose_atol_with_a_reason_is_accepted_and_the_standard_ones_need_none():
    from gemmreg.contract.tolerance_bounds import LOOSE_ATOL
    from gemmreg.contract.tolerance_table import STANDARD_TOLERANCES

    loose = Tolerance(rtol=3e-5, atol=1e-3, why="values near zero in this kernel's epilogue")
    assert spec(tolerances={"fp32": loose}).tolerances["fp32"].atol == 1e-3
    assert set(LOOSE_ATOL) == set(gemmreg.ALL_DTYPES)
    for (dtype, _math), standard in STANDARD_TOLERANCES.items():
        assert standard.atol <= LOOSE_ATOL[dtype]


def test_a_loose_tolerance_with_a_reason_is_accepted():
    loose = Tolerance(rtol=1e-2, why="TF32 inputs")
    assert spec(tolerances={"fp32": loose}).tolerances["fp32"].why == "TF32 inputs"


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        ({"dtypes": {"fp8"}}, "dtypes", "unknown ['fp8']"),
        ({"dtypes": set()}, "dtypes", "at least one"),
        ({"backends": {"tpu"}}, "backends", "unknown ['tpu']"),
        ({"precision": {}}, "precision", "no precision stated for declared dtypes ['fp32']"),
        ({"precision": {"fp32": "fast"}}, "precision", "gemmreg.Precision"),
        ({"layouts": {"diagonal"}}, "layouts", "unknown ['diagonal']"),
        ({"max_dim": 0}, "max_dim", "positive integer"),
    ],
)
def test_bad_capabilities_name_the_field(overrides, field, words):
    with pytest.raises(
        SpecError, match=f"field '{field}'.*{words.replace('[', '.').replace(']', '.')}"
    ):
        caps(**overrides)


def test_precision_math_must_be_a_known_class():
    with pytest.raises(SpecError, match="field 'math'"):
        Precision(math="approximately fp32")


@pytest.mark.parametrize("bad", [0, -3, 1.5, True])
def test_problem_dimensions_must_be_positive_integers(bad):
    with pytest.raises(SpecError, match="field 'm'"):
        Problem(m=bad, n=4, k=4)


def test_problem_reports_shape_and_work():
    problem = Problem(m=2, n=3, k=5, dtype="fp16", layout="transposedB")
    assert problem.shape == "2x3x5"
    assert problem.flops == 60
    assert problem.label == "fp16-transposedB-2x3x5"


def test_capabilities_explain_what_is_unsupported():
    c = caps(max_dim=100, constraint=lambda p: "K must be even" if p.k % 2 else None)
    assert c.unsupported(Problem(m=4, n=4, k=4)) is None
    assert "dtype fp16 not declared" in c.unsupported(Problem(m=4, n=4, k=4, dtype="fp16"))
    assert "layout padded" in c.unsupported(Problem(m=4, n=4, k=4, layout="padded"))
    assert "max_dim 100" in c.unsupported(Problem(m=101, n=4, k=4))
    assert c.unsupported(Problem(m=4, n=4, k=5)) == "K must be even"


def test_the_package_exports_the_plugin_authors_contract():
    for name in ("hookimpl", "KernelSpec", "Capabilities", "Tolerance", "Precision", "Problem"):
        assert hasattr(gemmreg, name)


def test_every_dtype_has_a_loose_bound_so_only_unknown_dtypes_are_refused_as_such():
    """``tolerance_bounds`` knows the dtypes through its bounds (it cannot
    import records): a dtype added to records without a bound would be refused."""
    from gemmreg.contract.tolerance_bounds import LOOSE_RTOL

    assert set(LOOSE_RTOL) == set(gemmreg.ALL_DTYPES)
    with pytest.raises(SpecError, match="unknown dtype 'fp8'"):
        spec(tolerances={"fp32": Tolerance(rtol=1e-5), "fp8": Tolerance(rtol=1e-5)})
