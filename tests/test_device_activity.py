"""Whole-device integrity: the trace analysis on constructed device traces, the
reading of torch's profiler events through stand-ins, and the GPU-only checks'
behaviour on the CPU. Nothing here is timed."""

from __future__ import annotations

import json
import statistics
from types import SimpleNamespace

import attrs
import pytest
from gemmreg.instruments.activity_analysis import TIMESTAMP_SLACK_US
from gemmreg.timing import device_activity
from gemmreg.timing.device_activity import (
    MARKER_NAME,
    Activity,
    DeviceProfile,
    activities_from_events,
    analyse,
    analyse_interleaved,
    profile_calls,
    profile_interleaved,
    sync_escape,
    sync_verdict,
)

CALLER = 7
SIDE = 9
SPACING = 100.0
"""Marker ``i`` starts at ``i * SPACING`` us on the caller's stream ..."""
MARKER_US = 10.0
"""... and ends MARKER_US later; call ``i`` owns [i*100 + 10, (i+1)*100]."""
MARKER = "at::cuda::(anonymous namespace)::spin_kernel(long)"
GEMM = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nn"


def markers(calls: int) -> list[Activity]:
    return [
        Activity(
            name=MARKER,
            kind="kernel",
            stream=CALLER,
            start_us=i * SPACING,
            end_us=i * SPACING + MARKER_US,
        )
        for i in range(calls + 1)
    ]


def in_call(i: int, start: float, end: float, stream: int = CALLER, name: str = GEMM) -> Activity:
    """An activity of call ``i``, at offsets from marker ``i``'s start."""
    return Activity(
        name=name,
        kind="kernel",
        stream=stream,
        start_us=i * SPACING + start,
        end_us=i * SPACING + end,
    )


def profile(activities: list[Activity], calls: int) -> DeviceProfile:
    result = analyse(activities, MARKER_NAME, calls)
    assert isinstance(result, DeviceProfile), result
    return result


def test_a_contained_single_stream_kernel_is_clean_and_measured():
    calls = 5
    trace = markers(calls) + [in_call(i, 15, 55) for i in range(calls)]
    result = profile(trace, calls)
    assert result.escaped is None
    assert result.calls == calls
    assert result.kernel_ms_per_call == pytest.approx(0.040)
    assert result.busy_ms_per_call == pytest.approx(0.040)
    assert result.launches_per_call == 1.0
    assert result.streams == (CALLER,)


def test_two_launches_count_twice_and_overlap_counts_once_in_busy_time():
    calls = 4
    work = []
    for i in range(calls):
        work.append(in_call(i, 15, 55))
        work.append(in_call(i, 30, 70, stream=SIDE, name="splitk_reduce"))  # joined side stream
    result = profile(markers(calls) + work, calls)
    assert result.escaped is None
    assert result.launches_per_call == 2.0
    assert result.kernel_ms_per_call == pytest.approx(0.080)
    assert result.busy_ms_per_call == pytest.approx(0.055)  # [15, 70]
    assert result.streams == (CALLER, SIDE)


def test_busy_time_counts_nested_and_disjoint_intervals_once():
    calls = 1
    work = [
        in_call(0, 15, 70),
        in_call(0, 20, 30, stream=SIDE),  # inside the first
        in_call(0, 80, 90, stream=SIDE),  # after a gap
    ]
    result = profile(markers(calls) + work, calls)
    assert result.busy_ms_per_call == pytest.approx(0.065)
    assert result.kernel_ms_per_call == pytest.approx(0.075)
    assert result.launches_per_call == 3.0


def test_memcpy_and_memset_count_as_device_work():
    calls = 2
    work = []
    for i in range(calls):
        work.append(
            Activity(
                name="Memset (Device)",
                kind="memset",
                stream=CALLER,
                start_us=i * SPACING + 12,
                end_us=i * SPACING + 14,
            )
        )
        work.append(in_call(i, 15, 55))
    result = profile(markers(calls) + work, calls)
    assert result.launches_per_call == 2.0
    assert result.kernel_ms_per_call == pytest.approx(0.042)
    assert result.kernels == (GEMM,)  # the memset is no kernel, the markers are not the call's


def test_the_profile_names_the_kernels_the_calls_launched_and_keeps_them():
    calls = 3
    work = [in_call(i, 15, 55) for i in range(calls)]
    work += [in_call(i, 60, 70, stream=SIDE, name="splitk_reduce") for i in range(calls)]
    result = profile(markers(calls) + work, calls)
    assert result.kernels == tuple(sorted((GEMM, "splitk_reduce")))
    assert DeviceProfile.from_dict(result.to_dict()) == result
    older = {k: v for k, v in result.to_dict().items() if k != "kernels"}  # runs saved before
    assert DeviceProfile.from_dict(older).kernels == ()


