"""The profiling process's choice between one interleaved trace and one trace per kernel.

The traces themselves need a GPU; here the two profilers are stand-ins, and
the kernels are real CPU kernels, prepared and called as on a GPU."""

from __future__ import annotations

import torch
from gemmreg.contract.records import Problem
from gemmreg.instruments.device_profile import DeviceProfile
from gemmreg.timing import device_activity, profiling


def device_profile(name: str, *, interleaved: bool, escaped: str | None = None) -> DeviceProfile:
    return DeviceProfile(
        calls=5,
        kernel_ms_per_call=0.01,
        busy_ms_per_call=0.01,
        launches_per_call=1.0,
        streams=(7,),
        escaped=escaped,
        kernels=(name,),
        call_ms=(0.01,) * 5,
        interleaved=interleaved,
    )


def specs():
    from fake_plugins import fp32_spec

    def launch(a, b, out):
        torch.mm(a, b, out=out)

    return {name: fp32_spec(name, launch) for name in ("first", "second", "third")}


def run(monkeypatch, interleaved_answer):
    """``device_profiles`` of three kernels; what each profiler was asked."""
    asked: dict[str, list] = {"interleaved": [], "alone": []}

    def interleaved(calls, rounds):
        asked["interleaved"].append((list(calls), rounds))
        for call in calls.values():
            call()  # the pinned call runs the kernel
        return interleaved_answer(list(calls))

    def alone(call, calls):
        call()
        asked["alone"].append(calls)
        return device_profile("alone", interleaved=False)

    monkeypatch.setattr(device_activity, "profile_interleaved", interleaved)
    monkeypatch.setattr(device_activity, "profile_calls", alone)
    result = profiling.device_profiles(specs(), Problem(m=32, n=16, k=8), seed=1)
    return result.kernels, asked


def test_kernels_are_profiled_together_when_the_trace_is_clean(fake_plugins, monkeypatch):
    kernels, asked = run(
        monkeypatch, lambda names: {n: device_profile(n, interleaved=True) for n in names}
    )
    assert [names for names, _ in asked["interleaved"]] == [["first", "second", "third"]]
    rounds = asked["interleaved"][0][1]
    assert device_activity.PROFILE_CALLS <= rounds <= device_activity.PROFILE_MAX_CALLS
    assert asked["alone"] == []
    assert {name: k.profile.kernels for name, k in kernels.items()} == {
        "first": ("first",),
        "second": ("second",),
        "third": ("third",),
    }
    assert all(k.profile.interleaved for k in kernels.values())


def test_escaped_work_in_the_shared_trace_sends_every_kernel_to_a_trace_of_its_own(
    fake_plugins, monkeypatch
):
    """One kernel's stray work ran beside the next kernel's calls: nobody's
    figure from that trace is kept, and the escape is found again alone."""

    def one_escapes(names):
        return {
            n: device_profile(n, interleaved=True, escaped="x" if n == "second" else None)
            for n in names
        }

    kernels, asked = run(monkeypatch, one_escapes)
    assert len(asked["interleaved"]) == 1 and len(asked["alone"]) == 3
    assert all(not k.profile.interleaved for k in kernels.values())


def test_an_unreadable_shared_trace_falls_back_too(fake_plugins, monkeypatch):
    kernels, asked = run(monkeypatch, lambda names: "device profile unavailable: no marker")
    assert len(asked["alone"]) == 3
    assert set(kernels) == {"first", "second", "third"}


def test_one_kernel_is_profiled_alone(fake_plugins, monkeypatch):
    asked = []
    monkeypatch.setattr(
        device_activity, "profile_interleaved", lambda calls, rounds: asked.append(calls)
    )
    monkeypatch.setattr(
        device_activity,
        "profile_calls",
        lambda call, calls: device_profile("only", interleaved=False),
    )
    one = {"first": specs()["first"]}
    result = profiling.device_profiles(one, Problem(m=8, n=8, k=8), seed=1)
    assert asked == [] and result.kernels["first"].profile is not None
