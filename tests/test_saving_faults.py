"""Runs that lose nothing when saving goes wrong: a full disk, Ctrl-C twice
during a save, a point cut short, and a run killed with its temporary folders.

Faults come at known points, never from a race with a sleep: the disk is a
small tmpfs filled up front, or a save made to fail at its Nth file; the
signals are sent by the process to itself from inside the save."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO, run_gemmreg
from gemmreg.contract.records import Problem
from gemmreg.discovery.registry import discover
from gemmreg.reporting import render_compare, runs
from gemmreg.timing import comparing

BENCH = ("bench", "torch_ref", "--shape", "8,16", "--processes", "1", "--repeats", "3")
"""The cheapest real sweep: two tiny points, one process each."""

FAULTY_CLI = textwrap.dedent(
    """
    import errno, os, signal, sys
    from gemmreg.reporting import runs
    from gemmreg import cli

    fault, files = sys.argv[1], sys.argv[2:sys.argv.index("--")]
    real, seen = runs.write_atomically, []

    def write(path, text):  # the Nth file a save writes fails, as a full disk would
        seen.append(path.name)
        if fault == "full" and path.name == "run.json" and seen.count("run.json") >= 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        if fault == "full-once" and path.name == "run.json" and seen.count("run.json") == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        if fault == "ctrl-c-twice" and path.name == "summary.csv" and seen.count("run.json") == 2:
            os.kill(os.getpid(), signal.SIGINT)  # after run.json, before the tables
            os.kill(os.getpid(), signal.SIGINT)
        return real(path, text)

    runs.write_atomically = write
    sys.argv = ["gemmreg", *sys.argv[sys.argv.index("--") + 1:]]
    cli.run()
    """
)


def faulty_bench(fault: str, out, tmpdir) -> subprocess.CompletedProcess[str]:
    """The real command line, its second save faulted as ``fault`` says."""
    return subprocess.run(
        [sys.executable, "-c", FAULTY_CLI, fault, "--", *BENCH, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(tmpdir)},
    )


def gemmreg_folders(folder):
    return [p.name for p in folder.iterdir() if p.name.startswith("gemmreg-")]


@pytest.mark.parametrize("fault", ["full", "full-once"])
def test_a_disk_that_fills_mid_sweep_loses_no_figure(tmp_path, fault):
    out, tmpdir = tmp_path / "run", tmp_path / "tmp"
    tmpdir.mkdir()
    done = faulty_bench(fault, out, tmpdir)
    assert done.returncode == 4, done.stderr[-2000:]
    # Both points' figures were printed as each finished, the second never saved.
    for label in ("[1/2] 8x8x8 fp32", "[2/2] 16x16x16 fp32"):
        assert f"{label}: result: torch_ref: " in done.stderr
    assert "16x16x16" in done.stdout  # and in the table at the end
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"gemmreg: cannot write {out}/run.json: No space left on device; {out}/ keeps the run "
        "as last saved (partial); every point's figures are printed above"
    )
    assert "internal error" not in done.stderr and "run saved to" not in done.stderr
    # The folder is the last save that succeeded, whole and consistent.
    data = json.loads((out / "run.json").read_text())
    assert data["partial"] is True and len(data["reports"]) == 1
    assert "16x16x16" not in (out / "report.txt").read_text()
    assert len((out / "summary.csv").read_text().splitlines()) == 2
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporary left
    assert gemmreg_folders(tmpdir) == []  # the workers' caches were removed on the way out
    shown = run_gemmreg("report", str(out))
    assert shown.returncode == 0, shown.stderr
    if fault == "full-once":  # room again for the note: the run says what happened
        assert "No space left on device" in shown.stderr
    else:
        assert "interrupted, killed, or its storage failed" in shown.stderr


def test_a_second_ctrl_c_during_a_save_leaves_the_files_agreeing(tmp_path):
    out = tmp_path / "run"
    done = faulty_bench("ctrl-c-twice", out, tmp_path)
    assert done.returncode == 130, done.stderr[-2000:]
    assert f"gemmreg: the run as last saved is in {out}/" in done.stderr
    data = json.loads((out / "run.json").read_text())
    # The save the signals came into was finished first: every file says two points.
    assert len(data["reports"]) == 2
    assert "16x16x16" in (out / "report.txt").read_text()
    assert "16x16x16" in (out / "report.md").read_text()
    assert len((out / "summary.csv").read_text().splitlines()) == 3
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize(
    ("signals", "raised"),
    [(["SIGINT", "SIGINT"], "KeyboardInterrupt"), (["SIGTERM"], "Terminated")],
)
def test_signals_wait_for_the_save_then_act(tmp_path, signals, raised):
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        from pathlib import Path
        from gemmreg.discovery import interrupts
        from gemmreg.reporting import runs

        interrupts.install_termination_handlers()
        real = runs.write_atomically

        def write(path, text):
            real(path, text)
            if path.name == "run.json":
                for name in {signals!r}:
                    os.kill(os.getpid(), getattr(signal, name))

        runs.write_atomically = write
        try:
            runs.write_run(Path({str(tmp_path)!r}), {{}}, [], False, {{"report.txt": "views"}})
        except BaseException as error:
            print(type(error).__name__)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert done.stdout.strip() == raised, done.stderr[-1500:]
    assert (tmp_path / "report.txt").read_text() == "views\n"  # written before it acted
    assert (tmp_path / "manifest.json").exists()


def test_a_full_disk_is_refused_before_any_work(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("a small tmpfs cannot be mounted here (needs root)")
    try:
        with contextlib.suppress(OSError), open(disk / "filler", "wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
                os.fsync(filler.fileno())
        done = run_gemmreg(*BENCH, "--out", str(disk / "run"))
    finally:
        subprocess.run(["umount", str(disk)], check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [
        f"gemmreg: error: --out '{disk / 'run'}': cannot write there: No space left on device"
    ]


def test_a_point_cut_short_before_any_process_finished_is_interrupted(fake_plugins, tmp_path):
    fake_plugins("good")
    kernels = discover(env={"GEMMREG_PLUGINS": "torch_ref"}, extra_plugins=["fake_plugins.good"])

    def interrupt(cold):
        raise KeyboardInterrupt

    report = comparing.run_compare(
        kernels.select(["torch_ref", "fake_good"]),
        Problem(m=16, n=16, k=16),
        processes=2,
        seed=1,
        clock="test",
        device_name="cpu",
        gpu=False,
        repeats=3,
        on_cold=interrupt,  # Ctrl-C as the first cold start ends: no process ran
    )
    assert report.partial
    assert {s.status for s in report.summaries} == {"interrupted"}
    assert all("interrupted" in s.reason for s in report.summaries)
    assert {v.verdict for v in report.verdicts} == {"no verdict"}
    runs.write_run(tmp_path, {}, [report], True, render_compare.run_views)
    _, loaded, partial = runs.load_run(tmp_path)
    assert partial and [s.status for s in loaded[0].summaries] == ["interrupted"] * 2
    assert "INTERRUPTED" in (tmp_path / "report.txt").read_text()
    assert "interrupted" in (tmp_path / "summary.csv").read_text()
    assert "ERROR" not in (tmp_path / "report.txt").read_text()


def test_folders_a_killed_run_left_are_removed_by_the_next(tmp_path):
    script = textwrap.dedent(
        """
        import sys
        from gemmreg.workers import temp_folders
        folder = temp_folders.temporary_folder("caches")
        print(folder.name, flush=True)
        sys.stdin.read()
        """
    )
    killed = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert killed.stdout is not None
    left = killed.stdout.readline().strip()
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert os.path.isdir(left)  # SIGKILL gave it no chance to clean up
    alive = tmp_path / f"gemmreg-caches-pid{os.getpid()}-live"  # a live run's
    unnamed = tmp_path / "gemmreg-caches-older"  # no owner recorded: not ours to judge
    alive.mkdir()
    unnamed.mkdir()
    done = run_gemmreg("check", "no_such_plugin", env={"TMPDIR": str(tmp_path)})
    assert done.returncode == 2
    assert not os.path.exists(left)
    assert alive.is_dir() and unnamed.is_dir()
