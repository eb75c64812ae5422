"""Hostile plugins: nothing escapes, nothing leaks, nothing hangs for hours.

Each fault is a throwaway plugin in tests/fake_plugins; each test asserts what
gemmreg makes of it. No test depends on timing: waits are bounded polls with
generous limits, and hangs are a sleep of an hour cut short by a timeout.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import attrs
import pytest
import torch
from conftest import TESTS, fake_worker_task, only_extra_plugins, run_gemmreg
from gemmreg.checking import check_runner
from gemmreg.checking.matrix import Case
from gemmreg.contract.options import MAX_TIMEOUT_S, UsageError
from gemmreg.contract.records import Problem
from gemmreg.discovery import interrupts, load_guard, state_changes, torch_state
from gemmreg.discovery.loading import describe
from gemmreg.discovery.registry import PluginNotLoadedError, discover
from gemmreg.workers import isolation, timeouts
from offline_cli import forbid_work, run_main

TINY = Problem(m=5, n=6, k=7)


@attrs.frozen
class FakeEntryPoint:
    """An installed entry point as discovery sees it, with the package it came from."""

    name: str
    value: str
    dist: SimpleNamespace | None = None

    def load(self):
        return importlib.import_module(self.value)


def entry_point(name: str, module: str, package: str = "") -> FakeEntryPoint:
    dist = SimpleNamespace(metadata={"Name": package}, version="1.0") if package else None
    return FakeEntryPoint(name=name, value=f"fake_plugins.{module}", dist=dist)


def plugin_env(*modules: str, **extra: str) -> dict[str, str]:
    """The environment for a gemmreg process that loads just these fake plugins."""
    return {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
        "GEMMREG_PLUGINS": "none",
        "GEMMREG_EXTRA_PLUGINS": ",".join(f"fake_plugins.{m}" for m in modules),
        **extra,
    }


# ---------------------------------------------------------------------------
# 1. Discovery contains BaseException; a real Ctrl-C still interrupts
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "stage", "words"),
    [
        ("exits_at_import", "import", "SystemExit(0): plugin code called sys.exit"),
        ("exits_at_register", "register", "SystemExit(0): plugin code called sys.exit"),
        ("interrupts_at_register", "register", "KeyboardInterrupt: raised by plugin code"),
        ("generator_exit_at_import", "import", "GeneratorExit(closed at import)"),
    ],
)
def test_exits_and_interrupts_raised_by_a_plugin_are_its_broken_row(
    fake_plugins, module, stage, words
):
    registry = discover(
        env={}, entry_points=[entry_point(module, module), entry_point("g", "good")]
    )
    assert set(registry.kernels) == {"fake_good"}
    (issue,) = registry.issues
    assert (issue.origin.plugin, issue.stage) == (module, stage)
    assert words in issue.reason


def test_a_real_ctrl_c_during_discovery_still_interrupts(fake_plugins):
    with pytest.raises(KeyboardInterrupt):
        discover(env={}, entry_points=[entry_point("sigint", "sigint_at_import")])
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


LOUD = ("exits_at_register", "exits_hard_at_import", "exits_hard_at_register", "prints")
"""Plugins that exit or print while loading, each asserted on in its own test
below; ``list`` and ``check`` run once with all of them (and two well-behaved
ones) loaded, since each command is a process that imports torch."""


@pytest.fixture(scope="module")
def listed():
    """``gemmreg list --format json`` with the loud plugins: the result and its rows."""
    done = run_gemmreg("list", "--format", "json", env=plugin_env(*LOUD, "good", "gpu_poison"))
    assert done.returncode == 0, done.stderr[-2000:]
    return done, {row["name"]: row for row in json.loads(done.stdout)["plugins"]}


@pytest.fixture(scope="module")
def checked():
    """``gemmreg check`` on two GPU-only kernels (every case skipped, so no worker)
    with the loud plugins loaded: the result and its cases."""
    args = ("check", "fake_gpu_poison", "fake_prints_gpu", "--dtype", "fp32", "--format", "json")
    done = run_gemmreg(*args, env=plugin_env(*LOUD, "good", "gpu_poison"))
    return done, json.loads(done.stdout)["cases"]


def test_a_plugin_calling_sys_exit_cannot_silence_list_or_check(listed, checked):
    _, rows = listed
    assert rows["fake_plugins.exits_at_register"]["unavailable_reason"].startswith(
        "register: SystemExit(0)"
    )
    assert rows["fake_good"]["available"] is True
    done, cases = checked
    poison = [c for c in cases if c["kernel"] == "fake_gpu_poison"]
    assert poison and all(c["status"] == "skip" for c in poison)
    assert "not loaded: register: SystemExit(0)" in done.stderr


def test_a_plugin_calling_os_exit_while_loading_is_its_broken_row(listed):
    _, rows = listed
    assert rows["fake_good"]["available"] is True
    reasons = {name: row["unavailable_reason"] for name, row in rows.items()}
    assert reasons["fake_plugins.exits_hard_at_import"] == (
        "import: plugin 'fake_plugins.exits_hard_at_import' called os._exit(3) while loading"
    )
    assert reasons["fake_plugins.exits_hard_at_register"] == (
        "register: plugin 'fake_plugins.exits_hard_at_register' called os._exit(4) while "
        "loading (no kernel from this plugin was registered)"
    )


def test_os_exit_is_contained_only_while_plugin_code_runs():
    real = os._exit
    with load_guard.guarded("p", None), pytest.raises(load_guard.ExitCalled) as raised:
        os._exit(5)
    assert os._exit is real
    assert describe(raised.value) == "plugin 'p' called os._exit(5) while loading"
    with pytest.raises(RuntimeError), load_guard.guarded("p", 3600.0):
        raise RuntimeError("the watchdog is cancelled, os._exit put back, however it ends")
    assert os._exit is real


def test_a_plugin_that_hangs_while_loading_ends_gemmreg_with_one_line():
    """No worker exists yet at discovery: gemmreg's own exit leaves nothing behind."""
    env = plugin_env("good", "hangs_at_import", GEMMREG_LOAD_TIMEOUT_S="5")
    done = run_gemmreg("check", "fake_good", env=env, timeout=WAIT_S)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "gemmreg: plugin 'fake_plugins.hangs_at_import' did not finish loading within 5 s"
    ]
    assert done.stdout == ""