def test_side_stream_work_that_did_not_wait_for_the_caller_escapes():
    calls = 5
    # Starts 5 us into its call's start marker: it never waited for the caller's stream.
    work = [in_call(i, 5, 45, stream=SIDE) for i in range(calls)]
    result = profile(markers(calls) + work, calls)
    assert result.escaped is not None
    assert result.escaped.startswith("5 of 5 calls had device work outside their interval")
    assert "ampere_bf16_s16816gemm" in result.escaped
    assert f"on stream {SIDE}" in result.escaped
    assert "did not wait for the caller's stream" in result.escaped
    # The escaped work is still the call's work: it is measured, not dropped.
    assert result.kernel_ms_per_call == pytest.approx(0.040)
    assert result.launches_per_call == 1.0


def test_work_ending_after_the_next_marker_starts_escapes():
    calls = 5
    work = [in_call(i, 15, 55) for i in range(calls)]
    work[1] = in_call(1, 20, 260, stream=SIDE)  # ends 160 us after marker 2 starts
    work[3] = in_call(3, 20, 130, stream=SIDE)
    result = profile(markers(calls) + work, calls)
    assert result.escaped is not None
    assert result.escaped.startswith("2 of 5 calls had device work outside their interval")
    assert f"on stream {SIDE} ended 160 us after the call's end marker started" in result.escaped
    assert "not joined back" in result.escaped


def test_properly_joined_side_stream_work_is_fine():
    calls = 3
    # Waits for the start marker, and the caller's stream waits for it before the next one.
    work = [in_call(i, MARKER_US, SPACING, stream=SIDE) for i in range(calls)]
    result = profile(markers(calls) + work, calls)
    assert result.escaped is None
    assert result.streams == (SIDE,)


def test_crossing_a_boundary_by_less_than_the_timestamp_slack_is_not_an_escape():
    calls = 2
    slack = TIMESTAMP_SLACK_US
    work = [in_call(i, MARKER_US - slack / 2, SPACING + slack / 2, stream=SIDE) for i in range(2)]
    assert profile(markers(calls) + work, calls).escaped is None
    work[1] = in_call(1, MARKER_US, SPACING + 2 * slack, stream=SIDE)
    assert profile(markers(calls) + work, calls).escaped is not None


def test_activity_after_the_last_marker_escapes():
    calls = 3
    late = in_call(calls, 40, 90, stream=SIDE, name="late_thread_gemm")
    result = profile([*markers(calls), *(in_call(i, 15, 55) for i in range(calls)), late], calls)
    assert result.escaped is not None
    assert "1 device activity lay outside the marker sequence" in result.escaped
    assert "late_thread_gemm on stream 9 ran 90 us past the start of the last marker" in (
        result.escaped
    )


def test_activity_before_the_first_marker_escapes():
    calls = 2
    early = Activity(name="early", kind="kernel", stream=SIDE, start_us=-30.0, end_us=-5.0)
    result = profile([early, *markers(calls), *(in_call(i, 15, 55) for i in range(calls))], calls)
    assert result.escaped is not None
    assert "early on stream 9 started 30 us before the first marker" in result.escaped


def test_one_disturbed_call_does_not_move_the_median():
    calls = 5
    work = [in_call(i, 15, 55) for i in range(calls)]
    work[2] = in_call(2, 15, 95)
    assert profile(markers(calls) + work, calls).kernel_ms_per_call == pytest.approx(0.040)


def test_long_kernel_names_are_shortened_in_the_reason():
    calls = 1
    name = "void cutlass::Kernel2<" + "x" * 300 + ">(Params)"
    result = profile([*markers(calls), in_call(0, 5, 45, stream=SIDE, name=name)], calls)
    assert result.escaped is not None
    assert "x" * 300 not in result.escaped and "..." in result.escaped


def test_missing_markers_give_a_reason_not_an_exception():
    reason = analyse([in_call(0, 15, 55)], MARKER_NAME, 1)
    assert isinstance(reason, str)
    assert reason.startswith(f"no marker kernel {MARKER_NAME!r} in the device trace")


def test_a_wrong_number_of_markers_gives_a_reason():
    reason = analyse(markers(3), MARKER_NAME, 5)
    assert reason == (
        f"expected 6 marker kernels {MARKER_NAME!r} in the device trace for 5 calls, found 4 "
        "(does the kernel launch one itself?)"
    )


