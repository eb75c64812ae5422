"""One writer per run folder: two runs never share a folder, a folder holding a
run is not overwritten without --force, and default folders never collide."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO, run_gemmreg
from gemmreg.contract.options import UsageError
from gemmreg.reporting import run_folder

BENCH = ("bench", "torch_ref", "--shape", "8,16", "--processes", "1", "--repeats", "3")
"""The cheapest real sweep: two tiny points, one process each."""


@pytest.fixture
def holder(tmp_path):
    """Another process holding a folder as a live run does, until the test ends."""
    processes = []

    def hold(folder):
        script = textwrap.dedent(
            f"""
            import sys
            from pathlib import Path
            from gemmreg.reporting import run_folder
            run_folder.claim(Path({str(folder)!r}))
            print("held", flush=True)
            sys.stdin.read()
            """
        )
        process = subprocess.Popen(
            [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        processes.append(process)
        assert process.stdout is not None and process.stdout.readline() == "held\n"
        return process

    yield hold
    for process in processes:
        process.kill()
        process.wait()


def test_a_folder_another_live_run_holds_is_refused_in_one_line_before_any_work(tmp_path, holder):
    out = tmp_path / "run"
    holder(out)
    done = run_gemmreg(*BENCH, "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"gemmreg: error: --out '{out}' is being written by another gemmreg run; "
        "choose another folder"
    ]
    assert not (out / "run.json").exists()
    forced = run_gemmreg(*BENCH, "--out", str(out), "--force")  # --force never takes a live one
    assert forced.returncode == 2 and "another gemmreg run" in forced.stderr


def test_the_lock_goes_with_the_process_that_held_it(tmp_path, holder):
    out = tmp_path / "run"
    process = holder(out)
    with pytest.raises(UsageError, match="another gemmreg run"):
        run_folder.claim(out)
    process.kill()  # killed, as by SIGKILL: no stale lock is left behind
    process.wait()
    run_folder.claim(out)
    run_folder.release_all()


def test_two_runs_started_together_into_one_folder_lose_nothing(tmp_path):
    out = tmp_path / "shared"
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "gemmreg", *BENCH, "--out", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [(p.wait(timeout=300), *p.communicate()) for p in started]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 2], [err[-1500:] for _, _, err in results]
    winner_err = next(e for c, _, e in results if c == 0)
    loser_err = next(e for c, _, e in results if c == 2)
    # The loser did no work and said why in one line, whichever moment it tried.
    assert len(loser_err.strip().splitlines()) == 1
    assert "another gemmreg run" in loser_err or "already holds a run" in loser_err
    assert f"run saved to {out}/" in winner_err
    data = json.loads((out / "run.json").read_text())
    assert [r["problem"]["m"] for r in data["reports"]] == [8, 16] and not data["partial"]
    assert (out / "report.txt").read_text().count("torch_ref") >= 2


def test_runs_without_out_each_get_their_own_folder(tmp_path):
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "gemmreg", *BENCH],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [(p.wait(timeout=300), *p.communicate()) for p in started]
    assert [code for code, _, _ in results] == [0, 0], [e[-1500:] for _, _, e in results]
    folders = sorted((tmp_path / "runs").iterdir())
    assert len(folders) == 2
    said = {line for _, _, err in results for line in err.splitlines() if "run saved to" in line}
    assert len(said) == 2  # each names its own folder
    for folder in folders:
        assert len(json.loads((folder / "run.json").read_text())["reports"]) == 2


def test_default_folders_made_in_one_second_are_all_different(tmp_path):
    made = [run_folder.default_folder(tmp_path, "bench") for _ in range(50)]
    assert len(set(made)) == 50 and all(folder.is_dir() for folder in made)
    assert all(folder.name.startswith("bench-") for folder in made)


def test_a_folder_that_holds_a_run_is_kept_unless_forced(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text("{}")
    (out / "report.md").write_text("someone's report")
    (out / "notes.txt").write_text("mine")
    (out / ".report.txt.k3j_x0q1").write_text("")  # a save killed midway left it
    with pytest.raises(UsageError, match=r"already holds a run \(run.json\).*--force"):
        run_folder.claim(out)
    assert (out / "report.md").read_text() == "someone's report"
    run_folder.claim(out, force=True)
    run_folder.release_all()
    # The old run's files are gone before the new run writes; the user's stay.
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert (out / "notes.txt").read_text() == "mine"


def test_a_run_into_a_folder_holding_a_run_exits_2_and_force_replaces_it(tmp_path):
    out = tmp_path / "run"
    first = run_gemmreg(*BENCH[:3], "8", *BENCH[4:], "--out", str(out))
    assert first.returncode == 0, first.stderr[-1500:]
    before = (out / "run.json").read_text()
    again = run_gemmreg(*BENCH, "--out", str(out))
    assert again.returncode == 2 and "already holds a run" in again.stderr
    assert "timing" not in again.stderr  # refused before any work
    assert (out / "run.json").read_text() == before
    forced = run_gemmreg(*BENCH, "--out", str(out), "--force")
    assert forced.returncode == 0, forced.stderr[-1500:]
    assert len(json.loads((out / "run.json").read_text())["reports"]) == 2


def test_the_probe_writes_real_bytes(tmp_path):
    """An empty probe passed on a full disk; this one is refused where a
    small run's file would not fit (a per-file size limit stands in for a
    full disk here: the kernel refuses the bytes either way)."""
    script = textwrap.dedent(
        f"""
        import resource, signal
        from pathlib import Path
        from gemmreg.contract.options import UsageError
        from gemmreg.reporting import run_folder
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            run_folder.claim(Path({str(tmp_path / "run")!r}))
        except UsageError as error:
            print(error)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert "cannot write there: File too large" in done.stdout, done.stderr[-1500:]
    assert list((tmp_path / "run").iterdir()) == []  # the probe is removed