@pytest.mark.parametrize("value", ["0", "-3", "nan", "soon", "1e10", "1_0", "\u0661\u0660"])
def test_a_load_timeout_that_is_not_a_bounded_decimal_is_refused(value):
    """Past a day it is a typo (and past ``threading.TIMEOUT_MAX`` the watchdog
    thread would die on it, switching the watchdog off); ``1_0`` and Arabic-Indic
    digits are numbers to Python's ``float``, not to a user."""
    with pytest.raises(UsageError, match="GEMMREG_LOAD_TIMEOUT_S must be a number of seconds"):
        load_guard.load_timeout({"GEMMREG_LOAD_TIMEOUT_S": value})
    assert load_guard.load_timeout({}) == load_guard.LOAD_TIMEOUT_S
    assert load_guard.load_timeout({"GEMMREG_LOAD_TIMEOUT_S": " 2.5 "}) == 2.5


# ---------------------------------------------------------------------------
# 2. A kernel name claimed twice is never settled by load order
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("reverse", [False, True])
def test_a_built_in_name_cannot_be_taken_whatever_the_order(fake_plugins, reverse):
    (real,) = importlib.metadata.entry_points(group="gemmreg", name="torch_ref")
    impostor = entry_point("aaa_impostor", "duplicate", package="impostor-kernels")
    order = [impostor, real][:: -1 if reverse else 1]
    registry = discover(env={}, entry_points=order)
    assert registry.get("torch_ref").origin.distribution == "gemmreg"
    (issue,) = registry.issues
    assert (issue.origin.plugin, issue.stage, issue.kernel) == (
        "aaa_impostor",
        "duplicate",
        "torch_ref",
    )
    assert "gemmreg's built-in plugin 'torch_ref' (gemmreg 0.1.0)" in issue.reason
    assert "refused from plugin 'aaa_impostor' (impostor-kernels 1.0)" in issue.reason


