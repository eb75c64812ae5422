"""fp8 and int8 problems on the CPU: the records, their saved form, the
generators, the tolerance with C's rounding, the matrix, the references'
refusals, and the cheating kernels caught (in process, and through
``gemmreg check``)."""

from __future__ import annotations

import math
import subprocess
import sys

import gemmreg
import pytest
import torch
from conftest import REPO
from gemmreg.checking import matrix
from gemmreg.checking.output_check import check_case, compare
from gemmreg.contract.inputs import core_inputs
from gemmreg.contract.low_precision import FACTS
from gemmreg.contract.serialization import from_jsonable, to_jsonable
from gemmreg.contract.tolerance_bounds import Tolerance
from gemmreg.contract.tolerance_table import standard_tolerances
from gemmreg_plugins import torch_lowp

CPU = torch.device("cpu")


def fp8(**fields) -> gemmreg.Problem:
    return gemmreg.Problem(m=48, n=80, k=32, dtype="fp8e4m3", **fields)


def test_each_low_precision_dtype_gets_its_output_and_scaling_by_default():
    assert (fp8().out_dtype, fp8().scaling) == ("bf16", "tensor")
    int8 = gemmreg.Problem(m=1, n=1, k=1, dtype="int8")
    assert (int8.out_dtype, int8.scaling) == ("int32", "none")
    assert (
        fp8(out_dtype="fp32", scaling="rowwise").label == "fp8e4m3-fp32-rowwise-rowmajor-48x80x32"
    )
    assert int8.label == "int8-rowmajor-1x1x1"


@pytest.mark.parametrize(
    "fields",
    [
        {"dtype": "fp8e5m2", "scaling": "none"},
        {"dtype": "fp8e5m2", "out_dtype": "int32"},
        {"dtype": "fp8e4m3", "scaling": "columnwise"},
    ],
)
def test_an_fp8_combination_it_does_not_allow_is_refused(fields):
    with pytest.raises(gemmreg.SpecError):
        gemmreg.Problem(m=2, n=2, k=2, **fields)


def test_where_the_dtype_fixes_them_the_output_and_scaling_follow_it():
    """So attrs.evolve(problem, dtype=...) makes the problem it always made."""
    import attrs

    fp32 = gemmreg.Problem(m=2, n=3, k=4)
    assert attrs.evolve(fp32, dtype="fp16") == gemmreg.Problem(m=2, n=3, k=4, dtype="fp16")
    int8 = attrs.evolve(fp8(out_dtype="fp32", scaling="rowwise"), dtype="int8")
    assert (int8.out_dtype, int8.scaling) == ("int32", "none")
    with pytest.raises(gemmreg.SpecError, match="scaled tensor or rowwise, not 'none'"):
        attrs.evolve(fp32, dtype="fp8e4m3")


def test_a_16_bit_problem_is_saved_as_before_and_an_fp8_one_whole():
    old = gemmreg.Problem(m=2, n=3, k=4, dtype="bf16", layout="padded")
    assert to_jsonable(old) == {"m": 2, "n": 3, "k": 4, "dtype": "bf16", "layout": "padded"}
    assert from_jsonable(gemmreg.Problem, to_jsonable(old)) == old
    new = fp8(out_dtype="fp16", scaling="rowwise")
    assert to_jsonable(new)["out_dtype"] == "fp16" and to_jsonable(new)["scaling"] == "rowwise"
    assert from_jsonable(gemmreg.Problem, to_jsonable(new)) == new


def test_capabilities_declare_outputs_and_scalings():
    caps = torch_lowp.FP8_CAPABILITIES
    assert caps.out_dtypes == {"bf16", "fp16", "fp32"} and caps.scalings == {"tensor", "rowwise"}
    narrow = gemmreg.Capabilities(precision=torch_lowp.FP8_PRECISION)
    assert narrow.unsupported(fp8()) is None
    assert "output dtype fp32 not declared" in narrow.unsupported(fp8(out_dtype="fp32"))
    assert "scaling rowwise not declared" in narrow.unsupported(fp8(scaling="rowwise"))
    with pytest.raises(gemmreg.SpecError, match="out_dtypes"):
        gemmreg.Capabilities(precision=torch_lowp.FP8_PRECISION, out_dtypes={"int32"})


