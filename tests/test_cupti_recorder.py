"""The direct CUPTI recorder's reading of activity records, on constructed
records (cupti-python is not installed on a CPU machine)."""

from __future__ import annotations

from types import SimpleNamespace

from gemmreg.instruments import cupti_recorder

KINDS = {10: "kernel", 1: "memcpy", 2: "memset"}


def record(kind, start, end, name=None, stream=7):
    return SimpleNamespace(kind=kind, start=start, end=end, name=name, stream_id=stream)


def test_records_become_activities_in_us_from_the_first_start():
    found = cupti_recorder.activities_from_records(
        [
            record(10, 5_000, 9_000, "gemm_kernel"),
            record(2, 1_000, 2_000, name="ignored for a memset"),
            record(99, 0, 100, "an activity kind a call cannot cause"),
        ],
        KINDS,
    )
    assert [(a.name, a.kind, a.stream, a.start_us, a.end_us) for a in found] == [
        ("memset", "memset", 7, 0.0, 1.0),
        ("gemm_kernel", "kernel", 7, 4.0, 8.0),
    ]


def test_no_records_of_interest_is_an_empty_list():
    assert cupti_recorder.activities_from_records([record(99, 0, 1)], KINDS) == []


def test_the_recorder_says_why_when_cupti_python_is_missing(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_cupti(name, *args, **kwargs):
        if name == "cupti":
            raise ImportError("No module named 'cupti'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupti)
    monkeypatch.setattr(cupti_recorder, "_OPENED", [])  # not yet asked in this process
    recorder, why = cupti_recorder.open_recorder()
    assert recorder is None
    assert why.startswith("cupti-python not available (ImportError")


class FakeCupti:
    """CUPTI's activity API as the recorder calls it: records handed back on a flush."""

    class ActivityKind:
        CONCURRENT_KERNEL, MEMCPY, MEMSET = 10, 1, 2

    def __init__(self, pending):
        self.enabled: set[int] = set()
        self.pending = pending

    def activity_register_callbacks(self, requested, completed):
        self.requested, self.completed = requested, completed

    def activity_enable(self, kind):
        self.enabled.add(kind)

    def activity_disable(self, kind):
        self.enabled.discard(kind)

    def activity_flush_all(self, flag):
        self.completed(list(self.pending))


def test_start_and_stop_switch_every_kind_and_return_what_was_flushed():
    fake = FakeCupti([record(10, 0, 3_000, "k")])
    recorder = cupti_recorder.CuptiRecorder(fake)
    assert fake.requested() == (cupti_recorder.RECORD_BUFFER_BYTES, 0)
    recorder.start()
    assert fake.enabled == {10, 1, 2}
    found = recorder.stop()
    assert fake.enabled == set()
    assert [(a.name, a.duration_us) for a in found] == [("k", 3.0)]
    fake.pending = []
    recorder.start()
    assert recorder.stop() == []  # nothing carried over from the last stretch


def test_mangled_kernel_names_read_as_torchs_profiler_shows_them():
    """CUPTI names a C++ kernel by its symbol; the profiling process (torch's
    profiler) by its demangled name: accounting compares the two."""
    symbol = "_ZN8cublasLt19splitKreduce_kernelILi32ELi16Eif13__nv_bfloat16EEvv"
    (found,) = cupti_recorder.activities_from_records([record(10, 0, 1, symbol)], KINDS)
    assert found.name == "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16>()"
    assert cupti_recorder.demangled("nvjet_sm90_tst_64x16_64x16_1x1_h_bz_splitK_NNT") == (
        "nvjet_sm90_tst_64x16_64x16_1x1_h_bz_splitK_NNT"
    )
    assert cupti_recorder.demangled("_Znot a symbol") == "_Znot a symbol"


def test_the_recorder_is_opened_once_per_process(monkeypatch):
    """A worker serves a sweep's points and both kinds of task: CUPTI's
    callbacks are registered once, and every later ask gets that recorder."""
    made = []

    def make():
        made.append(cupti_recorder.CuptiRecorder(FakeCupti([])))
        return made[-1], ""

    monkeypatch.setattr(cupti_recorder, "_OPENED", [])
    monkeypatch.setattr(cupti_recorder, "_open", make)
    first, _ = cupti_recorder.open_recorder()
    again, _ = cupti_recorder.open_recorder()
    assert first is again is made[0] and len(made) == 1