@pytest.mark.parametrize("reverse", [False, True])
def test_two_packages_claiming_one_name_are_both_refused(fake_plugins, reverse):
    points = [
        entry_point("clash_a", "clash_a", "pkg-a"),
        entry_point("clash_b", "clash_b", "pkg-b"),
    ]
    registry = discover(env={}, entry_points=points[:: -1 if reverse else 1])
    assert "fake_clash" not in registry.kernels
    reasons = {i.origin.plugin: i.reason for i in registry.issues if i.kernel == "fake_clash"}
    assert set(reasons) == {"clash_a", "clash_b"}
    for reason in reasons.values():
        assert "pkg-a 1.0" in reason and "pkg-b 1.0" in reason
    assert "GEMMREG_BLOCK_PLUGINS=clash_b" in reasons["clash_a"]
    assert "GEMMREG_BLOCK_PLUGINS=clash_a" in reasons["clash_b"]
    picked = discover(env={"GEMMREG_BLOCK_PLUGINS": "clash_b"}, entry_points=points)
    assert picked.get("fake_clash").origin.plugin == "clash_a"


# ---------------------------------------------------------------------------
# 7 (issue item 11). The message blames the plugin that failed, not a typo
# ---------------------------------------------------------------------------


def test_naming_a_plugin_that_failed_to_load_says_so(fake_plugins):
    registry = discover(env={}, entry_points=[entry_point("broken_import", "broken_import")])
    with pytest.raises(
        PluginNotLoadedError, match="plugin 'broken_import' failed to load: import: "
    ):
        registry.select(["broken_import"])


def test_check_on_a_refused_name_is_one_line_blaming_the_clash(monkeypatch, capsys):
    """In this process, with all work forbidden (a fresh one is a torch import;
    the commands above and below run as processes): refused before any work."""
    for name, value in plugin_env("clash_a", "clash_b").items():
        monkeypatch.setenv(name, value)
    monkeypatch.syspath_prepend(str(TESTS))
    forbid_work(monkeypatch)
    done = run_main(["check", "fake_clash"], capsys)
    done.assert_refused()  # exit 2, one line on stderr, nothing on stdout
    (line,) = done.err.strip().splitlines()
    assert line.startswith("gemmreg: error: plugin 'fake_clash' failed to load: duplicate: ")
    assert "GEMMREG_BLOCK_PLUGINS" in line


# ---------------------------------------------------------------------------
# 3. Global torch state: pinned for every task, changes blamed on their plugin
# ---------------------------------------------------------------------------


def test_pin_and_changes_name_each_switch_in_words():
    pinned = torch_state.pin()
    try:
        assert pinned.default_dtype == "torch.float32"
        assert pinned.float32_matmul_precision == "highest"
        assert pinned.matmul_allow_tf32 is False
        assert state_changes.changes(pinned) == []
        torch.set_default_dtype(torch.float64)
        torch.set_float32_matmul_precision("medium")
        found = state_changes.changes(pinned)
        assert "default dtype torch.float64 (pinned torch.float32)" in found
        assert "float32_matmul_precision medium (pinned highest)" in found
    finally:
        torch_state.pin()
    assert state_changes.changes(pinned) == []