def test_tolerances_follow_the_declared_math():
    assert standard_tolerances(torch_lowp.INT8_PRECISION)["int8"].rtol == 0.0
    assert standard_tolerances(torch_lowp.FP8_PRECISION)["fp8e4m3"].rtol == 3e-3
    with pytest.raises(gemmreg.SpecError, match="no standard for fp8e4m3 with fp8_fast_accum"):
        standard_tolerances({"fp8e4m3": gemmreg.Precision(math="fp8_fast_accum")})
    with pytest.raises(gemmreg.SpecError, match="int8: rtol 1e-06 is loose"):
        gemmreg.KernelSpec(
            name="loose_int8",
            summary="x",
            prepare=lambda problem: None,
            capabilities=torch_lowp.INT8_CAPABILITIES,
            tolerances={"int8": Tolerance(rtol=1e-6)},
        )


@pytest.mark.parametrize("dtype", ["fp8e4m3", "fp8e5m2"])
def test_mixed_fp8_values_reach_the_largest_value_and_the_subnormals(dtype):
    facts = FACTS[dtype]
    problem = gemmreg.Problem(m=48, n=80, k=32, dtype=dtype, scaling="rowwise")
    a, b, scale_a, scale_b = core_inputs(problem, 3, CPU, "mixed")
    for x in (a.float(), b.float()):
        assert float(x.max()) == facts.largest and float(x.min()) == -facts.largest
        smallest_normal = 2.0**facts.smallest_normal_exponent
        assert bool(((x != 0) & (x.abs() < smallest_normal)).any())  # subnormals
    for scales in (scale_a, scale_b):
        assert scales.dtype == torch.float32
        assert not bool((torch.log2(scales) == torch.log2(scales).round()).any())
        assert float(scales.max() / scales.min()) > 2  # rows scaled apart
    again = core_inputs(problem, 3, CPU, "mixed")
    assert all(
        torch.equal(
            x.view(torch.uint8) if x.element_size() == 1 else x,
            y.view(torch.uint8) if y.element_size() == 1 else y,
        )
        for x, y in zip(again, (a, b, scale_a, scale_b), strict=True)
    )


def test_int8_values_use_the_whole_range():
    a = core_inputs(gemmreg.Problem(m=64, n=64, k=64, dtype="int8"), 1, CPU, "normal")[0]
    assert a.dtype == torch.int8 and int(a.min()) == -128 and int(a.max()) == 127


def test_a_second_kernel_s_draw_is_the_first_one_s_values_in_tensors_of_its_own(monkeypatch):
    """Every kernel of a timing process draws the same seed: the CPU draw is
    made once and each caller gets its own copy, so a kernel that writes
    into its inputs changes nothing another kernel is handed."""
    from gemmreg.contract import low_precision_inputs as lowp

    drawn: list[tuple[int, int]] = []
    values = lowp._values
    monkeypatch.setattr(lowp, "_values", lambda *a, **kw: drawn.append(a[1]) or values(*a, **kw))
    lowp._draw.cache_clear()
    problem = fp8(scaling="rowwise")
    first = core_inputs(problem, 5, CPU, "normal")
    second = core_inputs(problem, 5, CPU, "normal")
    assert drawn == [(problem.m, problem.k), (problem.k, problem.n)]
    for x, y in zip(first, second, strict=True):
        assert x.untyped_storage().data_ptr() != y.untyped_storage().data_ptr()
        assert torch.equal(x.float(), y.float())
    first[0].zero_()
    first[2].fill_(1.0)
    third = core_inputs(problem, 5, CPU, "normal")
    assert all(torch.equal(x.float(), y.float()) for x, y in zip(second, third, strict=True))
    core_inputs(problem, 6, CPU, "normal")  # another seed: drawn again
    assert len(drawn) == 4


