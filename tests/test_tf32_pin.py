"""torch's TF32 switch pinned per kernel, from the math it declares.

A kernel that declares ``tf32`` for fp32 runs its prepare and calls with TF32
allowed, every other kernel with it off, in the same worker; a plugin that
flips the switch itself is still blamed; ``torch_ref_tf32`` is cuBLAS TF32, the
like-for-like reference of a TF32 kernel. On this CPU machine TF32 changes no
result: the tests read the switch each kernel ran under, logged by the
kernels themselves (tests/fake_plugins/tf32_flags.py).
"""

from __future__ import annotations

import itertools

import gemmreg
import pytest
from conftest import only_extra_plugins
from gemmreg.checking.output_check import check_case
from gemmreg.contract.records import Problem
from gemmreg.discovery import state_changes, torch_state
from gemmreg.discovery.registry import discover
from gemmreg.timing import timing
from gemmreg.timing.summaries import summarize
from gemmreg.timing.verdicts import judge
from gemmreg.workers import isolation
from gemmreg.workers.tasks import ColdTask, ProfileTask, RefusalTask, RoundsTask, ValuesTask

TINY = Problem(m=5, n=6, k=7)
TF32_KERNEL, IEEE_KERNEL = "fake_tf32_logged", "fake_ieee_logged"
"""Two clean kernels (tests/fake_plugins/tf32_flags.py): one declares TF32 math for fp32."""


def _expected_tf32(kernel: str, dtype: str) -> bool:
    return kernel == TF32_KERNEL and dtype == "fp32"


def test_only_tf32_math_for_fp32_allows_tf32():
    from fake_plugins import tf32_flags

    fp16 = Problem(m=5, n=6, k=7, dtype="fp16")
    assert torch_state.allows_tf32(tf32_flags.TF32_LOGGED, TINY)
    assert not torch_state.allows_tf32(tf32_flags.TF32_LOGGED, fp16)  # undeclared dtype
    assert not torch_state.allows_tf32(tf32_flags.IEEE_LOGGED, TINY)
    try:
        on = torch_state.pin_for(tf32_flags.TF32_LOGGED, TINY)
        assert on.matmul_allow_tf32 is True and on.float32_matmul_precision == "high"
        assert state_changes.changes(on) == []
        off = torch_state.pin_for(tf32_flags.IEEE_LOGGED, TINY)
        assert off.matmul_allow_tf32 is False and off.float32_matmul_precision == "highest"
        assert "cuda.matmul.allow_tf32 False (pinned True)" in state_changes.differences(off, on)
    finally:
        torch_state.pin()


@pytest.fixture(scope="module")
def one_worker_log(tmp_path_factory):
    """Every kind of task that calls a kernel, for the TF32 kernel and the IEEE
    one alternately, in ONE worker; the lines the kernels logged, parsed."""
    log = tmp_path_factory.mktemp("tf32") / "seen.log"
    both = (TF32_KERNEL, IEEE_KERNEL)
    tasks = [
        ValuesTask(kernel=TF32_KERNEL, problem=TINY, seed=1),
        ValuesTask(kernel=IEEE_KERNEL, problem=TINY, seed=1),
        ValuesTask(kernel=TF32_KERNEL, problem=TINY, seed=2),
        RefusalTask(kernel=TF32_KERNEL, problem=Problem(m=5, n=6, k=7, dtype="fp16")),
        ColdTask(kernel=TF32_KERNEL, problem=TINY, seed=1),
        ColdTask(kernel=IEEE_KERNEL, problem=TINY, seed=1),
        RoundsTask(kernels=both, problem=TINY, seed=1, order_seed=3, gpu=False, repeats=4),
        ProfileTask(kernels=both, problem=TINY, seed=1),
        ProfileTask(kernels=both, problem=TINY, seed=1, capture=True),
    ]
    with only_extra_plugins(["fake_plugins.tf32_flags"]), pytest.MonkeyPatch.context() as mp:
        mp.setenv("GEMMREG_TEST_TF32_LOG", str(log))
        outcomes = isolation.run_tasks(tasks, task_timeout=120)
    assert [o.status for o in outcomes] == ["ok"] * len(tasks), [o.error for o in outcomes]
    lines = [line.split() for line in log.read_text().splitlines()]
    assert len({pid for *_, pid in lines}) == 1  # every task ran in the one worker
    return outcomes, [
        (name, stage, dtype, flag == "True", how) for name, stage, dtype, flag, how, _ in lines
    ]


