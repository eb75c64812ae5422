"""A saved run is read back as it was written, or refused in one line.

Its content checksum catches a hand edit the schema cannot see (one digit,
still valid JSON); a path that names a FIFO, a device or a socket is refused
without being opened for reading; a folder the user may not enter is one line
and exit 2 naming the path, not an internal error."""

from __future__ import annotations

import gzip
import json
import lzma
import os
import resource
import shutil
import socket
import stat
import subprocess
import sys
import tempfile

import pytest
from conftest import REPO
from gemmreg.contract.records import Problem
from gemmreg.reporting import check_files, checksums, runs
from gemmreg.timing.comparing import CompareReport, KernelSummary, ProcessRun

SAMPLES = '"round_ms": [\n            1.0,\n            1.5\n          ]'
"""How the writer lays out the one process's rounds below (indent 2, nested)."""
OUT_OF_REACH_S = 60
"""How long a ``report`` subprocess may take before the test calls it hung: a
run refused at once takes about a second; a FIFO read waits forever."""
MEMORY_CAP_BYTES = 4 << 30
"""The address space a ``report`` subprocess may take: reading ``/dev/zero``
whole (what the old reader did) fails there with MemoryError, instead of
taking the memory of a machine shared with other work."""


@pytest.fixture
def saved_run(tmp_path):
    """A small valid run directory, written by the real writer."""
    run = ProcessRun(kernel="k", process=0, status="timed", round_ms=(1.0, 1.5))
    summary = KernelSummary(
        kernel="k",
        package="p",
        precision="ieee_fp32",
        math="ieee_fp32",
        generator="g",
        status="timed",
        process_medians_ms=(1.25,),
        center_ms=1.25,
        low_ms=1.25,
        high_ms=1.25,
        tflops=0.001,
    )
    report = CompareReport(
        problem=Problem(m=8, n=8, k=8),
        processes=1,
        seed=1,
        clock="test",
        device_name="cpu",
        summaries=(summary,),
        verdicts=(),
        runs=(run,),
    )
    runs.write_run(tmp_path / "run", {"device_name": "cpu"}, [report], partial=False)
    return tmp_path / "run"


def _edit_one_digit(path):
    text = path.read_text()
    assert text.count(SAMPLES) == 1, "the writer's layout moved: find the samples again"
    path.write_text(text.replace(SAMPLES, SAMPLES.replace("1.5", "1.6")))


def test_a_run_with_one_digit_changed_is_refused_unless_accepted_as_edited(cli_offline, saved_run):
    fresh = cli_offline("report", str(saved_run))
    assert fresh.code == 0 and fresh.err == ""  # verified: nothing to say
    _edit_one_digit(saved_run / "run.json")
    assert json.loads((saved_run / "run.json").read_text())  # still valid JSON
    refused = cli_offline("report", str(saved_run))
    refused.assert_refused()
    assert "run.json: its content does not match its checksum" in refused.err
    accepted = cli_offline("report", str(saved_run), "--accept-edited")
    assert accepted.code == 0 and "1.25" in accepted.out
    assert accepted.err.splitlines() == [
        f"warning: {saved_run / 'run.json'}: content does not match its checksum; "
        "read anyway (--accept-edited)"
    ]
    copies = [shutil.copytree(saved_run, saved_run.with_name(f"copy{i}")) for i in (1, 2)]
    history = cli_offline("report", *map(str, copies), str(saved_run))
    history.assert_refused()  # a history reads its runs the same way
    assert "does not match its checksum" in history.err


def test_a_changed_checksum_is_an_edit_too(cli_offline, saved_run):
    data = json.loads((saved_run / "run.json").read_text())
    data[checksums.CHECKSUM_KEY] = data[checksums.CHECKSUM_KEY][::-1]
    (saved_run / "run.json").write_text(json.dumps(data))
    cli_offline("report", str(saved_run)).assert_refused()


def test_a_run_saved_before_checksums_reads_with_a_note(cli_offline, saved_run):
    data = json.loads((saved_run / "run.json").read_text())
    del data[checksums.CHECKSUM_KEY]
    (saved_run / "run.json").write_text(json.dumps(data, indent=2))
    shown = cli_offline("report", str(saved_run))
    assert shown.code == 0 and "1.25" in shown.out
    assert shown.err.splitlines() == [
        f"note: {saved_run / 'run.json'} carries no checksum (saved before checksums, or "
        "written by --format json): its content is not verified"
    ]