CHECK = ("check", "torch_ref", "--dtype", "fp32", "--layout", "rowmajor")
"""A small real check: torch_ref's fp32 row-major cases."""

HELD_CHECK = textwrap.dedent(
    """
    import os, sys
    from gemmreg import cli
    from gemmreg.checking import check_runner

    real, held = check_runner.run_check, int(sys.argv[1])

    def run_check(*args, **kwargs):  # every case run, nothing saved yet: it waits here
        real(*args, **kwargs)
        os.write(held, b"held\\n")
        sys.stdin.read()

    check_runner.run_check = run_check
    sys.argv = ["gemmreg", *sys.argv[2:]]
    cli.run()
    """
)


def test_a_second_check_into_a_folder_a_live_check_holds_is_refused_and_loses_it_nothing(
    tmp_path,
):
    out = tmp_path / "evidence"
    read, write = os.pipe()
    first = subprocess.Popen(
        [sys.executable, "-c", HELD_CHECK, str(write), *CHECK, "--out", str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        pass_fds=(write,),
    )
    os.close(write)
    try:
        with os.fdopen(read) as held:
            assert held.readline() == "held\n", first.communicate(timeout=60)[1][-2000:]
        for extra in ((), ("--force",)):  # --force never takes a folder a live run holds
            second = run_gemmreg(*CHECK, "--out", str(out), *extra)
            assert second.returncode == 2, second.stderr[-2000:]
            assert second.stderr.strip().splitlines() == [
                f"gemmreg: error: --out '{out}' is being written by another gemmreg run; "
                "choose another folder"
            ]
            assert second.stdout == ""  # refused before any case ran
        assert not (out / "check.json").exists()
        stdout, stderr = first.communicate("", timeout=120)
    finally:
        first.kill()
        first.wait()
    assert first.returncode == 0, stderr[-2000:]
    assert f"evidence written to {out}/" in stderr
    # The first check's evidence is whole: every case it printed, not partial.
    saved = json.loads((out / "check.json").read_text())
    assert saved["partial"] is False and saved["counts"]["pass"] > 0
    assert f"{saved['counts']['pass']} pass, 0 fail" in stdout
    assert json.loads((out / "manifest.json").read_text())["level"] == "quick"


def test_a_check_into_a_folder_holding_a_run_exits_2_and_force_replaces_it(tmp_path):
    out = tmp_path / "evidence"
    first = run_gemmreg(*CHECK, "--seed", "1", "--out", str(out))
    assert first.returncode == 0, first.stderr[-1500:]
    (out / "sanitize-summary.txt").write_text("an older pass's summary")
    (out / "notes.txt").write_text("mine")
    before = (out / "check.json").read_text()
    again = run_gemmreg(*CHECK, "--seed", "2", "--out", str(out))
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        f"gemmreg: error: --out '{out}' already holds a run (check.json); choose another "
        "folder, or --force to replace it"
    ]
    assert again.stdout == ""  # refused before any case ran
    assert (out / "check.json").read_text() == before
    forced = run_gemmreg(*CHECK, "--seed", "2", "--out", str(out), "--force")
    assert forced.returncode == 0, forced.stderr[-1500:]
    seeds = {case["case"]["seed"] for case in json.loads((out / "check.json").read_text())["cases"]}
    assert 2 in seeds and 1 not in seeds  # the new check's cases, none of the old's
    # The old check's files went first (its sanitizer summary would be read
    # as this check's); the user's own stayed.
    assert sorted(p.name for p in out.iterdir()) == [
        "check.json",
        "check.md",
        "check.txt",
        "manifest.json",
        "notes.txt",
    ]


@pytest.mark.parametrize("held", ["run.json", "check.json"])
def test_a_folder_holding_either_kind_of_run_is_refused_to_both(tmp_path, held):
    """A check and a timing run both write ``manifest.json``: neither may
    write into the other's folder unless forced."""
    out = tmp_path / "run"
    out.mkdir()
    (out / held).write_text("{}")
    with pytest.raises(UsageError, match=rf"already holds a run \({held}\)"):
        run_folder.claim(out)
    assert (out / held).read_text() == "{}"
