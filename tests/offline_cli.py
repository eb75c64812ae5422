"""The command line called in-process, with every way of starting work made to
fail the test: bad input must be refused before any of it begins."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest
from gemmreg import cli
from gemmreg.checking import check_runner, check_shards, sanitizer_pass
from gemmreg.fanout import ray_check, ray_sweep, sharded_sweep
from gemmreg.instruments import environment
from gemmreg.reporting import plots
from gemmreg.timing import comparing, worker_pool
from gemmreg.workers import isolation

WORK = (
    (isolation, "run_tasks"),
    (check_runner, "run_check"),
    (check_shards, "check_on_devices"),
    (ray_check, "check_on_ray"),
    (sharded_sweep, "sweep_on_devices"),
    (ray_sweep, "sweep_on_ray"),
    (comparing, "run_compare"),
    (sanitizer_pass, "run_pass"),
    (environment, "manifest"),
    (plots, "write_plots"),
    (worker_pool, "start_ahead"),
)
"""Every entry to worker processes, timing, environment probing and plotting."""


class WorkStarted(BaseException):
    """Raised where work would start. A BaseException, so that the CLI's own
    handlers (which turn Exceptions into exit 3) cannot hide it."""


def forbid_work(monkeypatch: pytest.MonkeyPatch) -> None:
    # Workers started ahead are speculative by design (test_start_ahead.py):
    # here no worker may start at all.
    monkeypatch.setenv(worker_pool.START_AHEAD_ENV, "0")
    for module, name in WORK:

        def refuse(*args: object, _name: str = name, **kwargs: object) -> None:
            raise WorkStarted(_name)

        monkeypatch.setattr(module, name, refuse)


class Handed(BaseException):
    """Raised in place of a command's work, which the request reached (a
    BaseException, so that the command line's catch of errors lets it by)."""


def hand_over(monkeypatch: pytest.MonkeyPatch, *commands: tuple[object, str]) -> list[object]:
    """Each ``(module, name)`` command's work replaced by one that keeps the
    request it is handed and raises :class:`Handed`: the list of requests, in
    the order they came, to hold the command line and the API to one request."""
    handed: list[object] = []

    def work(request: object, progress: object, launch: object) -> None:
        handed.append(request)
        raise Handed

    for module, name in commands:
        monkeypatch.setattr(module, name, work)
    return handed


@attrs.frozen
class Outcome:
    code: int
    out: str
    err: str

    def assert_refused(self) -> None:
        """Exit 2, exactly one line on stderr, nothing on stdout, no traceback."""
        lines = self.err.splitlines()
        assert self.code == cli.EXIT_USAGE, (self.code, self.err)
        assert len(lines) == 1 and lines[0].startswith("gemmreg: error: "), self.err
        assert "Traceback" not in self.err
        assert self.out == ""


def run_main(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> Outcome:
    capsys.readouterr()
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return Outcome(code=code, out=captured.out, err=captured.err)


def without_sweep_command(text: str) -> list[str]:
    """A report's lines but the one under its means that names the command
    judging the sweep at one level (``verdicts: ...``): that line names the
    runs read, which differ between a whole sweep and its parts."""
    return [x for x in text.splitlines() if not x.startswith("verdicts: ")]