def test_c_rounded_to_its_dtype_passes_and_a_dropped_scale_fails():
    problem = fp8(scaling="rowwise")
    a, b, scale_a, scale_b = core_inputs(problem, 1, CPU, "normal")
    exact = (a.double() * scale_a.double()) @ (b.double() * scale_b.double())
    tolerance = standard_tolerances(torch_lowp.FP8_PRECISION)["fp8e4m3"]
    bf16 = FACTS["bf16"]
    assert compare(
        a, b, exact.bfloat16(), tolerance, scales=(scale_a, scale_b), rounding=bf16
    ).passed
    unscaled = (a.double() @ b.double()).bfloat16()
    assert not compare(a, b, unscaled, tolerance, scales=(scale_a, scale_b), rounding=bf16).passed


def test_int8_is_held_to_exactness():
    a, b = core_inputs(gemmreg.Problem(m=32, n=32, k=64, dtype="int8"), 1, CPU, "normal")
    exact = (a.double() @ b.double()).int()
    zero = Tolerance(rtol=0.0)
    assert compare(a, b, exact, zero, rounding=FACTS["int32"]).passed
    off = exact.clone()
    off[3, 4] += 1
    result = compare(a, b, off, zero, rounding=FACTS["int32"])
    assert not result.passed and result.bad_count == 1
    assert result.tolerance_used == math.inf  # past a bound of zero, not "1e302x"


def test_the_matrix_has_low_precision_cases_only_when_they_are_named():
    default = matrix.build("quick", False)
    assert {c.problem.dtype for c in default} == set(gemmreg.DTYPES)
    named = matrix.build(
        "quick", False, ("fp16", "fp8e4m3"), outputs=("fp32",), scalings=("rowwise",)
    )
    low = [c for c in named if c.problem.dtype == "fp8e4m3"]
    assert len(named) - len(low) == len(matrix.build("quick", False, ("fp16",)))
    assert {(c.problem.out_dtype, c.problem.scaling) for c in low} == {("fp32", "rowwise")}
    assert {c.values for c in low} == {"normal", "uniform", "mixed", "smallint", "nan"}
    int8 = matrix.build("quick", False, ("int8",))
    assert "nan" not in {c.values for c in int8}
    assert "nan" not in {c.values for c in default}
    assert low[0].id("k") == "k-fp8e4m3-fp32-rowwise-rowmajor-64x64x64"


def test_the_references_refuse_what_cublaslt_does_not_take(monkeypatch):
    import attrs

    cuda = attrs.evolve(gemmreg.where(), backend="cuda", capability=(8, 6))
    monkeypatch.setattr(gemmreg, "where", lambda: cuda)
    assert "sm86" in torch_lowp.fp8_unavailable()
    reasons = [
        torch_lowp.FP8_CAPABILITIES.unsupported(fp8(layout="rowmajor")),
        torch_lowp.FP8_CAPABILITIES.unsupported(
            gemmreg.Problem(m=64, n=64, k=64, dtype="fp8e5m2", layout="transposedB")
        ),
        torch_lowp.FP8_CAPABILITIES.unsupported(
            gemmreg.Problem(m=64, n=65, k=64, dtype="fp8e4m3", layout="transposedB")
        ),
        torch_lowp.INT8_CAPABILITIES.unsupported(
            gemmreg.Problem(m=16, n=64, k=64, dtype="int8", layout="transposedB")
        ),
        torch_lowp.INT8_CAPABILITIES.unsupported(gemmreg.Problem(m=64, n=64, k=64, dtype="int8")),
        torch_lowp.INT8_CAPABILITIES.unsupported(
            gemmreg.Problem(m=17, n=64, k=60, dtype="int8", layout="transposedB")
        ),
    ]
    assert all(reasons), reasons
    assert (
        torch_lowp.FP8_CAPABILITIES.unsupported(
            gemmreg.Problem(m=65, n=64, k=64, dtype="fp8e4m3", layout="transposedB")
        )
        is None
    )


