"""Shared fixtures. Tests run on the CPU: GEMMREG_DEVICE=cpu keeps a GPU host
on that path, and Triton's interpreter is switched on here, before any test
module imports a plugin (importing gemmreg no longer does it: see
:mod:`gemmreg.contract.backend`)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIRST_PROTOCOL_SWEEP = REPO / "tests" / "fixtures" / "saved_runs" / "h200-first-protocol-sweep"
"""A real H200 bench run saved in gemmreg's first format (no per-process
records, no weights): what an older saved run looks like when read back."""

os.environ.setdefault("GEMMREG_DEVICE", "cpu")
from gemmreg.contract.backend import settle_interpreter_early  # noqa: E402

settle_interpreter_early()

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # A suite started as a background job of a non-interactive shell (`scripts/test.sh &`)
    # inherits SIGINT ignored, and the gemmreg processes it starts would keep it ignored,
    # as Python does for an ignored SIGINT (rightly: so does gemmreg). The tests that
    # interrupt them send SIGINT as a terminal's Ctrl-C does, to a process that heeds it.
    signal.signal(signal.SIGINT, signal.default_int_handler)

HANG_LIMIT_S = 4
"""The task limit where a fake kernel hangs on purpose and the test waits it out.
What must finish within it is a tiny task (a small check case, a cold start,
the calls before a hang, five rounds of a 32x32x32 torch.mm: all of them
pass with a 0.5 s limit here), so the margin is still eightfold and more on a
loaded machine; the limits of 8-10 s used before cost half a minute of waiting."""

BUILT_INS = (
    "hip_naive",
    "hip_tiled",
    "hip_regtiled",
    "triton_baseline",
    "triton_grouped",
    "triton_tuned",
    "torch_ref",
    "torch_ref_tf32",
    "torch_ref_fp8",
    "torch_ref_int8",
)
"""The plugins gemmreg ships: one list, so adding a built-in is one edit here."""


@pytest.fixture
def fake_plugins(monkeypatch: pytest.MonkeyPatch):
    """Make tests/fake_plugins importable here and in worker processes, and
    return a function that loads the named fake plugin modules."""
    path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("PYTHONPATH", path)
    monkeypatch.syspath_prepend(str(TESTS))

    def use(*modules: str) -> None:
        monkeypatch.setenv("GEMMREG_EXTRA_PLUGINS", ",".join(f"fake_plugins.{m}" for m in modules))

    return use


@pytest.fixture
def cli_offline(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path):
    """``cli_offline(*argv)``: main() run in tmp_path with all work forbidden
    (:mod:`offline_cli`), for the refusals that must come before any work."""
    from offline_cli import forbid_work, run_main

    monkeypatch.chdir(tmp_path)
    forbid_work(monkeypatch)
    return lambda *argv: run_main(argv, capsys)


FAKE_PROFILER_DIR = TESTS / "fake_profiler"
"""Stand-ins for Nsight's ``ncu`` (tests/fake_profiler/ncu), found first on PATH."""


def load_script(name: str) -> Any:
    """``scripts/NAME.py`` imported as a module (scripts are not a package),
    registered in ``sys.modules`` so that its dataclasses and pickling work.
    ``scripts/`` goes on ``sys.path`` as Python puts it for a script it runs,
    so a script's imports of the scripts beside it resolve here too."""
    import importlib.util

    if str(REPO / "scripts") not in sys.path:
        sys.path.insert(0, str(REPO / "scripts"))

    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def fake_ncu_env(calls: Path | None = None) -> dict[str, str]:
    """PATH with the stand-in ``ncu`` first, and where it records its calls."""
    env = {"PATH": f"{FAKE_PROFILER_DIR}{os.pathsep}{os.environ['PATH']}"}
    if calls is not None:
        env["GEMMREG_FAKE_NCU_CALLS"] = str(calls)
    return env


def run_gemmreg(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300, hangup: bool = False
):
    """Run the real command line in a fresh process, as a user would.
    ``hangup``: with SIGHUP at its default, as typed at a terminal, for a
    test that sends it (a test run under nohup would pass it on ignored)."""
    return subprocess.run(
        [sys.executable, "-m", "gemmreg", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        preexec_fn=_default_hangup if hangup else None,
    )


def _default_hangup() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


@contextlib.contextmanager
def only_extra_plugins(modules: Sequence[str]) -> Iterator[None]:
    """For module-scoped fixtures: load just these throwaway plugin modules (no
    entry points), here and in the worker processes the core starts."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(
            "PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
        )
        mp.syspath_prepend(str(TESTS))
        mp.setenv("GEMMREG_EXTRA_PLUGINS", ",".join(modules))
        mp.setenv("GEMMREG_PLUGINS", "none")
        yield


def fake_worker_task(action: str):
    """A task for tests/fake_plugins/fake_worker.py: ``ok``, ``retire`` (after
    an error, as on a poisoned GPU context), ``exit`` (mid-task) or ``hang``."""
    from gemmreg.contract.records import Problem
    from gemmreg.workers.tasks import ValuesTask

    return ValuesTask(kernel=action, problem=Problem(m=1, n=1, k=1), seed=0)


def check_in_one_worker(kernels, cases, task_timeout: float | None = None):
    """``checking.run_check``'s results, with every kernel's cases in one worker.

    run_check starts a worker per kernel (seconds each, importing torch); the
    verdicts come from the same tasks, run the same way, whichever worker runs
    them. For tests of what the verdicts say about a set of kernels; how
    run_check spends workers (one per kernel, a crash or hang costing only its
    own kernel) is test_check_guards.py's. A crash still costs only its case:
    the runner starts a fresh worker for the rest."""
    from gemmreg.checking import check_runner
    from gemmreg.workers import isolation

    planned = []
    skipped = []
    for kernel in kernels:
        not_run, runnable = check_runner.plan(kernel, cases, False)
        skipped += not_run
        planned += [(kernel.name, kind, case) for kind, case in runnable]
    outcomes = isolation.run_tasks(
        [check_runner.task_for(*task) for task in planned],
        task_timeout=check_runner.task_limits([t[1:] for t in planned], False, task_timeout),
        skip_after_timeout=True,
    )
    return skipped + [
        check_runner.result_from_outcome(name, kind, case, outcome)
        for (name, kind, case), outcome in zip(planned, outcomes, strict=True)
    ]
