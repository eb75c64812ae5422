"""A disk that fills mid-sweep loses no figure on several GPUs (``bench
--devices``, on pretend GPUs) or on a Ray cluster (``bench --ray local``,
skipped where Ray is not installed) either: every point measured prints its
figures and is in the final table, then one line and exit 4, as on one GPU
(tests/test_saving_faults.py).

The fault comes at a known save (the second ``run.json`` and every one
after it fail with ENOSPC); which points finish before it depends on the
order the GPUs finish in, and the assertions hold for every order. Below,
what keeps the refusal (:class:`gemmreg.fanout.sweep_saves.Saves`)
on its own."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys

import attrs
import pytest
from conftest import REPO
from gemmreg.contract.records import Problem
from gemmreg.fanout.sweep_saves import Saves
from gemmreg.reporting import runs
from gemmreg.workers import devices
from test_input_properties import valid_report
from test_saving_faults import FAULTY_CLI

SHAPES = ("6", "10", "14", "18")
BENCH = ("bench", "torch_ref", "--shape", ",".join(SHAPES), "--processes", "1", "--repeats", "3")
ENV = {devices.FAKE_DEVICES_ENV: "NVIDIA H200,NVIDIA H200", "GEMMREG_PLUGINS": "torch_ref"}


@pytest.mark.slow
@pytest.mark.parametrize("spread", [("--devices", "all"), ("--ray", "local")])
def test_a_disk_that_fills_mid_sweep_on_several_gpus_loses_no_figure(tmp_path, spread):
    out, tmpdir = tmp_path / "run", tmp_path / "tmp"
    tmpdir.mkdir()
    temporary = {"TMPDIR": str(tmpdir)}  # the workers' caches, to see them removed
    if spread[0] == "--ray":
        pytest.importorskip("ray", reason="Ray is optional (pip install 'gemmreg[ray]')")
        temporary = {}  # Ray's sockets live there: a test's long path is too long for them
    done = subprocess.run(
        [sys.executable, "-c", FAULTY_CLI, "full", "--", *BENCH, *spread, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env={**os.environ, **ENV, **temporary},
    )
    assert done.returncode == 4, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "run saved to" not in done.stderr
    # Every point that was measured printed its figures, the one whose save
    # failed and any in flight then; none started after the failure.
    printed = re.findall(r"\] (\d+)x\1x\1 fp32: result: torch_ref: ", done.stderr)
    assert len(printed) == len(set(printed)) >= 2, done.stderr[-3000:]
    assert len(printed) <= 3  # at most one point a GPU in flight then; the fourth never began
    # The final table holds exactly those points.
    rows = [line.split()[0] for line in done.stdout.splitlines() if " torch_ref " in line]
    assert sorted(rows) == sorted(f"{m}x{m}x{m}" for m in printed)
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"gemmreg: cannot write {out}/run.json: No space left on device; {out}/ keeps the run "
        "as last saved (partial); every point's figures are printed above"
    )
    # The folder is the last save that succeeded (the first point to finish), whole.
    data = json.loads((out / "run.json").read_text())
    assert data["partial"] is True and len(data["reports"]) == 1
    assert str(data["reports"][0]["problem"]["m"]) in printed
    assert len((out / "summary.csv").read_text().splitlines()) == 2
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporary left
    assert not [p.name for p in tmpdir.iterdir() if p.name.startswith("gemmreg-")]


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(runs, "write_atomically", refuse)


def test_a_refused_save_is_kept_and_no_save_is_tried_after_it(tmp_path, monkeypatch):
    first, second = valid_report(), attrs.evolve(valid_report(), problem=Problem(m=16, n=8, k=8))
    saves = Saves(tmp_path, {"device_name": "cpu"})
    assert saves.save([first], True)
    _full_disk(monkeypatch)
    assert not saves.save([first, second], True)
    assert saves.refused is not None and saves.refused.path == tmp_path / "run.json"
    monkeypatch.undo()  # room again: still no save but the note
    assert not saves.save([first, second], False)
    saves.note()  # the run on disk says why it ends early, with its one point
    manifest, reports, partial = runs.load_run(tmp_path)
    assert partial and [r.problem.m for r in reports] == [8]
    assert "No space left on device" in manifest["stopped"]


def test_a_refused_closing_save_leaves_a_whole_run_whole(tmp_path, monkeypatch):
    """Only the save after the last point (the GPU state after it) refused:
    the run on disk already holds every point, and is not marked partial."""
    saves = Saves(tmp_path, {"device_name": "cpu"})
    assert saves.save([valid_report()], False)
    _full_disk(monkeypatch)
    assert not saves.save([valid_report()], False)
    monkeypatch.undo()
    saves.note()
    manifest, reports, partial = runs.load_run(tmp_path)
    assert not partial and len(reports) == 1 and "stopped" not in manifest
