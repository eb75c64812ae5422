"""``report RUN --kernels``: the device kernels each plugin's profiled calls
launched, checked against the saved H200 runs' own profile records (fp16 at
Llama 3 8B's decode points: cuBLAS's split-K and its reduction kernel against
one Triton kernel), in every format, across joined parts, and refused in one
line where it cannot apply."""

from __future__ import annotations

import csv
import json
import re

import attrs
import pytest
from conftest import REPO
from gemmreg.reporting import render_kernels, runs
from offline_cli import forbid_work, run_main

FOLDER = REPO / "evidence" / "2026-12-04-h200-llm-fp16-fp8-tf32"
DECODE = FOLDER / "fp16-1-16" / "bench"
"""8 points, torch_ref and triton_tuned, each profiled in the device-kernel regime."""
PREFILL = FOLDER / "fp16-2048-8192" / "bench"
SPLIT_REDUCE = "void cublasLt::splitKreduce_kernel<32, 16, int, float, __half, float, __half, false"


def table_rows(text: str) -> dict[tuple[str, str], list[str]]:
    """The terminal table's rows by (shape, plugin), cells split on the
    two-space gaps tabulate leaves between columns."""
    rows = {}
    for line in text.splitlines()[2:]:
        cells = re.split(r"\s{2,}", line.strip())
        rows[(cells[0], cells[2])] = cells[3:]
    return rows


@pytest.mark.parametrize(
    ("name", "short"),
    [
        (
            "void cublasLt::splitKreduce_kernel<32, 16, int>(cublasLt::Params<float>, float*)",
            "cublasLt::splitKreduce_kernel",
        ),
        (
            "nvjet_sm90_hsh_128x8_64x12_4x1_v_bz_splitK_TNT",
            "nvjet_sm90_hsh_128x8_64x12_4x1_v_bz_splitK_TNT",
        ),
        ("gemm_split_k", "gemm_split_k"),
        ("void at::native::elementwise_kernel(int)", "at::native::elementwise_kernel"),
        ("  <lambda>  ", "<lambda>"),  # nothing before the template list: the name stays whole
    ],
)
def test_a_table_shows_a_name_without_its_type_template_and_parameters(name, short):
    assert render_kernels.short_name(name) == short


def test_every_cell_is_the_saved_profile_record():
    """Row by row, the table says what each summary's profile recorded: its
    kernels in launch order, launches per call and device time."""
    _, reports, _ = runs.load_run(DECODE)
    rows = table_rows(render_kernels.kernel_table(reports, "table"))
    assert len(rows) == 16
    for report in reports:
        for s in report.summaries:
            cells = rows[(report.problem.shape, s.kernel)]
            assert s.device_kernels, "every point of this run was profiled"
            names = " + ".join(render_kernels.short_name(n) for n in s.device_kernels)
            assert cells[0] == names
            assert float(cells[1]) == pytest.approx(s.launches_per_call, rel=1e-3)
            assert float(cells[2]) == pytest.approx(s.device_kernel_ms * 1e3, rel=1e-3)
    # cuBLAS splits K at 1x4096x4096 and reduces in a second kernel; the Triton one launches once
    assert rows[("1x4096x4096", "torch_ref")][0].endswith("+ cublasLt::splitKreduce_kernel")
    assert rows[("1x4096x4096", "torch_ref")][1] == "2"
    assert rows[("1x4096x4096", "triton_tuned")][:2] == ["gemv_split_k", "1"]


def test_csv_and_json_keep_the_names_whole():
    _, reports, _ = runs.load_run(DECODE)
    rows = list(csv.DictReader(render_kernels.kernel_table(reports, "csv").splitlines()))
    assert list(rows[0]) == list(render_kernels.KERNEL_COLUMNS)
    assert len(rows) == 16
    split = next(
        r for r in rows if r["kernel"] == "torch_ref" and r["n"] == "4096" and r["m"] == "1"
    )
    assert split["k"] == "4096" and split["dtype"] == "fp16"
    first, second = split["device_kernels"].split(";")
    assert first.startswith("nvjet_sm90_") and second.startswith(SPLIT_REDUCE)
    assert float(split["launches_per_call"]) == 2.0
    document = json.loads(render_kernels.kernel_table(reports, "json"))
    assert document["kind"] == "gemmreg.kernels"
    assert document["schema"] == render_kernels.KERNELS_SCHEMA
    assert [r["device_kernels"] for r in document["kernels"]] == [r["device_kernels"] for r in rows]


def test_a_summary_without_a_profile_shows_its_status_or_a_dash():
    """A plugin that failed, or a run with no device profile, has no names:
    the cell says which, never another plugin's names."""
    _, reports, _ = runs.load_run(DECODE)
    first = reports[0]
    failed = attrs.evolve(
        first.summaries[1],
        status="failed",
        device_kernels=(),
        launches_per_call=None,
        device_kernel_ms=None,
    )
    unprofiled = attrs.evolve(
        first.summaries[0], device_kernels=(), launches_per_call=None, device_kernel_ms=None
    )
    report = attrs.evolve(first, summaries=(unprofiled, failed))
    rows = table_rows(render_kernels.kernel_table([report], "table"))
    assert rows[("1x4096x4096", "triton_tuned")] == ["failed", "-", "-"]
    assert rows[("1x4096x4096", "torch_ref")] == ["-", "-", "-"]
    assert not render_kernels.profiled([report])
    assert render_kernels.profiled(reports)


def test_kernels_from_the_command_line_across_joined_parts(capsys):
    done = run_main(["report", "--parts", str(DECODE), str(PREFILL), "--kernels"], capsys)
    assert done.code == 0, done.err
    rows = table_rows(done.out)
    assert len(rows) == 32
    assert rows[("8192x14336x4096", "torch_ref")][0].startswith("nvjet_sm90_")
    assert "weighted" not in done.out  # the speedup mean belongs to the verdict views


@pytest.mark.parametrize(
    "args",
    [
        [str(DECODE), "--kernels", "--verdicts"],
        [str(DECODE), "--kernels", "--regimes"],
        [str(DECODE), str(PREFILL), "--kernels"],
        [str(DECODE), str(PREFILL), str(FOLDER / "tf32"), "--kernels"],
    ],
    ids=["with --verdicts", "with --regimes", "two runs", "a history"],
)
def test_kernels_where_it_cannot_apply_is_one_line_and_exit_2(args, monkeypatch, capsys):
    forbid_work(monkeypatch)
    run_main(["report", *args], capsys).assert_refused()


def test_a_run_saved_before_names_were_kept_says_so_and_keeps_its_figures(capsys):
    """The seed table of November 2026 was profiled (launches and device
    time per call) before the profile kept kernel names: every name cell is
    a dash, the figures stay, and stderr says why the names are missing."""
    done = run_main(
        ["report", str(REPO / "evidence/2026-11-30-h200-verdict-evidence/seed-table"), "--kernels"],
        capsys,
    )
    assert done.code == 0, done.err
    assert "no call in this run was profiled" in done.err
    rows = table_rows(done.out)
    assert rows and all(cells[0] == "-" for cells in rows.values())
    assert rows[("512x512x512", "hip_naive")][1] == "1"