def test_pinning_skips_the_inductor_import_only_where_it_would_change_nothing(monkeypatch):
    """torch.use_deterministic_algorithms imports torch._inductor (seconds, in
    every worker): pin() leaves it out where the flag is already off and
    inductor's config is not loaded, and still switches the flag off."""
    calls = []

    def recorded(mode, **kwargs):  # the flag itself, without the inductor import
        calls.append(mode)
        torch._C._set_deterministic_algorithms(mode)

    monkeypatch.delitem(sys.modules, torch_state.INDUCTOR_CONFIG, raising=False)
    monkeypatch.delenv(torch_state.INDUCTOR_DETERMINISTIC_ENV, raising=False)
    monkeypatch.setattr(torch, "use_deterministic_algorithms", recorded)
    try:
        torch_state.pin()
        assert calls == []
        torch._C._set_deterministic_algorithms(True)
        torch_state.pin()
        assert calls == [False] and not torch.are_deterministic_algorithms_enabled()
        monkeypatch.setenv(torch_state.INDUCTOR_DETERMINISTIC_ENV, "1")  # inductor would load on
        torch_state.pin()
        assert calls == [False, False]
    finally:
        torch._C._set_deterministic_algorithms(False)


def test_a_gpu_reading_expects_device_0_and_its_default_stream():
    before_cuda = torch_state.current()
    on_gpu = attrs.evolve(before_cuda, device=1, stream=0)
    assert "current CUDA device 1 (pinned 0)" in state_changes.differences(on_gpu, before_cuda)


def test_the_probe_kernel_does_see_leaked_state(fake_plugins):
    """The clean kernel below would fail if the worker did not restore the state."""
    from fake_plugins import state_changers

    try:
        torch.set_default_dtype(torch.float64)
        assert state_changers.leaked_state() == ["default dtype torch.float64"]
    finally:
        torch_state.pin()


CHANGERS = {
    "fake_sets_float64": "default dtype torch.float64 (pinned torch.float32)",
    "fake_sets_tf32": "cuda.matmul.allow_tf32 True (pinned False)",
    "fake_sets_medium": "float32_matmul_precision medium (pinned highest)",
    "fake_changes_in_launch": "deterministic algorithms True (pinned False)",
}


@pytest.fixture(scope="module")
def one_worker():
    """Hostile kernels and the clean probe, in ONE worker process (workers are
    shared by plugins in compare): outcomes by label. The segfault comes last,
    so nothing before it needs a second worker."""
    case = Case(problem=TINY)
    refusal = Case(problem=attrs.evolve(TINY, dtype="fp16"))
    planned = []
    for name in [*CHANGERS, "fake_exits_in_launch"]:
        planned += [
            (name, name, "values", case),
            (f"probe after {name}", "fake_state_probe", "values", case),
        ]
    planned += [
        ("fake_sets_float64 refusal", "fake_sets_float64", "refusal", refusal),
        ("probe after the refusal", "fake_state_probe", "values", case),
        ("fake_prints", "fake_prints", "values", case),
        ("fake_segfault", "fake_segfault", "values", case),
    ]
    modules = ["state_changers", "exits_in_launch", "prints", "misbehaving"]
    with only_extra_plugins([f"fake_plugins.{m}" for m in modules]):
        outcomes = isolation.run_tasks([check_runner.task_for(*task[1:]) for task in planned])
    return {label: outcome for (label, *_), outcome in zip(planned, outcomes, strict=True)}


def test_state_changes_fail_their_own_case_and_spare_the_next_plugin(one_worker):
    crashed = [label for label, o in one_worker.items() if o.status == "crashed"]
    assert crashed == ["fake_segfault"]  # so all the rest ran in the one worker
    for name, change in CHANGERS.items():
        changer = one_worker[name]
        assert changer.status == "ok" and changer.result.passed is False, name
        assert changer.result.reason.startswith("plugin changed global state: "), name
        assert change in changer.result.reason, name
        probe = one_worker[f"probe after {name}"]
        assert probe.status == "ok" and probe.result.passed is True, (name, probe)
    refused = one_worker["fake_sets_float64 refusal"].result
    assert refused.passed is False
    assert "plugin changed global state: default dtype torch.float64" in refused.reason
    assert one_worker["probe after the refusal"].result.passed is True


