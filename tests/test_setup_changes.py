"""A step between two saved runs names what changed besides the code (the
card, the software, the power limit), in ``report BEFORE AFTER`` and in a
history; and a history judges a partial sweep's whole points, as
``report BEFORE AFTER`` does."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import attrs
from gemmreg.reporting import history, runs
from gemmreg.reporting.setup_changes import Setup, setup_notes, setup_of
from offline_cli import run_main
from test_runs import report

H200 = "NVIDIA H200"
CARD_A = "GPU-4e0cd3b8-ee60-a633-ba2b-8f09a6b116eb"
CARD_B = "GPU-bbfeca2b-f0e3-de4d-f165-b0b4480a251d"
STEADY = [1.0, 1.01, 0.99]


def manifest(hour: int, card: str = CARD_A, torch: str = "2.11.0", **extra) -> dict:
    return {
        "backend": "cuda",
        "device_name": H200,
        "git": {"commit": f"commit{hour}"},
        "timestamp_utc": f"2026-12-02T{hour:02d}:00:00+00:00",
        "torch": torch,
        "triton": "3.6.0",
        "gpu": {"uuid": card, "driver_version": "580.159.04", "enforced_power_limit_w": 700.0},
        **extra,
    }


def save(folder: Path, meta: dict, reports=None, partial: bool = False) -> Path:
    reports = reports or [attrs.evolve(report(STEADY), device_name=H200)]
    runs.write_run(folder, meta, reports, partial=partial)
    return folder


def steps(*folders: Path) -> list:
    loaded = [history.run_info(str(f), *runs.load_run(f)) for f in folders]
    (trend,) = history.trends(loaded, 5.0)
    return [point.change for point in trend.points[1:]]


def test_a_step_onto_another_card_is_noted_and_one_on_the_same_card_is_not(tmp_path):
    a = save(tmp_path / "a", manifest(1))
    b = save(tmp_path / "b", manifest(2))
    c = save(tmp_path / "c", manifest(3, card=CARD_B))
    same, other = steps(a, b, c)
    assert same.verdict == "equivalent" and same.notes == ()
    (note,) = other.notes
    assert note.startswith("ANOTHER CARD: before ran on GPU-4e0cd3b8, after on GPU-bbfeca2b")
    # The verdict is still the figures' (the note says how to read it).
    assert other.verdict == "equivalent"


def test_the_history_prints_a_run_wide_note_once_with_its_count_of_steps(tmp_path, capsys):
    two = [attrs.evolve(report(STEADY, shape=(s, s, s)), device_name=H200) for s in (64, 128)]
    names = [
        str(save(tmp_path / "a", manifest(1), two)),
        str(save(tmp_path / "b", manifest(2), two)),
        str(save(tmp_path / "c", manifest(3, card=CARD_B, torch="2.12.0"), two)),
    ]
    out = run_main(["report", *names], capsys).out
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert notes == [
        f"note: {H200}, 2 step(s) into {names[2]} (commit3): ANOTHER CARD: before ran on "
        "GPU-4e0cd3b8, after on GPU-bbfeca2b: cards of one model can differ by a few "
        "percent, so this step may be the card's, not the code's",
        f"note: {H200}, 2 step(s) into {names[2]} (commit3): UNLIKE SOFTWARE: "
        "torch 2.11.0 -> 2.12.0",
    ]
    rows = list(
        csv.DictReader(io.StringIO(run_main(["report", *names, "--format", "csv"], capsys).out))
    )
    assert [row["notes"].split("; ")[-1] for row in rows if row["run"] == names[2]] == [
        "UNLIKE SOFTWARE: torch 2.11.0 -> 2.12.0"
    ] * 2
    assert all(row["notes"] == "" for row in rows if row["run"] != names[2])


def test_report_before_after_names_the_other_card_and_software(tmp_path, capsys):
    before = save(tmp_path / "before", manifest(1))
    after = save(tmp_path / "after", manifest(2, card=CARD_B, torch="2.12.0"))
    out = run_main(["report", str(before), str(after)], capsys).out
    assert "note: ANOTHER CARD: before ran on GPU-4e0cd3b8, after on GPU-bbfeca2b" in out
    assert "note: UNLIKE SOFTWARE: torch 2.11.0 -> 2.12.0" in out
    assert out.count("ANOTHER CARD") == 1  # run-wide: once, not once per change
    data = json.loads(run_main(["report", str(before), str(after), "--format", "json"], capsys).out)
    (change,) = data["changes"]
    assert [note.split(":")[0] for note in change["notes"]] == ["ANOTHER CARD", "UNLIKE SOFTWARE"]
    table = run_main(["report", str(before), str(after), "--format", "csv"], capsys).out
    (row,) = csv.DictReader(io.StringIO(table))
    assert row["notes"] == "; ".join(change["notes"])
    same = run_main(["report", str(before), str(save(tmp_path / "again", manifest(3)))], capsys)
    assert "ANOTHER CARD" not in same.out and "UNLIKE SOFTWARE" not in same.out


def test_a_run_over_several_gpus_or_on_ray_names_no_card():
    """Their manifest's GPU record is of the first GPU only: a card note
    there could name the wrong card."""
    devices = [{"index": 0, "name": H200}, {"index": 1, "name": H200}]
    assert setup_of(manifest(1)).card == CARD_A
    assert setup_of(manifest(1, devices=devices)).card == ""
    assert setup_of(manifest(1, devices=devices[:1])).card == CARD_A
    assert setup_of(manifest(1, ray_nodes=[{"node": "x"}])).card == ""
    assert setup_of({}) == Setup()
    assert (
        setup_of({"gpu": {"uuid": "unavailable: NVMLError", "driver_version": "unavailable: x"}})
        == Setup()
    )


def test_what_one_side_does_not_record_is_no_difference():
    known = setup_of(manifest(1))
    assert setup_notes(known, Setup()) == ()
    assert setup_notes(Setup(), known) == ()
    lower = attrs.evolve(known, power_limit_w="600", driver="590.1")
    assert setup_notes(known, lower) == (
        "UNLIKE SOFTWARE: driver 580.159.04 -> 590.1",
        "UNLIKE POWER LIMIT: 700 W -> 600 W",
    )


def test_a_partial_sweep_s_whole_points_are_judged_and_its_cut_point_is_not(tmp_path):
    """An interrupted sweep keeps the points it finished, whole, and marks the
    cut one partial; ``report BEFORE AFTER`` judges the whole ones, and so
    does a step of a history (it once took the run's flag for every point)."""
    whole = attrs.evolve(report(STEADY, shape=(64, 64, 64)), device_name=H200)
    cut = attrs.evolve(report(STEADY, shape=(128, 128, 128)), device_name=H200)
    a = save(tmp_path / "a", manifest(1), [whole, cut])
    b = save(tmp_path / "b", manifest(2), [whole, attrs.evolve(cut, partial=True)], partial=True)
    loaded = [history.run_info(str(f), *runs.load_run(f)) for f in (a, b)]
    by_point = {t.problem: t.points[1].change for t in history.trends(loaded, 5.0)}
    assert by_point[whole.problem.label].verdict == "equivalent"
    assert by_point[cut.problem.label].verdict == "no verdict"
    assert "interrupted" in by_point[cut.problem.label].explanation


def test_runs_over_several_gpus_compare_their_sets_of_cards(tmp_path):
    """A --devices run names its cards (each device's UUID in the manifest):
    the same set in another order is the same setup, another set is not, and
    a device without its UUID (a run saved before they were kept) says nothing."""

    def spread(hour: int, *cards: str) -> dict:
        listed = [{"index": i, "name": H200, "uuid": c} for i, c in enumerate(cards)]
        return manifest(hour, devices=listed)

    card_c = "GPU-c0ffee00-0000-0000-0000-000000000000"
    a = save(tmp_path / "a", spread(1, CARD_A, CARD_B))
    b = save(tmp_path / "b", spread(2, CARD_B, CARD_A))
    c = save(tmp_path / "c", spread(3, CARD_A, card_c))
    old = manifest(4, devices=[{"index": 0, "name": H200}, {"index": 1, "name": H200}])
    d = save(tmp_path / "d", old)
    same, other, unknown = steps(a, b, c, d)
    assert same.notes == () and unknown.notes == ()
    (note,) = other.notes
    assert note.startswith(
        "ANOTHER CARD: before ran on GPU-4e0cd3b8+GPU-bbfeca2b, after on GPU-4e0cd3b8+GPU-c0ffee00"
    )


def test_a_manifest_names_each_chosen_device_by_its_uuid_where_torch_knows_it():
    from gemmreg.workers import devices

    chosen = [devices.Device(0, H200), devices.Device(1, H200)]
    named = devices.described(chosen, uuid=lambda i: CARD_A if i == 0 else None)
    assert named == [{"index": 0, "name": H200, "uuid": CARD_A}, {"index": 1, "name": H200}]
    import torch

    if not torch.cuda.is_available():  # no CUDA device: nothing to name, nothing made up
        assert devices.described(chosen) == [
            {"index": 0, "name": H200},
            {"index": 1, "name": H200},
        ]
