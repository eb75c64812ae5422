"""The timing regimes beside the primary one are a registry
(:mod:`gemmreg.timing.regimes`): a regime is one module that registers its
measurement, its figures and its column. A regime defined here, in the test
alone, is measured by the timing process, crosses the worker wire, is
summarised and judged across processes, is saved and read back, and shows in
``compare``'s table, its legend and verdict lines, the summary CSV and
``report --regimes``, for as long as it is registered. The device kernels
(CUPTI) are a regime of the other kind, measured in processes of their own:
their figures, verdict, columns and legend line come from their module too.
Runs saved before the figures were kept by regime read their graph figure as
they always did."""

from __future__ import annotations

import csv
import json
import random
import re
from collections.abc import Iterator, Sequence
from types import SimpleNamespace
from typing import ClassVar

import pytest
from conftest import REPO
from fake_plugins import fp32_spec
from gemmreg.contract.records import Problem
from gemmreg.contract.saved_files import read_saved_or_packed
from gemmreg.discovery.registry import Origin, RegisteredKernel
from gemmreg.reporting import render_compare, render_regimes, render_sweep, runs
from gemmreg.timing import (
    process_results,
    regime_device,
    regime_graph,
    regimes,
    summaries,
    timing,
    verdicts,
)
from gemmreg.timing.rounds import Round
from gemmreg.timing.timing_records import CompareReport
from gemmreg.workers import task_wire
from gemmreg.workers.task_results import KernelTiming, RoundsResult

NAMES = ("a", "b")
PROCESSES = 4
ROUNDS = 12
WARM_MS = {"a": 1.0, "b": 0.5}
"""The test regime's figures: b twice as fast in it (end to end, the two are alike)."""
OLD_RUNS = REPO / "evidence"
SCHEMA_2 = OLD_RUNS / "2026-12-01-h200-device-kernel-figures" / "c5" / "smoke-exploit"
"""A run saved in schema 2, before the figures were kept by regime: one kernel
with a graph figure, one without (a side stream no CUDA graph could capture)."""


def _rounds(ms: dict[str, float], rng: random.Random) -> list[Round]:
    """Rounds of both kernels, each slot its figure within 0.1%."""
    return [
        Round(
            order=NAMES,
            slot_ms={n: ms[n] * (1 + rng.uniform(-1e-3, 1e-3)) for n in NAMES},
            slot_wall_s={n: 0.01 for n in NAMES},
            samples={n: 10 for n in NAMES},
        )
        for _ in range(ROUNDS)
    ]


class WarmL2(regimes.TimingRegime):
    """The calls again with L2 left warm: only the test knows of it."""

    name: ClassVar[str] = "warm l2"
    rank: ClassVar[int] = 50
    column: ClassVar[str] = "warm_l2_ms"
    header: ClassVar[str] = "warm ms"
    measuring: ClassVar[str] = "warm calls"

    def measure(self, kernels, policy, seed, problem) -> Sequence[Round]:
        rng = random.Random(seed)
        return _rounds({k.name: WARM_MS[k.name] for k in kernels}, rng)

    def notes(self, summary) -> list[str]:
        figure = summary.regime_ms.get(self.name)
        return ["warm under 0.75 ms"] if figure is not None and figure < 0.75 else []

    def legend(self) -> list[str]:
        return ["warm ms: per call with L2 left warm (a regime of this test);"]


@pytest.fixture
def warm() -> Iterator[None]:
    regimes.register(WarmL2)
    try:
        yield
    finally:
        regimes.unregister(WarmL2.name)


def _process(seed: int) -> RoundsResult:
    """One timing process's result, as the worker hands it back over the wire."""
    result = RoundsResult(clock="test", l2=None, policy={})
    for name in NAMES:
        result.kernels[name] = KernelTiming(round_ms=(1.0,) * ROUNDS)
    result.rounds = tuple(_rounds({"a": 1.0, "b": 1.0}, random.Random(seed)))
    ready = [SimpleNamespace(name=n, result=result.kernels[n], call=lambda: None) for n in NAMES]
    said: list[str] = []
    problem = Problem(m=8, n=8, k=8)
    timing.measure_regimes(ready, timing.GPU_POLICY, seed, problem, result, said.append)
    assert said == ["graph replays", "warm calls"]  # by rank: blame falls on the right one
    # calls of 1 ms are short enough to graph, but this CPU cannot capture one, and says so
    assert result.regime_rounds[regime_graph.REGIME] == ()
    assert all(regime_graph.REGIME in k.regime_errors for k in result.kernels.values())
    wired = task_wire.decode(RoundsResult, json.loads(json.dumps(task_wire.encode(result))))
    assert wired == result and len(wired.regime_rounds[WarmL2.name]) == ROUNDS
    return wired