def test_markers_on_several_streams_give_a_reason():
    trace = markers(2)
    trace[1] = Activity(name=MARKER, kind="kernel", stream=SIDE, start_us=100.0, end_us=110.0)
    reason = analyse(trace, MARKER_NAME, 2)
    assert isinstance(reason, str) and "several streams [7, 9]" in reason


def test_zero_calls_give_a_reason():
    assert isinstance(analyse(markers(0), MARKER_NAME, 0), str)


def test_device_profile_round_trips_through_a_dict_and_json():
    original = DeviceProfile(
        calls=5,
        kernel_ms_per_call=0.125,
        busy_ms_per_call=0.1,
        launches_per_call=2.0,
        streams=(7, 9),
        escaped="1 of 5 calls had device work outside their interval: x on stream 9 ...",
    )
    assert DeviceProfile.from_dict(original.to_dict()) == original
    assert DeviceProfile.from_dict(json.loads(json.dumps(original.to_dict()))) == original
    clean = attrs.evolve(original, escaped=None)
    assert DeviceProfile.from_dict(clean.to_dict()) == clean


# --- reading torch's profiler events, through stand-ins ----------------------


class FakeDeviceType:
    """Like torch's pybind enum: a ``name`` attribute."""

    def __init__(self, name: str) -> None:
        self.name = name


def kineto_event(name, device="CUDA", stream=7, start_ns=1000, end_ns=3000, activity_type=None):
    fields = {
        "name": lambda: name,
        "device_type": lambda: FakeDeviceType(device),
        "device_resource_id": lambda: stream,
        "start_ns": lambda: start_ns,
        "end_ns": lambda: end_ns,
    }
    if activity_type is not None:
        fields["activity_type"] = lambda: activity_type
    return SimpleNamespace(**fields)


def test_device_events_become_activities_and_host_events_are_skipped():
    events = [
        kineto_event("cudaLaunchKernel", device="CPU", activity_type="cuda_runtime"),
        kineto_event(GEMM, stream=9, start_ns=2000, end_ns=5500, activity_type="kernel"),
        kineto_event("Memcpy DtoD (Device -> Device)", activity_type="gpu_memcpy"),
        kineto_event("Memset (Device)", activity_type="gpu_memset"),
        kineto_event("my_range", activity_type="gpu_user_annotation"),
        kineto_event("cudaStreamSynchronize", activity_type="cuda_sync"),
    ]
    found = activities_from_events(events)  # times count from the first device activity (1000 ns)
    assert [(a.name, a.kind) for a in found] == [
        (GEMM, "kernel"),
        ("Memcpy DtoD (Device -> Device)", "memcpy"),
        ("Memset (Device)", "memset"),
    ]
    assert found[0] == Activity(name=GEMM, kind="kernel", stream=9, start_us=1.0, end_us=4.5)


def test_epoch_timestamps_keep_every_nanosecond():
    """Kineto counts ns since the Unix epoch; as float us those step by 0.25 us."""
    epoch_2026 = 1_764_565_200_000_000_000
    events = [
        kineto_event(MARKER, start_ns=epoch_2026 + 1, end_ns=epoch_2026 + 1_000_001),
        kineto_event(GEMM, start_ns=epoch_2026 + 1_000_333, end_ns=epoch_2026 + 1_007_826),
    ]
    marker, gemm = activities_from_events(events)
    assert (marker.start_us, marker.end_us) == (0.0, 1000.0)
    assert gemm.duration_us == pytest.approx(7.493, abs=1e-9)
    assert gemm.start_us == pytest.approx(1000.332, abs=1e-9)
    naive = (epoch_2026 + 1_007_826) / 1000.0 - (epoch_2026 + 1_000_333) / 1000.0
    assert abs(naive - 7.493) > 0.05, "the float-of-epoch reading this guards against"


def test_without_activity_type_kinds_come_from_kineto_names():
    events = [
        kineto_event(GEMM),
        kineto_event("Memcpy HtoD (Pageable -> Device)"),
        kineto_event("Memset (Device)"),
    ]
    assert [a.kind for a in activities_from_events(events)] == ["kernel", "memcpy", "memset"]