def test_the_checksum_holds_through_gzip_and_another_layout_but_not_an_edit(saved_run, tmp_path):
    notes: list[str] = []
    original = runs.load_run(saved_run, on_note=notes.append)
    data = json.loads((saved_run / "run.json").read_text())
    packed, laid_out = tmp_path / "packed", tmp_path / "laid-out"
    packed.mkdir(), laid_out.mkdir()
    (packed / "run.json.gz").write_bytes(gzip.compress((saved_run / "run.json").read_bytes()))
    (laid_out / "run.json").write_text(json.dumps(data, indent=None, sort_keys=True))
    assert runs.load_run(packed, on_note=notes.append) == original
    assert runs.load_run(laid_out, on_note=notes.append) == original
    assert notes == []  # each verified: no note
    _edit_one_digit(saved_run / "run.json")
    (packed / "run.json.gz").write_bytes(gzip.compress((saved_run / "run.json").read_bytes()))
    with pytest.raises(runs.RunError, match="does not match its checksum"):
        runs.load_run(packed)


def test_every_run_kept_as_evidence_is_read_verified_or_noted_as_older():
    evidence = REPO / "evidence"
    recorded = sorted({p.parent for p in [*evidence.glob("**/run.json*")]})
    assert len(recorded) >= 50
    for folder in recorded:
        notes: list[str] = []
        runs.load_run(folder, on_note=notes.append)
        assert all("saved before checksums" in n for n in notes), (folder, notes)


def test_a_saved_check_is_verified_and_an_older_one_still_reads(tmp_path):
    older = REPO / "evidence" / "2026-11-30-h200-check" / "check.json"
    text = older.read_text()
    assert checksums.CHECKSUM_KEY not in json.loads(text)  # saved before checksums
    results, _ = check_files.load_check(older)
    check_files.write_check(tmp_path, {}, {check_files.CHECK_FILE: text})
    saved = tmp_path / check_files.CHECK_FILE
    assert checksums.CHECKSUM_KEY in json.loads(saved.read_text())
    assert check_files.load_check(tmp_path)[0] == results
    data = json.loads(saved.read_text())
    data["cases"][0]["kernel"] += "x"
    saved.write_text(json.dumps(data))
    with pytest.raises(check_files.CheckFileError, match="does not match its checksum"):
        check_files.load_check(tmp_path)
    assert check_files.load_check(tmp_path, verify=False)[0][0].kernel.endswith("x")


def test_a_special_file_as_a_saved_check_is_refused_unread(tmp_path):
    os.mkfifo(tmp_path / check_files.CHECK_FILE)
    reader = (
        "import sys, pathlib; from gemmreg.reporting import check_files; "
        "check_files.load_check(pathlib.Path(sys.argv[1]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", reader, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=OUT_OF_REACH_S,
    )
    assert done.stderr.splitlines()[-1] == (
        f"gemmreg.reporting.check_files.CheckFileError: {tmp_path / check_files.CHECK_FILE} "
        "is a named pipe (FIFO), not a regular file: refused unread"
    )


def _report_in_a_subprocess(run, *options, user=()):
    """``gemmreg report RUN`` in a fresh process, capped in time and memory,
    so that a reader that hangs or reads without end fails the test instead
    of holding up the suite or the machine."""

    def cap_memory():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP_BYTES, MEMORY_CAP_BYTES))

    return subprocess.run(
        [*user, sys.executable, "-m", "gemmreg", "report", str(run), *options],
        capture_output=True,
        text=True,
        timeout=OUT_OF_REACH_S,
        preexec_fn=cap_memory,
    )


def _fifo(path):
    os.mkfifo(path)


def _dev_zero(path):
    path.symlink_to("/dev/zero")


def _socket(path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (_fifo, "is a named pipe (FIFO), not a regular file"),
        (_dev_zero, "is a character device, not a regular file"),
        (_socket, "is a socket, not a regular file"),
    ],
)
@pytest.mark.parametrize("name", ["run.json", "run.json.gz", "run.json.xz"])
def test_a_special_file_as_the_run_is_refused_unread(tmp_path, make, kind, name):
    (tmp_path / "run").mkdir()
    make(tmp_path / "run" / name)
    done = _report_in_a_subprocess(tmp_path / "run")
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"gemmreg: error: {tmp_path / 'run' / name} {kind}: refused unread\n"


def test_a_run_larger_than_any_saved_file_is_refused_unread(tmp_path, monkeypatch):
    from gemmreg.contract import saved_files

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{}" + " " * 100)
    monkeypatch.setattr(saved_files, "MAX_SAVED_BYTES", 64)
    with pytest.raises(runs.RunError, match="holds more than 64 bytes"):
        runs.load_run(tmp_path / "run")
    (tmp_path / "run" / "run.json").unlink()
    (tmp_path / "run" / "run.json.gz").write_bytes(gzip.compress(b"{}" + b" " * 100))
    with pytest.raises(runs.RunError, match="unpacks to more than 64 bytes"):
        runs.load_run(tmp_path / "run")
    (tmp_path / "run" / "run.json.gz").unlink()
    (tmp_path / "run" / "run.json.xz").write_bytes(lzma.compress(b"{}" + b" " * 1000))
    monkeypatch.setattr(saved_files, "MAX_SAVED_BYTES", 100)  # xz packs these 1002 bytes in 80
    with pytest.raises(runs.RunError, match=r"run\.json\.xz unpacks to more than 100 bytes"):
        runs.load_run(tmp_path / "run")