def _report(profile: dict | None = None) -> CompareReport:
    """A comparison of a and b over PROCESSES processes, judged as compare does;
    ``profile``: each kernel's device profile record."""
    problem = Problem(m=8, n=8, k=8)
    process_runs, records = [], []
    for process in range(PROCESSES):
        found, record = process_results.read_process(NAMES, process, _process(process))
        process_runs += found
        records.append(record)
    kernel_summaries = tuple(
        summaries.summarize(
            RegisteredKernel(
                spec=fp32_spec(name, lambda a, b, out: None),
                origin=Origin(plugin=name, module=name, distribution="d", version="1"),
            ),
            problem,
            [r for r in process_runs if r.kernel == name],
            None,
            "cpu",
            profile,
        )
        for name in NAMES
    )
    return CompareReport(
        problem=problem,
        processes=PROCESSES,
        seed=1,
        clock="test",
        device_name="cpu",
        summaries=kernel_summaries,
        verdicts=verdicts.all_verdicts(kernel_summaries, records, confidence=0.95, margin=0.01),
        runs=tuple(process_runs),
        records=tuple(records),
    )


def test_a_regime_defined_in_a_test_is_measured_judged_saved_and_shown(warm, tmp_path):
    report = _report()
    run = next(r for r in report.runs if r.kernel == "b")
    assert run.regime_ms == {"warm l2": pytest.approx(0.5, rel=2e-3)}
    assert run.reason.startswith("graph replay: ")  # the regime that could not measure it
    b = report.summaries[1]
    assert b.regime_ms == {"warm l2": pytest.approx(0.5, rel=2e-3)} and not b.launch_bound
    (verdict,) = report.verdicts
    assert [r.regime for r in verdict.regimes] == [
        "end-to-end",
        "graph replay",
        "warm l2",
        "device kernels",
    ]
    assert verdict.verdict == "equivalent"  # end to end, the primary regime
    warm_result = verdict.regimes[2]
    assert warm_result.word == "faster" and warm_result.estimate == pytest.approx(2.0, rel=2e-3)
    assert verdict.regimes[1].word == "not measured"

    runs.write_run(tmp_path, {}, [report], False, render_compare.run_views)
    _, (again,), _ = runs.load_run(tmp_path)
    assert again == report

    table = render_compare.compare_table(again, "table")
    header = next(line for line in table.splitlines() if line.startswith("plugin"))
    assert header.index("graph ms") < header.index("warm ms") < header.index("host ms")
    row_b = next(line for line in table.splitlines() if line.startswith("b "))
    assert "0.5" in row_b and "warm under 0.75 ms" in row_b
    assert "warm ms: per call with L2 left warm (a regime of this test);" in table
    assert re.search(r"^  warm l2: faster 2(\.0+\d*)?x \(", table, re.MULTILINE), table
    summary = list(csv.DictReader((tmp_path / "summary.csv").read_text().splitlines()))
    assert float(summary[1]["warm_l2_ms"]) == pytest.approx(0.5, rel=2e-3)
    assert summary[1]["graph_ms"] == ""
    assert list(summary[0]).index("warm_l2_ms") == list(summary[0]).index("graph_ms") + 1
    sweep = render_sweep.sweep_table([again])
    assert "warm under 0.75 ms" in sweep.splitlines()[-1]
    regime_rows = render_regimes.regime_table([again], "table").splitlines()
    assert regime_rows[0].split()[-3:] == ["warm", "l2", "device"] or "warm l2" in regime_rows[0]
    assert re.search(r"EQUIVALENT .*  FASTER 2(\.0+\d*)?x \(", regime_rows[-1]), regime_rows


def test_a_regime_leaves_the_reports_when_it_leaves_the_registry(warm, tmp_path):
    """The run saved with it still reads: its figure stays in the record, but
    no column, line or legend names a regime that is not registered."""
    report = _report()
    regimes.unregister(WarmL2.name)
    try:
        table = render_compare.compare_table(report, "table")
        assert "warm ms" not in table and "warm under" not in table
        assert "warm_l2_ms" not in render_compare.csv_text(render_compare.summary_rows(report))
    finally:
        regimes.register(WarmL2)


