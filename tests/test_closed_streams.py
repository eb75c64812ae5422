"""A reader of stdout or stderr that goes away (``2>&1 | head``) ends
neither the work nor changes the exit code (:mod:`gemmreg.commands.closed_streams`)."""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys

import pytest
from gemmreg.commands.closed_streams import DroppedWhenClosed


def _closed_pipe() -> io.TextIOWrapper:
    read, write = os.pipe()
    os.close(read)
    return io.TextIOWrapper(os.fdopen(write, "wb"), encoding="utf-8")


def test_writes_after_the_reader_went_away_are_dropped():
    stream = _closed_pipe()
    dropped = DroppedWhenClosed(stream)
    assert dropped.write("progress: 1/4 points\n") == len("progress: 1/4 points\n")
    dropped.flush()  # the pipe's EPIPE: dropped, not raised
    assert dropped.reader_gone
    dropped.write("progress: 2/4 points\n")
    dropped.flush()
    stream.close()  # its fd now writes to /dev/null: the last flush is quiet too


def test_other_write_errors_are_not_hidden():
    class Full(io.StringIO):
        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        DroppedWhenClosed(Full()).write("x")


def test_a_closed_stderr_does_not_cut_a_sweep_short(tmp_path):
    out = tmp_path / "run"
    bench = subprocess.Popen(
        [
            *(sys.executable, "-m", "gemmreg", "bench", "torch_ref", "minimal_triton"),
            *("--processes", "1", "--repeats", "2", "--shape", "16:64:16", "--out", str(out)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert bench.stderr is not None
    for _ in range(3):
        bench.stderr.readline()
    bench.stderr.close()  # as `head -3` does, with most of the sweep to come
    assert bench.wait(timeout=300) == 0
    run = json.loads((out / "run.json").read_text())
    assert run["partial"] is False and len(run["reports"]) == 4
    assert "stopped" not in run["manifest"]