def test_sys_exit_in_a_launch_is_that_case_s_error_and_the_worker_goes_on(one_worker):
    outcome = one_worker["fake_exits_in_launch"]
    assert outcome.status == "error"
    assert outcome.error == "SystemExit(0): plugin code called sys.exit"
    assert one_worker["probe after fake_exits_in_launch"].result.passed is True


def test_a_plugin_changing_state_at_import_is_refused_and_the_state_put_back(fake_plugins):
    registry = discover(env={}, entry_points=[entry_point("state", "state_at_import")])
    assert torch.get_default_dtype() == torch.float32
    (issue,) = registry.issues
    assert issue.stage == "state"
    assert "default dtype torch.float64 (pinned torch.float32)" in issue.reason
    assert not registry.kernels


# ---------------------------------------------------------------------------
# 4. Timeouts scale with the problem, can be set, and a hang costs one
# ---------------------------------------------------------------------------


def test_default_timeouts_grow_with_the_work_and_start_from_a_base():
    small, big = Problem(m=1, n=1, k=1), Problem(m=512, n=512, k=512)
    for gpu, base in ((False, timeouts.CPU_BASE_S), (True, timeouts.GPU_BASE_S)):
        assert base <= timeouts.task_timeout_s(small, gpu) < base + 1
        assert timeouts.task_timeout_s(big, gpu) > timeouts.task_timeout_s(small, gpu)
    # 8192^3 interpreted scales to four months: held at --timeout's bound, a wait
    # the selector can still be given (past about 24 days it raised OverflowError).
    huge = Problem(m=8192, n=8192, k=8192)
    assert timeouts.task_timeout_s(huge, False) == MAX_TIMEOUT_S


def test_after_a_timeout_the_rest_of_the_batch_is_skipped_with_the_cause(fake_plugins):
    tasks = [fake_worker_task(action) for action in ("ok", "hang", "ok", "ok")]
    outcomes = isolation.run_tasks(
        tasks,
        task_timeout=[600, 1, 600, 600],
        skip_after_timeout=True,
        worker_module="fake_plugins.fake_worker",
    )
    assert [o.status for o in outcomes] == ["ok", "timeout", "skipped", "skipped"]
    assert outcomes[1].error == "no answer within 1 s; worker killed"
    assert outcomes[2].cause == outcomes[3].cause == 1


def test_check_on_a_hanging_plugin_costs_one_timeout():
    env = plugin_env("misbehaving", FAKE_KERNELS="fake_hang")
    args = ("check", "fake_hang", "--dtype", "fp32", "--layout", "rowmajor", "--format", "json")
    done = run_gemmreg(*args, "--timeout", "2", env=env)
    assert done.returncode == 1, done.stderr[-2000:]
    cases = [c for c in json.loads(done.stdout)["cases"] if c["kernel"] == "fake_hang"]
    hung = [c for c in cases if c["status"] == "timeout"]
    skipped = [c for c in cases if c["reason"].startswith("skipped: an earlier case timed out")]
    assert len(hung) == 1 and "no answer within 2 s" in hung[0]["reason"]
    assert len(skipped) == len(cases) - 1 >= 5
    assert "fake_hang-fp32-rowmajor-" in skipped[0]["reason"]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("0", "must be above 0 up to 86400, got 0"),
        ("-1", "must be above 0 up to 86400, got -1"),
        ("nan", "must be a finite number above 0 up to 86400, got 'nan'"),
        ("inf", "must be a finite number above 0 up to 86400, got 'inf'"),
        ("1e9", "must be above 0 up to 86400, got 1e+09"),
    ],
)
def test_a_timeout_that_is_not_a_positive_number_is_refused(value, said):
    done = run_gemmreg("check", "torch_ref", "--timeout", value)
    assert done.returncode == 2
    assert done.stderr.strip() == f"gemmreg: error: argument --timeout: {said}"