def test_triton_interpreter_refuses_fp8():
    from gemmreg.contract import backend, known_limits

    if not backend.current().triton_interpreter:
        pytest.skip("Triton runs compiled here")
    assert known_limits.triton_unsupported(fp8()) == known_limits.TRITON_INTERPRETER_FP8
    assert known_limits.triton_unsupported(gemmreg.Problem(m=1, n=1, k=1, dtype="int8")) is None


def test_cheating_kernels_fail_in_process_and_the_reference_passes():
    sys.path.insert(0, str(REPO / "tests"))
    from fake_plugins.low_precision_cheats import SPECS

    no_scales, row_as_column, int8_via_bf16, _ = SPECS
    rowwise = fp8(out_dtype="fp32", scaling="rowwise", layout="transposedB")
    tensor = fp8(out_dtype="fp32", scaling="tensor", layout="transposedB")
    int8 = gemmreg.Problem(m=48, n=80, k=32, dtype="int8")
    assert not check_case(no_scales, tensor, 1, "normal").passed
    assert check_case(row_as_column, tensor, 1, "normal").passed  # one scale: nothing to swap
    assert not check_case(row_as_column, rowwise, 1, "normal").passed
    assert not check_case(int8_via_bf16, int8, 1, "normal").passed
    assert check_case(torch_lowp.TORCH_REF_INT8, int8, 1, "mixed").passed
    assert check_case(torch_lowp.TORCH_REF_FP8, tensor, 1, "mixed").passed
    refused = rowwise_refusal()
    if refused is None:
        assert check_case(torch_lowp.TORCH_REF_FP8, rowwise, 1, "mixed").passed
    else:  # torch 2.8's CPU _scaled_mm: per-tensor scales only, and the reference says so
        assert "rowwise scales" in refused and torch.__version__ in refused


def test_a_kernel_reading_nan_as_a_number_fails_the_nan_cases_alone():
    """NaN in one row of A and one column of B must reach C's row and column:
    a kernel making e4m3's NaN a number is right on every other value kind,
    and its failure says what it did; the reference keeps the NaN and passes."""
    sys.path.insert(0, str(REPO / "tests"))
    from fake_plugins.low_precision_cheats import SPECS

    nan_as_number = SPECS[3]
    problem = fp8(out_dtype="bf16", scaling="tensor", layout="transposedB")
    for values in ("normal", "uniform", "mixed", "smallint"):
        assert check_case(nan_as_number, problem, 1, values).passed, values
    failed = check_case(nan_as_number, problem, 1, "nan")
    assert not failed.passed
    assert failed.comparison.bad_count == problem.m + problem.n - 1, failed.reason
    assert "the kernel read NaN as a number" in failed.reason
    assert check_case(torch_lowp.TORCH_REF_FP8, problem, 1, "nan").passed


