"""``gemmreg report DIR`` on a saved check (``check --out DIR``): the cases
again, exactly as ``check`` printed them; a timing run's options refused in
one line; an edited check refused unless ``--accept-edited`` asks."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest
from conftest import REPO, run_gemmreg
from offline_cli import run_main


@pytest.fixture(scope="module")
def saved_check(tmp_path_factory):
    """``gemmreg check torch_ref --dtype fp32 --out DIR`` and what it printed."""
    out = tmp_path_factory.mktemp("saved") / "check"
    done = run_gemmreg("check", "torch_ref", "--dtype", "fp32", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    return out, done.stdout


def test_report_prints_a_saved_check_as_check_printed_it(saved_check, capsys):
    out, printed = saved_check
    done = run_main(["report", str(out)], capsys)
    assert done.code == 0, done.err
    assert done.out == printed
    assert "pass, 0 fail" in done.out


def test_report_of_a_saved_check_writes_its_document_formats(saved_check, capsys):
    out, _ = saved_check
    document = json.loads(run_main(["report", str(out), "--format", "json"], capsys).out)
    saved = json.loads((out / "check.json").read_text())
    assert document["kind"] == "gemmreg.check"
    assert document["counts"] == saved["counts"] and len(document["cases"]) == len(saved["cases"])


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--verdicts"], "--verdicts reads a run's timings"),
        (["--kernels", "--margin", "2"], "--kernels and --margin read a run's timings"),
        (["--threshold", "5"], "--threshold reads a run's timings"),
        (["--threshold", "0"], "--threshold reads a run's timings"),
        (["--sweep-wide"], "--sweep-wide reads a run's timings"),
        (["--fail-on", "slower"], "--fail-on reads a run's timings"),
    ],
)
def test_a_timing_runs_options_are_refused_for_a_saved_check(saved_check, capsys, extra, words):
    out, _ = saved_check
    done = run_main(["report", str(out), *extra], capsys)
    done.assert_refused()
    assert "is a saved check, not a timing run" in done.err and words in done.err


def test_a_saved_check_beside_other_runs_is_refused(saved_check, capsys):
    out, _ = saved_check
    done = run_main(["report", str(out), str(out)], capsys)
    done.assert_refused()
    assert "one check at a time" in done.err


def test_an_edited_check_is_refused_unless_accept_edited(saved_check, tmp_path, capsys):
    out, printed = saved_check
    edited = tmp_path / "edited"
    shutil.copytree(out, edited)
    data = json.loads((edited / "check.json").read_text())
    data["counts"]["pass"] += 1  # the checksum no longer covers the content
    (edited / "check.json").write_text(json.dumps(data))
    refused = run_main(["report", str(edited)], capsys)
    refused.assert_refused()
    assert "does not match its checksum" in refused.err and "--accept-edited" in refused.err
    read = run_main(["report", str(edited), "--accept-edited"], capsys)
    assert read.code == 0 and read.out == printed
    assert "warning" in read.err and "does not match its checksum" in read.err


def test_a_committed_gzipped_check_renders_with_its_counts():
    """Evidence keeps checks gzipped (``check.json.gz``): report reads them."""
    folder = REPO / "evidence" / "2026-12-02-h200-device-processes" / "c1" / "check-gluon"
    assert not (folder / "check.json").exists()
    counts = json.loads(gzip.decompress((folder / "check.json.gz").read_bytes()))["counts"]
    done = run_gemmreg("report", str(folder))
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{counts['pass']} pass, {counts['fail']} fail" in done.stdout
