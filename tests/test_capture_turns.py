"""Captures of plugin output take turns across threads.

Under ``--devices`` a thread per GPU runs plugin code (a capability
constraint) inside :func:`gemmreg.discovery.capture.captured_output`, which
points the process's descriptors 1 and 2 at a sink. Two such captures at once
each restored the other's sink: CI caught ``bench --devices all`` whose
output after that point went nowhere ("progress: 4/4" and "run saved to"
missing, the run itself complete). These tests hold one capture open in a
thread and start another thread's capture, or a progress line, meanwhile.

They wait on events, with timeouts only as a bound: with the turns in place
the outcome is the same however slow the machine is.
"""

from __future__ import annotations

import io
import os
import threading

from gemmreg.discovery import capture
from gemmreg.reporting.progress import Meter

BOUND_S = 30.0
"""How long a step may wait for another thread: never reached when it works."""
OVERLAP_S = 0.5
"""How long the first capture waits for the second to get inside it: with the
turns it never does, so this only bounds the wait (without them it would)."""


def _identity(fd: int) -> tuple[int, int]:
    stat = os.fstat(fd)
    return stat.st_dev, stat.st_ino


def test_two_threads_capturing_at_once_leave_the_descriptors_as_they_were():
    before = {fd: _identity(fd) for fd in (1, 2)}
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    order: list[str] = []
    texts: dict[str, str] = {}

    def first() -> None:
        with capture.captured_output() as got:
            order.append("first in")
            os.write(2, b"first's noise\n")
            first_in.set()
            second_in.wait(OVERLAP_S)  # set only if captures overlap
            order.append("first out")
        texts["first"] = got.text
        first_out.set()

    def second() -> None:
        assert first_in.wait(BOUND_S)
        with capture.captured_output() as got:
            second_in.set()
            order.append("second in")
            os.write(2, b"second's noise\n")
            first_out.wait(BOUND_S)
        texts["second"] = got.text

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(BOUND_S)
    assert order == ["first in", "first out", "second in"]
    assert {fd: _identity(fd) for fd in (1, 2)} == before
    assert texts == {"first": "first's noise\n", "second": "second's noise\n"}


def test_a_progress_line_from_another_thread_waits_for_the_capture_to_end(capfd):
    inside, release = threading.Event(), threading.Event()
    captured: list[str] = []

    def plugin_code() -> None:
        with capture.captured_output() as got:
            print("plugin noise", flush=True)
            inside.set()
            release.wait(BOUND_S)
        captured.append(got.text)

    meter = Meter([1.0], "points", stream=_Stderr(), live=False)
    holder = threading.Thread(target=plugin_code)
    holder.start()
    assert inside.wait(BOUND_S)
    printer = threading.Thread(target=meter.line, args=("gemmreg's own line",))
    printer.start()
    printer.join(OVERLAP_S)  # with the turns it is still waiting here
    release.set()
    holder.join(BOUND_S)
    printer.join(BOUND_S)
    out, err = capfd.readouterr()
    assert "gemmreg's own line" in err
    assert captured == ["plugin noise\n"]
    assert "plugin noise" not in out + err


def test_a_capture_inside_a_capture_nests_in_one_thread():
    before = {fd: _identity(fd) for fd in (1, 2)}
    with capture.captured_output() as outer:
        os.write(1, b"outer\n")
        with capture.captured_output() as inner:
            os.write(1, b"inner\n")
        with capture.own_output():  # the same thread may print its own lines
            pass
    assert (outer.text, inner.text) == ("outer\n", "inner\n")
    assert {fd: _identity(fd) for fd in (1, 2)} == before


class _Stderr(io.TextIOBase):
    """Writes to descriptor 2 as the process's own stderr does (a Meter keeps
    its stream: pytest's stand-in for ``sys.stderr`` would not show where
    descriptor 2 pointed when the line was written)."""

    def write(self, text: str) -> int:
        return os.write(2, text.encode())