# ---------------------------------------------------------------------------
# 5. No worker outlives its gemmreg
# ---------------------------------------------------------------------------

WAIT_S = 120.0
"""Bound on each poll below: generous, since workers import torch on a loaded machine."""


def _poll(condition, what: str, limit: float = WAIT_S):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"gave up after {limit:g} s waiting for {what}")


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _hung_worker(tmp_path: Path, command: list[str], env: dict[str, str]):
    """Start ``command`` and wait until its worker is inside the hung kernel."""
    started = tmp_path / "hang-started"
    env = {**os.environ, **env, "FAKE_HANG_STARTED": str(started)}
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        text = _poll(lambda: started.exists() and started.read_text().strip(), "the hang")
    except AssertionError:
        proc.kill()
        raise
    return proc, int(text.splitlines()[0])


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGKILL, -signal.SIGKILL), (signal.SIGTERM, 143)]
)
def test_a_worker_dies_with_gemmreg_whatever_signal_ends_it(tmp_path, signum, code):
    env = plugin_env("misbehaving", FAKE_KERNELS="fake_hang")
    command = [sys.executable, "-m", "gemmreg", "check", "fake_hang", "--dtype", "fp32"]
    proc, worker = _hung_worker(tmp_path, command, env)
    assert _alive(worker)
    proc.send_signal(signum)
    assert proc.wait(timeout=WAIT_S) == code
    _poll(lambda: not _alive(worker), f"worker {worker} to die")
    if signum == signal.SIGTERM:
        assert "gemmreg: terminated by SIGTERM; workers killed" in proc.stderr.read()


DRIVER = """
import sys
from gemmreg.checking import check_runner
from gemmreg.workers import isolation
from gemmreg.checking.matrix import Case
from gemmreg.contract.records import Problem

# Like compute-sanitizer: a prefix process that runs the worker as its child.
wrapper = [sys.executable, "-c",
           "import subprocess, sys; subprocess.call(sys.argv[1:], close_fds=False)"]
task = check_runner.task_for("fake_hang", "values", Case(problem=Problem(m=5, n=6, k=7)))
isolation.run_tasks([task], command_prefix=lambda: wrapper)
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_worker_under_a_prefix_process_dies_with_gemmreg_too(tmp_path):
    """The worker's parent is the prefix, not gemmreg: the lifeline pipe kills it."""
    env = plugin_env("misbehaving", FAKE_KERNELS="fake_hang")
    proc, worker = _hung_worker(tmp_path, [sys.executable, "-c", DRIVER], env)
    wrapper = int(Path(f"/proc/{worker}/stat").read_text().rsplit(")", 1)[1].split()[1])
    assert wrapper != proc.pid
    proc.kill()
    proc.wait(timeout=WAIT_S)
    _poll(lambda: not _alive(worker) and not _alive(wrapper), "the worker and its wrapper")


def test_sigterm_and_sighup_raise_terminated_and_are_told_from_plugin_code():
    """From their default disposition, as a command typed at a terminal has
    them (whatever this test run inherited: under nohup, SIGHUP is ignored)."""
    saved = {s: signal.getsignal(s) for s in interrupts.TERMINATION_SIGNALS}
    try:
        for signum in interrupts.TERMINATION_SIGNALS:
            signal.signal(signum, signal.SIG_DFL)
        interrupts.install_termination_handlers()
        for signum in interrupts.TERMINATION_SIGNALS:
            with pytest.raises(interrupts.Terminated) as raised:
                os.kill(os.getpid(), signum)
                time.sleep(5)
            assert raised.value.signum == signum
            assert interrupts.from_signal(raised.value)
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
    assert not interrupts.from_signal(SystemExit(0))