def test_a_symlink_loop_stays_one_line(cli_offline, tmp_path):
    """Already refused before special files were: kept."""
    (tmp_path / "loop").mkdir()
    (tmp_path / "loop" / "run.json").symlink_to("run.json")
    outcome = cli_offline("report", str(tmp_path / "loop"))
    outcome.assert_refused()
    assert "run.json: Too many levels of symbolic links" in outcome.err


def test_a_folder_that_may_not_be_entered_is_one_line_naming_the_path(
    cli_offline, saved_run, monkeypatch
):
    """What the kernel does for a user without search permission on the
    folder (root is never refused, and the suite may run as root): every
    stat of a path inside it fails with EACCES."""
    real_stat = os.stat

    def stat_refused_inside(path, *args, **kwargs):
        if os.path.dirname(os.fspath(path)) == str(saved_run):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat_refused_inside)
    outcome = cli_offline("report", str(saved_run))
    outcome.assert_refused()
    assert (
        outcome.err == f"gemmreg: error: cannot read {saved_run / 'run.json'}: Permission denied\n"
    )


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv, to run report as a user the folder refuses",
)
def test_a_folder_another_user_may_not_enter_is_one_line_for_them(saved_run):
    """The same as the real kernel refuses it: report run as ``nobody``."""
    with tempfile.TemporaryDirectory(dir="/tmp") as place:
        os.chmod(place, 0o755)  # nobody may reach the folder, not enter it
        locked = shutil.copytree(saved_run, os.path.join(place, "locked"))
        os.chmod(locked, 0)
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        done = _report_in_a_subprocess(locked, user=nobody)
        os.chmod(locked, stat.S_IRWXU)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"gemmreg: error: cannot read {locked}/run.json: Permission denied\n"


def _resealed(path, edit):
    """``path``'s run.json with ``edit`` applied to its parsed content and a
    checksum written again, as gemmreg's writer makes one: only what the
    records say is judged, not the seal."""
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(checksums.sealed(json.dumps(data)))


def _with_verdict(kernel, baseline):
    return {
        "baseline": baseline,
        "kernel": kernel,
        "verdict": "faster",
        "speedup": 2.0,
        "interval": [1.9, 2.1],
        "explanation": "",
    }


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda d: d["reports"][0].update(weight=0.0), "weight must be above 0"),
        (lambda d: d["reports"][0].update(weight=-1.0), "weight must be above 0"),
        (lambda d: d["reports"][0].update(weight=1e308), "weight must be above 0"),
        (lambda d: d["reports"][0].update(processes=0), "processes must be at least 1"),
        (lambda d: d["reports"][0].update(seed=10**400), "out of range"),
        (lambda d: d["reports"].append(d["reports"][0]), "the point appears twice"),
        (
            lambda d: d["reports"][0].update(verdicts=[_with_verdict("ghost", "k")]),
            "names 'ghost', which the point has no summary of",
        ),
    ],
    ids=["weight-0", "weight-negative", "weight-huge", "no-process", "huge-int", "twice", "ghost"],
)
def test_a_run_whose_records_disagree_is_refused_in_one_line(cli_offline, saved_run, edit, said):
    """Records that fit the schema one by one but no run gemmreg saved: each
    would print a table and a mean that look like results (a zero weight
    divided by zero under it, a negative one turned the mean inside out, a
    point twice counted twice, a verdict on a kernel never timed)."""
    _resealed(saved_run / "run.json", edit)
    refused = cli_offline("report", str(saved_run))
    refused.assert_refused()
    assert said in refused.err and refused.out == ""


def test_a_refusal_after_a_run_without_checksum_is_still_one_line(cli_offline, saved_run):
    """The note that a run is unverified is said once every run reads: a
    refusal of the next run is the only line, as in every refusal."""
    old = shutil.copytree(saved_run, saved_run.with_name("old"))
    data = json.loads((old / "run.json").read_text())
    del data[checksums.CHECKSUM_KEY]
    (old / "run.json").write_text(json.dumps(data))
    broken = shutil.copytree(saved_run, saved_run.with_name("broken"))
    (broken / "run.json").write_text("{")
    for runs_given in ([old, broken], [old, saved_run, broken]):
        refused = cli_offline("report", *map(str, runs_given))
        refused.assert_refused()
        assert "broken" in refused.err