def test_registering_twice_or_as_the_primary_is_refused():
    assert regimes.process_regimes() == ("end-to-end", "graph replay")
    with pytest.raises(ValueError, match="registered already"):
        regimes.register(regime_graph.GraphReplay)

    class Primary(WarmL2):
        name: ClassVar[str] = regimes.PRIMARY

    with pytest.raises(ValueError, match="registered already"):
        regimes.register(Primary)


DEVICE_PROFILE = {
    "profile": {
        "kernel_ms_per_call": 0.25,
        "launches_per_call": 2.0,
        "kernels": ["gemm_tile"],
        "call_ms": [0.25] * 8,
        "interleaved": True,
    }
}
"""One profiling process's record of a kernel: both kernels alike in device time."""


def _headers(report: CompareReport) -> list[str]:
    table = render_compare.compare_table(report, "table")
    line = next(line for line in table.splitlines() if line.startswith("plugin"))
    return [cell.strip() for cell in line.split("  ") if cell.strip()]


def test_the_device_kernels_are_a_regime_of_processes_of_their_own(warm):
    """Their summary fields (from a profile record), their verdict, their two
    columns after host ms and their legend line come from regime_device through
    the registry: unregistered, none of them is set or shown, and the rest stands."""
    (device,) = regimes.profiled()
    assert isinstance(device, regime_device.DeviceKernels)
    assert device.name not in regimes.process_regimes()  # no rounds in the timing process
    report = _report(DEVICE_PROFILE)
    b = report.summaries[1]
    assert (b.device_kernel_ms, b.launches_per_call, b.device_kernels) == (
        0.25,
        2.0,
        ("gemm_tile",),
    )
    (verdict,) = report.verdicts
    assert verdict.regimes[-1].regime == "device kernels"
    assert verdict.regimes[-1].word == "one process"
    assert verdict.regimes[-1].estimate == pytest.approx(1.0)
    headers = _headers(report)
    assert headers.index("host ms") + 1 == headers.index("device ms")
    assert headers.index("device ms") + 1 == headers.index("launches")
    legend_line = "device ms and launches: device work per call and its launches, from CUPTI;"
    assert legend_line in render_compare.compare_table(report, "table")
    columns = list(render_compare.SUMMARY_COLUMNS)
    assert columns[columns.index("host_ms") + 1 : columns.index("host_ms") + 3] == [
        "device_kernel_ms",
        "launches_per_call",
    ]
    assert render_compare.summary_rows(report)[1]["launches_per_call"] == 2.0

    regimes.unregister(device.name)
    try:
        without = _report(DEVICE_PROFILE)
        assert without.summaries[1].device_kernel_ms is None  # no regime set it
        assert [r.regime for r in without.verdicts[0].regimes] == [
            "end-to-end",
            "graph replay",
            "warm l2",
        ]
        assert "device ms" not in _headers(without) and "launches" not in _headers(without)
        assert legend_line not in render_compare.compare_table(report, "table")
        assert "device_kernel_ms" not in render_compare.SUMMARY_COLUMNS
    finally:
        regimes.register(regime_device.DeviceKernels)
    assert regimes.profiled()[0].name == device.name


@pytest.mark.parametrize(
    ("folder", "schema"),
    [(OLD_RUNS / "2026-11-30-h200-hip-regtiled" / "compare-4096-fp32", None), (SCHEMA_2, 2)],
    ids=["schema 1", "schema 2"],
)
def test_a_run_saved_with_a_field_per_regime_reads_its_figure_by_regime(folder, schema):
    """Schemas 1 and 2 kept the graph replay's figure as ``graph_ms`` on each
    process's run and kernel's summary: it reads into ``regime_ms``, and a
    kernel with no graph figure (null) has none."""
    saved = json.loads(read_saved_or_packed(folder / "run.json")[1])
    (old,) = saved["reports"]
    assert old.get("schema") == schema and "regime_ms" not in old["summaries"][0]
    _, (report,), _ = runs.load_run(folder)
    for kept, summary in zip(old["summaries"], report.summaries, strict=True):
        expected = {} if kept["graph_ms"] is None else {"graph replay": kept["graph_ms"]}
        assert summary.regime_ms == expected
    for kept, run in zip(old["runs"], report.runs, strict=True):
        assert run.regime_ms.get("graph replay") == kept["graph_ms"]
    assert any(s.regime_ms for s in report.summaries)