def test_a_hangup_ignored_before_gemmreg_started_stays_ignored():
    """Started under nohup, SIGHUP arrives ignored: gemmreg leaves it so (the
    run outlives its terminal, as its user asked) and still ends on SIGTERM."""
    saved = {s: signal.getsignal(s) for s in interrupts.TERMINATION_SIGNALS}
    try:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        interrupts.install_termination_handlers()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN)
        os.kill(os.getpid(), signal.SIGHUP)  # discarded by the kernel: nothing to raise
        assert interrupts.termination_signal() == 0
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


# ---------------------------------------------------------------------------
# 6. Plugin output never reaches gemmreg's stdout
# ---------------------------------------------------------------------------

PRINTED = (
    "fake_prints says hello at import",
    "fake_prints complains at import",
    "fake_prints writes fd 1 at import",
    "fake_prints printf at import",
    "fake_prints says hello at registration",
)


def test_list_json_parses_and_keeps_what_the_plugin_printed_with_its_row(listed):
    done, rows = listed
    for line in PRINTED:
        assert line in rows["fake_prints"]["output"]
    assert rows["fake_good"]["output"] == ""
    assert "fake_prints" not in done.stderr


def test_check_json_parses_with_a_plugin_that_prints_everywhere(checked):
    """Every bit of plugin code ``check`` runs in its own process prints: import,
    registration, ``available()``. (A GPU-only kernel, so no worker: quick; what
    workers print goes to their log, below.)"""
    done, cases = checked
    assert {c["kernel"] for c in cases} == {"fake_prints_gpu", "fake_gpu_poison"}
    # stderr may name the plugin (nothing ran: it is GPU-only), never quote it.
    assert not any(line in done.stderr for line in PRINTED)


def test_a_crash_reason_quotes_only_its_own_task_s_output(one_worker):
    """fake_prints printed at import (into the worker's discovery) and at launch,
    in the same worker just before the segfault."""
    assert one_worker["fake_prints"].status == "ok"
    crashed = one_worker["fake_segfault"]
    assert crashed.status == "crashed" and "SIGSEGV" in crashed.error
    assert "fake_prints" not in crashed.error


# ---------------------------------------------------------------------------
# The GPU fault plugins the H200 evidence uses: harmless rows on the CPU
# ---------------------------------------------------------------------------


def test_the_gpu_fault_plugins_load_and_are_unavailable_on_the_cpu(fake_plugins):
    from gemmreg.discovery.availability import unavailable_reason

    points = [entry_point(m, m) for m in ("gpu_poison", "gpu_hang")]
    registry = discover(env={}, entry_points=points)
    assert not registry.issues
    for name in ("fake_gpu_poison", "fake_gpu_hang"):
        assert "runs on cuda, rocm" in unavailable_reason(registry.get(name).spec)
    code = (
        "import sys, fake_plugins.gpu_poison, fake_plugins.gpu_hang; print('triton' in sys.modules)"
    )
    imported = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **plugin_env()},
    )
    assert imported.stdout.strip() == "False", imported.stderr  # triton only when one prepares


def test_the_gpu_fault_kernels_are_valid_triton_run_harmlessly_on_the_interpreter(fake_plugins):
    """With a flag already set and an offset inside C, the same kernels that
    hang and poison a GPU return at once: they compile and mean what they say."""
    from gemmreg.contract import backend

    assert backend.current().triton_interpreter  # set before the kernels are decorated
    from fake_plugins.gpu_kernels import spin_on_flag, store_far_away

    spin_on_flag[(1,)](torch.ones(1, dtype=torch.int32))
    out = torch.zeros(4)
    store_far_away[(1,)](out, 2)
    assert out.tolist() == [0.0, 0.0, 1.0, 0.0]
    assert callable(torch.cuda._sleep)  # what gpu_hang sleeps with by default