def test_older_clock_accessors_are_read():
    by_duration = SimpleNamespace(
        name=lambda: GEMM,
        device_type=lambda: FakeDeviceType("HIP"),
        device_resource_id=lambda: 3,
        start_ns=lambda: 4000,
        duration_ns=lambda: 1500,
    )
    in_us = SimpleNamespace(
        name=lambda: GEMM,
        device_type=lambda: FakeDeviceType("CUDA"),
        device_resource_id=lambda: 3,
        start_us=lambda: 4,
        duration_us=lambda: 2,
    )
    found = activities_from_events([by_duration, in_us])
    assert [(a.start_us, a.end_us) for a in found] == [(0.0, 1.5), (0.0, 2.0)]


# --- the GPU-only checks, on the CPU ----------------------------------------


def test_profile_calls_on_the_cpu_gives_a_reason_and_never_calls():
    calls = []
    reason = profile_calls(lambda: calls.append(1))
    assert isinstance(reason, str)
    assert reason.startswith("device profile unavailable: no GPU")
    assert calls == []


def pretend_gpu(monkeypatch):
    monkeypatch.setattr(device_activity.backend, "current", lambda: SimpleNamespace(is_gpu=True))


def test_profile_calls_turns_any_exception_into_a_reason(monkeypatch):
    pretend_gpu(monkeypatch)

    def broken(sequence):
        raise RuntimeError("CUPTI_ERROR_NOT_INITIALIZED")

    monkeypatch.setattr(device_activity, "_record", broken)
    assert profile_calls(lambda: None) == (
        "device profile unavailable: RuntimeError: CUPTI_ERROR_NOT_INITIALIZED"
    )


def test_profile_calls_reports_an_empty_or_unreadable_trace(monkeypatch):
    pretend_gpu(monkeypatch)
    monkeypatch.setattr(device_activity, "_record", lambda sequence: [])
    assert "recorded no device activity" in profile_calls(lambda: None)
    monkeypatch.setattr(device_activity, "_record", lambda sequence: [in_call(0, 15, 55)])
    assert profile_calls(lambda: None, calls=1) == (
        f"device profile unavailable: no marker kernel {MARKER_NAME!r} in the device trace "
        "(1 other activities)"
    )


def test_profile_calls_returns_the_analysis_of_the_recorded_trace(monkeypatch):
    pretend_gpu(monkeypatch)
    trace = markers(5) + [in_call(i, 5, 45, stream=SIDE) for i in range(5)]
    monkeypatch.setattr(device_activity, "_record", lambda sequence: trace)
    result = profile_calls(lambda: None, calls=5)
    assert isinstance(result, DeviceProfile)
    assert result.escaped is not None and "5 of 5 calls" in result.escaped


def test_interleaved_profiles_pair_calls_by_round(monkeypatch):
    """Three kernels, four rounds, the order rotated each round, each kernel
    called twice in a row: each kernel's call_ms are its second calls' times,
    in round order, whatever its place in the round."""
    pretend_gpu(monkeypatch)
    assert device_activity.WARM_CALLS == 1
    took = {"a": 10.0, "b": 20.0, "c": 40.0}
    seen = []

    def record(sequence):
        seen.extend(call() for call in sequence)
        return markers(len(sequence)) + [
            in_call(i, 15, 15 + took[name] + i) for i, name in enumerate(seen)
        ]

    monkeypatch.setattr(device_activity, "_record", record)
    result = profile_interleaved({name: (lambda n=name: n) for name in took}, rounds=4)
    assert isinstance(result, dict), result
    assert "".join(seen) == "aabbccbbccaaccaabbaabbcc"
    assert set(result) == {"a", "b", "c"}
    for name, p in result.items():
        assert p.interleaved and p.calls == 4 and p.escaped is None
        timed = [i for i, n in enumerate(seen) if n == name][1::2]
        assert p.call_ms == pytest.approx([(took[name] + i) / 1000.0 for i in timed])
        assert p.kernel_ms_per_call == pytest.approx(statistics.median(p.call_ms))


def test_interleaved_escapes_are_charged_to_their_own_kernel_warm_up_calls_too(monkeypatch):
    pretend_gpu(monkeypatch)

    def record(sequence):
        names = [call() for call in sequence]
        side = [in_call(i, 5, 45, stream=SIDE) for i, n in enumerate(names) if n == "b"]
        return (
            markers(len(names))
            + side
            + [in_call(i, 15, 30) for i, n in enumerate(names) if n == "a"]
        )

    monkeypatch.setattr(device_activity, "_record", record)
    result = profile_interleaved({"a": lambda: "a", "b": lambda: "b"}, rounds=3)
    assert isinstance(result, dict)
    assert result["a"].escaped is None
    assert result["b"].escaped is not None and "6 of 6 calls" in result["b"].escaped


