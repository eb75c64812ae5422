"""A case that runs out of memory is tried once more after its kernel's other
cases, in a fresh worker (gemmreg.checking.memory_retry): a crowded GPU's
out-of-memory is not the kernel's error, and is never a verdict. Any other
error is the kernel's own and is not tried again. The kernels are throwaway
plugins (tests/fake_plugins/out_of_memory.py) run by the real command line."""

from __future__ import annotations

import json

import pytest
from conftest import REPO, TESTS, run_gemmreg
from gemmreg.checking import memory_retry
from gemmreg.workers import isolation
from gemmreg.workers.tasks import TaskOutcome

KERNELS = ("fake_short_once", "fake_short_always", "fake_broken_once")


def plugin_env(calls) -> dict[str, str]:
    """Only the out-of-memory plugins, counting their calls under ``calls``."""
    calls.mkdir(exist_ok=True)
    return {
        "PYTHONPATH": str(TESTS),
        "GEMMREG_PLUGINS": "none",
        "GEMMREG_EXTRA_PLUGINS": "fake_plugins.out_of_memory",
        "GEMMREG_TEST_OOM_DIR": str(calls),
    }


def check(tmp_path, *kernels: str):
    calls = tmp_path / "calls"
    env = plugin_env(calls)
    done = run_gemmreg("check", *kernels, "--dtype", "fp32", "--format", "json", env=env)
    cases = json.loads(done.stdout)["cases"]
    counted = {f.name: len(f.read_text().splitlines()) for f in calls.iterdir()}
    return done, [c for c in cases if c["kind"] == "values"], counted


@pytest.fixture(scope="module")
def each(tmp_path_factory):
    """Each kernel checked alone: its exit code, its values cases, its calls."""
    return {name: check(tmp_path_factory.mktemp(name), name) for name in KERNELS}


def test_a_case_short_of_memory_once_is_judged_on_its_second_try(each):
    done, cases, _ = each["fake_short_once"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert {c["status"] for c in cases} == {"pass"}
    retried = [c for c in cases if c["reason"]]
    assert len(retried) == 1
    assert retried[0]["reason"].startswith("judged on a second try, in a fresh worker")
    assert "Tried to allocate 16.02 GiB" in retried[0]["reason"]


def test_the_table_gives_a_case_judged_on_a_second_try_its_own_row(tmp_path):
    """Passing cases fold into one row per plugin and dtype; this one says how
    it was judged, so it keeps a row of its own."""
    env = plugin_env(tmp_path / "calls")
    done = run_gemmreg("check", "fake_short_once", "--dtype", "fp32", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = [line for line in done.stdout.splitlines() if "judged on a second try" in line]
    assert row.split()[:3] == ["fake_short_once", "fp32-rowmajor-1x1x1", "pass"]
    assert "36 fp32 cases" in done.stdout  # the rest, folded as always


def test_a_case_short_of_memory_twice_is_an_error_that_says_so_and_was_tried_twice(each):
    done, cases, counted = each["fake_short_always"]
    assert done.returncode == 1
    assert cases and {c["status"] for c in cases} == {"error"}
    for case in cases:
        assert case["reason"].startswith("out of memory twice, the second time alone")
        assert "Tried to allocate 64.00 GiB" in case["reason"]
        assert case["reason"].endswith("the case was not judged)")
    assert counted["short_always"] == 2 * len(cases)  # each case raised at its first call, twice


def test_another_error_is_the_kernels_own_and_is_not_tried_again(each):
    """Retried, the case would pass (the kernel fails only on its first call):
    it stays the kernel's ERROR, as raised."""
    done, cases, _ = each["fake_broken_once"]
    assert done.returncode == 1
    errors = [c for c in cases if c["status"] == "error"]
    assert len(errors) == 1
    assert errors[0]["reason"] == "RuntimeError: illegal memory access (a test plugin)"
    assert {c["status"] for c in cases if c is not errors[0]} == {"pass"}


def outcome(error: str, status: str = "error") -> TaskOutcome:
    return TaskOutcome(status=status, error=error)  # type: ignore[arg-type]


def test_the_h200s_own_out_of_memory_error_is_recognised():
    """The ERROR a shared H200 gave in December 2026, as its worker reported it."""
    import gzip

    saved = REPO / "evidence/2026-12-02-h200-device-processes/c1/check-gluon/check.json.gz"
    cases = json.loads(gzip.decompress(saved.read_bytes()))["cases"]
    (error,) = [c for c in cases if c["status"] == "error"]
    assert "Tried to allocate 16.02 GiB" in error["reason"]
    assert memory_retry.out_of_memory(outcome(error["reason"]))


def test_only_an_allocator_or_host_out_of_memory_counts():
    assert memory_retry.out_of_memory(outcome("OutOfMemoryError: CUDA out of memory."))
    assert memory_retry.out_of_memory(outcome("MemoryError: "))
    assert not memory_retry.out_of_memory(
        outcome("RuntimeError: CUDA error: an illegal memory access")
    )
    assert not memory_retry.out_of_memory(outcome("OutOfMemoryError: x", status="crashed"))


def test_an_interrupted_second_try_still_settles_every_case(monkeypatch):
    """Ctrl-C during the second run: the case it finished keeps that result,
    the one it never reached keeps its first outcome; none is lost."""
    short = memory_retry.ShortOfMemory()
    assert not short.keep(0, outcome("RuntimeError: not memory"))
    assert short.keep(1, outcome("OutOfMemoryError: a"))
    assert short.keep(3, outcome("OutOfMemoryError: b"))

    def interrupted(tasks, task_timeout, on_outcome, **options):
        assert tasks == ["task 1", "task 3"] and task_timeout == [1.0, 3.0]
        on_outcome(0, TaskOutcome(status="ok"))
        raise KeyboardInterrupt

    monkeypatch.setattr(isolation, "run_tasks", interrupted)
    settled = []
    with pytest.raises(KeyboardInterrupt):
        short.try_again(
            [f"task {i}" for i in range(4)],  # type: ignore[misc]
            lambda i, o, note: settled.append((i, o.status, o.error, note)),
            task_timeout=[0.0, 1.0, 2.0, 3.0],
        )
    assert settled[0][:3] == (1, "ok", "") and settled[0][3].startswith("judged on a second try")
    assert settled[1] == (3, "error", "OutOfMemoryError: b", "")


def test_after_a_hang_nothing_is_tried_again(monkeypatch):
    """A hang costs one timeout: the kernel's held cases keep their first
    outcome instead of a fresh worker that could hang once more."""
    short = memory_retry.ShortOfMemory()
    short.keep(0, outcome("OutOfMemoryError: a"))
    short.keep(1, outcome("", status="timeout"))
    monkeypatch.setattr(isolation, "run_tasks", lambda *a, **k: pytest.fail("ran again"))
    settled = []
    short.try_again(["a", "b"], lambda i, o, note: settled.append((i, o.error, note)), [1.0, 1.0])  # type: ignore[list-item]
    assert settled == [(0, "OutOfMemoryError: a", "")]