def test_each_kernel_runs_under_its_own_tf32_pin_in_one_shared_worker(one_worker_log):
    outcomes, seen = one_worker_log
    assert outcomes[0].result.passed and outcomes[1].result.passed and outcomes[2].result.passed
    rounds = outcomes[6].result.kernels
    assert rounds[TF32_KERNEL].status == "ok" and rounds[IEEE_KERNEL].status == "ok"
    for name in (TF32_KERNEL, IEEE_KERNEL):
        stages = {stage for kernel, stage, *_ in seen if kernel == name}
        assert stages == {"prepare", "launch"}, name
    wrong = [s for s in seen if s[3] != _expected_tf32(s[0], s[2])]
    assert not wrong, wrong[:5]
    for name, _, dtype, tf32, precision in seen:
        assert precision == ("high" if tf32 else "highest"), (name, dtype)
    # The rounds interleave the two kernels' slots: many switches back and forth.
    order = [s[0] for s in seen if s[1] == "launch"]
    switches = sum(1 for x, y in itertools.pairwise(order) if x != y)
    assert switches >= 8
    assert ("fake_tf32_logged", "prepare", "fp16", False, "highest") in seen  # the refusal


def test_a_tf32_kernel_that_turns_tf32_off_is_blamed():
    from fake_plugins import tf32_flags

    try:
        clean = check_case(tf32_flags.TF32_LOGGED, TINY, seed=1)
        assert clean.passed, clean.reason
        blamed = check_case(tf32_flags.TF32_TURNS_OFF, TINY, seed=1)
        assert not blamed.passed
        assert blamed.reason.startswith("plugin changed global state: ")
        assert "cuda.matmul.allow_tf32 False (pinned True)" in blamed.reason
    finally:
        torch_state.pin()


def test_a_tf32_kernel_that_turns_tf32_off_in_the_rounds_voids_them(fake_plugins):
    from fake_plugins import tf32_flags

    specs = {s.name: s for s in (tf32_flags.IEEE_LOGGED, tf32_flags.TF32_TURNS_OFF_LATER)}
    try:
        result = timing.measure_group(
            specs, TINY, seed=1, order_seed=1, policy=timing.policy_for(gpu=False, repeats=4)
        )
    finally:
        torch_state.pin()
    blamed = result.kernels["fake_tf32_turns_off_later"]
    assert blamed.status == "failed" and "allow_tf32 False (pinned True)" in blamed.reason
    other = result.kernels[IEEE_KERNEL]
    assert other.status == "error" and "fake_tf32_turns_off_later's launch" in other.reason


def test_torch_ref_tf32_is_listed_and_unavailable_off_nvidia_with_the_reason():
    registry = discover(env={})
    kernel = registry.get("torch_ref_tf32")
    assert kernel.origin.plugin == "torch_ref_tf32"
    assert kernel.spec.vendor_library
    assert kernel.spec.capabilities.dtypes == {"fp32"}
    assert kernel.spec.capabilities.precision["fp32"].math == "tf32"
    assert kernel.spec.tolerances["fp32"].rtol == 4e-3  # triton_tuned's TF32 figure
    assert kernel.unavailable is not None
    assert "TF32 is a tensor-core mode of NVIDIA GPUs" in kernel.unavailable
    assert "backend is cpu" in kernel.unavailable


@pytest.mark.parametrize(
    ("backend", "capability", "reason"),
    [
        ("cuda", (9, 0), None),
        ("cuda", (8, 0), None),
        ("cuda", (7, 5), "TF32 needs NVIDIA Ampere (sm80) or later; this GPU is sm75"),
        ("rocm", (9, 4), "this machine's backend is rocm"),
        ("cpu", None, "this machine's backend is cpu"),
    ],
)
def test_torch_ref_tf32_runs_only_on_nvidia_ampere_and_later(
    monkeypatch, backend, capability, reason
):
    from types import SimpleNamespace

    from gemmreg_plugins import torch_ref

    where = SimpleNamespace(backend=backend, capability=capability)
    monkeypatch.setattr(gemmreg, "where", lambda: where)
    found = torch_ref.tf32_unavailable()
    assert found == reason if reason is None else reason in found


def test_a_tf32_kernel_is_like_for_like_with_torch_ref_tf32_not_with_torch_ref():
    registry = discover(
        env={"GEMMREG_PLUGINS": "torch_ref,torch_ref_tf32"},
        extra_plugins=["fake_plugins.tf32_flags"],
    )
    summaries = {
        name: summarize(registry.get(name), TINY, [], None, "cpu")
        for name in (TF32_KERNEL, "torch_ref", "torch_ref_tf32")
    }

    def notes(baseline: str) -> tuple[str, ...]:
        verdict = judge(
            summaries[baseline], summaries[TF32_KERNEL], [], confidence=0.95, margin=0.01
        )
        return verdict.notes

    assert not any("UNLIKE PRECISION" in note for note in notes("torch_ref_tf32"))
    assert any("UNLIKE PRECISION" in note for note in notes("torch_ref"))