def test_warm_up_calls_are_watched_but_not_timed():
    warm, timed = in_call(0, 15, 95), in_call(1, 15, 25)
    trace = [*markers(4), warm, timed, in_call(2, 15, 95), in_call(3, 15, 25)]
    trace.append(in_call(2, 5, 25, stream=SIDE))  # the second warm-up call's work escapes
    found = analyse_interleaved(trace, MARKER_NAME, ["a", "a", "a", "a"], [False, True] * 2)
    assert isinstance(found, dict)
    (only,) = found.values()
    assert only.calls == 2 and only.call_ms == pytest.approx([0.010, 0.010])
    assert only.escaped is not None and "1 of 4 calls" in only.escaped


@pytest.mark.parametrize(
    "owners, timed",
    [([], None), (["a", "b"], [True]), (["a", "a", "b"], [True, True, False])],
)
def test_interleaved_analysis_refuses_a_sequence_it_cannot_read(owners, timed):
    """No calls, a timing flag per call missing, a kernel with no timed call:
    a reason, never an exception (the profiling process reports it)."""
    reason = analyse_interleaved(markers(len(owners)), MARKER_NAME, owners, timed)
    assert isinstance(reason, str) and reason.startswith("cannot analyse")


def test_interleaved_profile_gives_reasons_like_profile_calls(monkeypatch):
    assert profile_interleaved({"a": lambda: None}, rounds=2).startswith(
        "device profile unavailable: no GPU"
    )
    pretend_gpu(monkeypatch)
    monkeypatch.setattr(device_activity, "_record", lambda sequence: markers(3))
    assert "expected 13 marker kernels" in profile_interleaved({"a": None, "b": None}, rounds=3)


def test_a_saved_profile_without_call_times_still_reads():
    saved = profile(markers(2) + [in_call(i, 15, 55) for i in range(2)], 2).to_dict()
    del saved["call_ms"], saved["interleaved"]
    old = DeviceProfile.from_dict(saved)
    assert old.call_ms == () and old.interleaved is False


def test_sync_escape_on_the_cpu_is_none_and_never_calls():
    calls = []
    assert sync_escape(lambda: calls.append(1)) is None
    assert calls == []


def test_sync_verdict_tolerates_the_floor_and_a_fraction_of_the_event_time():
    floor = device_activity.SYNC_FLOOR_US
    fraction = device_activity.SYNC_FRACTION
    assert sync_verdict([], []) is None
    assert sync_verdict([floor * 0.5] * 5, [10.0] * 5) is None
    assert sync_verdict([floor + 0.5 * fraction * 1000.0] * 5, [1000.0] * 5) is None
    reason = sync_verdict([floor * 4] * 5, [10.0] * 5)
    assert reason is not None
    assert "escaped the caller's stream" in reason and "median of 5 calls" in reason


def test_sync_verdict_judges_the_median_not_one_outlier():
    floor = device_activity.SYNC_FLOOR_US
    assert sync_verdict([0.0, 0.0, floor * 100, 0.0, 0.0], [10.0] * 5) is None
    assert sync_verdict([floor * 3, floor * 3, 0.0, floor * 3, 0.0], [10.0] * 5) is not None


def test_the_profile_records_through_cupti_directly_when_it_can(monkeypatch):
    """With ``cupti-python`` the marker sequence is recorded by the direct
    recorder (milliseconds to switch on), and torch's profiler, seconds to
    set up, is never started."""
    import torch
    import torch.profiler
    from gemmreg.instruments import cupti_recorder

    class Recorder:
        started = stopped = 0

        def start(self):
            self.started += 1

        def stop(self):
            self.stopped += 1
            return markers(2)

    class Event:
        def record(self):
            pass

        def synchronize(self):
            pass

    def no_profiler(*args, **kwargs):
        raise AssertionError("torch's profiler started")

    queued = []
    recorder = Recorder()
    monkeypatch.setattr(cupti_recorder, "open_recorder", lambda: (recorder, ""))
    monkeypatch.setattr(torch.profiler, "profile", no_profiler)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(device_activity, "gpu_spin", lambda t, cycles: queued.append("M"))
    monkeypatch.setattr(device_activity.time, "sleep", lambda s: None)
    found = device_activity._record([lambda: queued.append("c")] * 2)
    assert found == markers(2)
    assert (recorder.started, recorder.stopped) == (1, 1)
    assert queued == ["M", "c", "M", "c", "M"]