def test_nan_where_the_reference_is_nan_must_be_computed_not_left_unwritten():
    from gemmreg.checking.guarded_output import fill_sentinel

    problem = fp8(scaling="tensor")
    a, b, scale_a, scale_b = core_inputs(problem, 1, CPU, "nan")
    exact = (a.double() * scale_a.double()) @ (b.double() * scale_b.double())
    assert exact[problem.m // 2].isnan().all() and exact[:, -1].isnan().all()
    tolerance = Tolerance(rtol=3e-3)
    bf16 = FACTS["bf16"]
    assert compare(
        a, b, exact.bfloat16(), tolerance, scales=(scale_a, scale_b), rounding=bf16
    ).passed
    unwritten = exact.bfloat16()
    fill_sentinel(unwritten[problem.m // 2])
    result = compare(a, b, unwritten, tolerance, scales=(scale_a, scale_b), rounding=bf16)
    assert not result.passed and result.bad_count == problem.n, result.reason
    assert f"({problem.n} never written: still the sentinel NaN)" in result.reason


def test_int8_has_no_nan_values():
    with pytest.raises(ValueError, match="int8 has no NaN"):
        core_inputs(gemmreg.Problem(m=32, n=32, k=64, dtype="int8"), 1, CPU, "nan")


def rowwise_refusal() -> str | None:
    """Why torch_ref_fp8 refuses rowwise scales here (None: it takes them)."""
    return torch_lowp.FP8_CAPABILITIES.constraint(fp8(scaling="rowwise", layout="transposedB"))


@pytest.mark.slow
def test_gemmreg_check_fails_the_cheats(fake_plugins, tmp_path):
    fake_plugins("low_precision_cheats")
    argv = [
        sys.executable,
        "-m",
        "gemmreg",
        "check",
        "fake_fp8_no_scales",
        "fake_fp8_row_as_column",
        "torch_ref_fp8",
        "--dtype",
        "fp8e4m3",
        "--out-dtype",
        "fp32",
        "--scaling",
        "rowwise",
        "--layout",
        "transposedB",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if "fp8e4m3" in line]
    if rowwise_refusal() is None:
        assert any(line.startswith("torch_ref_fp8") and " pass " in line for line in rows), rows
    else:  # the reference refuses what this torch cannot run, and fails nothing
        assert not any(line.startswith("torch_ref_fp8") and "FAIL" in line for line in rows), rows
    for cheat in ("fake_fp8_no_scales", "fake_fp8_row_as_column"):
        assert any(line.startswith(cheat) and "FAIL" in line for line in rows), rows
        assert not any(line.startswith(cheat) and " pass " in line for line in rows), rows


def test_timing_takes_one_output_dtype_and_one_scaling(cli_offline):
    done = cli_offline(
        "bench", "torch_ref_fp8", "--shape", "64", "--dtype", "fp8e4m3", "--out-dtype", "fp32,bf16"
    )
    assert done.code == 2 and "--out-dtype 'fp32,bf16': compare and bench take one" in done.err


def test_a_shapes_file_names_an_fp8_rows_output_and_scaling(tmp_path):
    from gemmreg.contract.options import UsageError
    from gemmreg.timing import points, shape_files

    good = tmp_path / "good.csv"
    good.write_text("m,n,k,dtype,out_dtype,scaling\n64,64,64,fp8e5m2,fp16,rowwise\n32,32,32,,,\n")
    rows = shape_files.read_shapes(good)
    chosen = points.points([], rows, ["fp8e4m3"], ["transposedB"], "fp32")
    assert [p.problem.number_format for p in chosen] == [
        "fp8e5m2-fp16-rowwise",
        "fp8e4m3-fp32-tensor",
    ]
    bad = tmp_path / "bad.csv"
    bad.write_text("m,n,k,dtype,out_dtype\n64,64,64,fp16,fp32\n")
    with pytest.raises(UsageError, match="row 1: out_dtype is for fp8 dtypes, not 'fp16'"):
        shape_files.read_shapes(bad)


def test_fresh_values_move_rowwise_scales_with_their_rows_and_columns():
    from gemmreg.timing import fresh_values

    problem = gemmreg.Problem(m=5, n=7, k=3, dtype="fp8e4m3", scaling="rowwise")
    operands = core_inputs(problem, 1, CPU, "normal")
    before = tuple(x.clone() for x in operands)
    shifts = fresh_values.Shifts(rows=2, columns=3)
    fresh_values.move(operands, shifts)
    expected = fresh_values.rotated(before, shifts)

    def product(a, b, scale_a, scale_b):
        return (a.double() * scale_a.double()) @ (b.double() * scale_b.double())

    assert torch.equal(product(*operands), product(*expected))
    moved_c = torch.roll(product(*before), shifts=(2, 3), dims=(0, 1))
    assert torch.allclose(product(*operands), moved_c, rtol=0, atol=0)
    assert not torch.equal(operands[2], before[2])  # the row scales moved


def test_check_refuses_an_unknown_output_dtype(cli_offline):
    done = cli_offline("check", "--dtype", "fp8e4m3", "--out-dtype", "int32")
    assert done.code == 2 and "unknown output dtype 'int32'" in done.err


@pytest.mark.slow
def test_timing_prechecks_fp8_with_its_scales(fake_plugins, tmp_path):
    """compare's precheck holds an fp8 kernel to its scales as check does;
    where torch's CPU _scaled_mm takes no rowwise scales (torch 2.8), the
    reference is refused instead, in one line naming why, before any work."""
    fake_plugins("low_precision_cheats")
    argv = [
        *(sys.executable, "-m", "gemmreg", "compare", "fake_fp8_row_as_column", "torch_ref_fp8"),
        *("--shape", "48x80x32", "--dtype", "fp8e4m3", "--scaling", "rowwise"),
        *("--processes", "2", "--max-time", "0.1"),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    refused = rowwise_refusal()
    if refused is not None:
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert f"torch_ref_fp8: {refused}" in done.stderr, done.stderr
        return
    assert "fake_fp8_row_as_column: failed: cold start: precheck:" in done.stderr, done.stderr
    assert "fp8e4m3-bf16-rowwise" in done.stdout + done.stderr


def test_the_h200_check_caught_the_cheats_and_the_int8_layouts():
    """The GPU run behind torch_lowp's rules: the references pass everywhere
    they ran, the cheats fail, and int8 through cuBLASLt failed only outside
    A row-major with B column-major (what torch_ref_int8 now declares)."""
    from gemmreg.reporting.check_files import load_check

    folder = REPO / "evidence" / "2026-12-04-h200-lowp-rules"
    results, _ = load_check(folder / "check-quick" / "check.json.gz")
    by = {}
    for r in results:
        if r.kind == "values" and r.status != "skip":
            by.setdefault(r.kernel, []).append(r)
    assert all(r.status == "pass" for r in by["torch_ref_fp8"])
    assert by["fake_fp8_no_scales"] and all(r.status == "fail" for r in by["fake_fp8_no_scales"])
    row_as_column = by["fake_fp8_row_as_column"]
    assert all((r.status == "fail") == (r.problem.scaling == "rowwise") for r in row_as_column)
    int8 = by["torch_ref_int8"]
    assert {r.problem.layout for r in int8 if r.status == "error"} == {
        "rowmajor",
        "transposedA",
        "padded",
    }
    assert all(r.status == "pass" for r in int8 if r.problem.layout == "transposedB")


def test_the_python_api_takes_the_low_precision_choices(monkeypatch):
    """check, compare and bench hand their fp8 choices to the same requests
    as the command line (the work itself is stubbed: what is asked is the point)."""
    from gemmreg import api
    from gemmreg.commands import launching

    monkeypatch.setattr(launching, "answered", lambda work, save, request, progress: request)
    asked = [
        api.check(["torch_ref_fp8"], dtypes="fp8e4m3", out_dtypes=["fp32"], scalings="rowwise"),
        api.compare(["a", "b"], "64x64x64", dtype="fp8e5m2", out_dtype="fp16", scaling="rowwise"),
        api.bench(["a"], "64", dtypes="int8,fp8e4m3", out_dtype="fp32"),
        api.check(),
    ]
    check, compare_request, bench_request, default = asked
    assert (check.dtypes, check.out_dtypes, check.scalings) == (
        ("fp8e4m3",),
        ("fp32",),
        ("rowwise",),
    )
    (compared,) = compare_request.problems(gpu=False)
    assert compared.number_format == "fp8e5m2-fp16-rowwise"
    formats = [p.problem.number_format for p in bench_request.points]
    assert formats == ["int8", "fp8e4m3-fp32-tensor"]
    assert default.dtypes == gemmreg.DTYPES and default.out_dtypes == ()
    with pytest.raises(gemmreg.UsageError):
        api.compare(["a", "b"], "64x64x64", dtype="fp8e4m3", out_dtype="int32")
