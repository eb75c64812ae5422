"""``report BEFORE AFTER`` and ``report R1 R2 R3`` pair figures of one device
model only: two runs with no model in common are refused (exit 2, both
models named); runs sharing some model pair those rows alone and list the
others as unpaired, with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
from gemmreg.reporting import device_pairing, history, runs
from offline_cli import run_main
from test_runs import report

H200, A100 = "NVIDIA H200", "NVIDIA A100-SXM4-80GB"
STEADY, SLOWER = [1.0, 1.01, 0.99], [1.5, 1.51, 1.49]


def save(folder: Path, points: list[tuple[str, list[float]]], hour: int = 1) -> Path:
    """A run of one point per (model, medians): a ``--devices`` run over
    several models has one report per model, on the same point."""
    manifest = {
        "backend": "cuda",
        "device_name": points[0][0],  # the parent's device: not every report's
        "git": {"commit": f"c{hour}"},
        "timestamp_utc": f"2026-11-30T{hour:02d}:00:00+00:00",
    }
    reports = [attrs.evolve(report(medians), device_name=model) for model, medians in points]
    runs.write_run(folder, manifest, reports, partial=False)
    return folder


def test_runs_on_two_different_models_are_refused_naming_both(tmp_path, capsys):
    before = save(tmp_path / "before", [(H200, STEADY)])
    after = save(tmp_path / "after", [(A100, SLOWER)])
    outcome = run_main(["report", str(before), str(after)], capsys)
    outcome.assert_refused()
    assert H200 in outcome.err and A100 in outcome.err
    assert "never paired" in outcome.err
    assert outcome.out == ""  # no table, no verdict on figures of two GPUs


def test_a_shared_model_pairs_its_rows_alone_and_lists_the_others(tmp_path, capsys):
    # BEFORE: H200 steady, A100 slow. AFTER: H200 slower only. Paired across
    # models (the old pairing by point), A100's 1.5 ms against the H200's.
    before = save(tmp_path / "before", [(H200, STEADY), (A100, SLOWER)])
    after = save(tmp_path / "after", [(H200, SLOWER)], hour=2)
    outcome = run_main(["report", str(before), str(after)], capsys)
    assert outcome.code == 1, outcome.err  # the H200 slowdown is a regression
    assert "SLOWER REGRESSION" in outcome.out
    assert f"unpaired: before fp32-rowmajor-64x64x64 on {A100}" in outcome.out
    assert f"AFTER has no figures on {A100}" in outcome.out
    data = json.loads(run_main(["report", str(before), str(after), "--format", "json"], capsys).out)
    (change,) = data["changes"]
    assert change["device"] == H200 and change["verdict"] == "slower"
    (left,) = data["unpaired"]
    assert (left["run"], left["device"]) == ("before", A100)
    csv = run_main(["report", str(before), str(after), "--format", "csv"], capsys)
    header, row = csv.out.splitlines()
    # the last column, notes, empty: the two runs' setups do not differ
    assert header.endswith(",device_name,notes") and row.endswith(f",{H200},")
    assert f"unpaired: before fp32-rowmajor-64x64x64 on {A100}" in csv.err


def test_two_shared_models_give_two_sections_each_paired_within_itself():
    manifest = {"backend": "cuda", "device_name": H200}
    before = [attrs.evolve(report(STEADY), device_name=m) for m in (H200, A100)]
    after = [
        attrs.evolve(report(SLOWER), device_name=H200),
        attrs.evolve(report(STEADY), device_name=A100),
    ]
    pairing = device_pairing.pair_runs(manifest, before, manifest, after, 5.0)
    verdicts = {c.device: c.verdict for c in pairing.changes}
    assert verdicts == {H200: "slower", A100: "equivalent"} and not pairing.unpaired
    from gemmreg.reporting import render_changes

    text = render_changes.changes_table(pairing.changes, "table", manifest, manifest, 5.0)
    assert f"== on {H200} (1 point) ==" in text and f"== on {A100} (1 point) ==" in text


def test_cpu_runs_pair_whatever_the_processor_as_the_history_does():
    old = {"backend": "cpu", "device_name": "x86_64"}
    new = {"backend": "cpu", "device_name": "aarch64"}
    before = [attrs.evolve(report(STEADY), device_name="x86_64")]
    after = [attrs.evolve(report(STEADY), device_name="aarch64")]
    (change,) = device_pairing.pair_runs(old, before, new, after, 5.0).changes
    assert change.device == history.CPU_DEVICE == "cpu"


def test_the_history_splits_a_run_over_two_models_report_by_report(tmp_path):
    """A ``--devices`` run over an H200 and an A100, then an A100 run: the
    A100 step is judged against the first run's A100 figures, never against
    its H200 ones (the manifest names the H200)."""
    mixed = save(tmp_path / "mixed", [(H200, STEADY), (A100, SLOWER)], hour=1)
    a100 = save(tmp_path / "a100", [(A100, SLOWER)], hour=2)
    given = [history.run_info(str(p), *runs.load_run(p)) for p in (mixed, a100)]
    trends = {t.device: t for t in history.trends(given, 5.0)}
    assert set(trends) == {H200, A100}
    assert len(trends[H200].points) == 1
    first, second = trends[A100].points
    assert first.summary.process_medians_ms == tuple(SLOWER)
    assert second.change is not None and second.change.verdict == "equivalent"
    assert second.change.device == A100
    assert {d: len(r) for d, r in history.by_device(given).items()} == {H200: 1, A100: 2}


def test_two_runs_that_share_no_point_are_refused_not_passed(tmp_path, capsys):
    """An AFTER run of another shape (or dtype) compares nothing: a gate that
    read that as 'no regression' would pass anything."""
    before = save(tmp_path / "before", [(H200, STEADY)])
    manifest = {"backend": "cuda", "device_name": H200, "git": {"commit": "c2"}}
    other = attrs.evolve(report(STEADY, shape=(32, 32, 32)), device_name=H200)
    runs.write_run(tmp_path / "after", manifest, [other], partial=False)
    outcome = run_main(["report", str(before), str(tmp_path / "after")], capsys)
    outcome.assert_refused()
    assert "share no point" in outcome.err


def test_a_point_or_plugin_one_run_lacks_is_listed_and_a_lost_timing_fails(tmp_path, capsys):
    """AFTER lost a point, and its kernel at the other point failed: the lost
    point is said, and the kernel that stopped being timed fails the gate
    (exit 1) as a regression would."""
    manifest = {"backend": "cuda", "device_name": H200, "git": {"commit": "c1"}}
    kept, dropped = (
        attrs.evolve(report(STEADY, shape=shape), device_name=H200)
        for shape in ((64, 64, 64), (32, 32, 32))
    )
    runs.write_run(tmp_path / "before", manifest, [kept, dropped], partial=False)
    (timed,) = kept.summaries
    broken = attrs.evolve(
        timed, status="failed", reason="wrong result", process_medians_ms=(), center_ms=None
    )
    after = attrs.evolve(kept, summaries=(broken,))
    runs.write_run(
        tmp_path / "after", {**manifest, "git": {"commit": "c2"}}, [after], partial=False
    )
    outcome = run_main(["report", str(tmp_path / "before"), str(tmp_path / "after")], capsys)
    assert outcome.code == 1, outcome.err
    assert "unpaired: before fp32-rowmajor-32x32x32" in outcome.out
    assert "AFTER did not time this point" in outcome.out
    assert "timed BEFORE, no timing AFTER: k at fp32-rowmajor-64x64x64: failed" in outcome.err
