"""The end-to-end vetoes of :mod:`gemmreg.timing.vetoes`: a call faster than
reading A and B at the datasheet bandwidth, and a timed call much shorter
than its own profiled device work, are INVALID; honest kernels at the
shapes where they come closest, and the committed H200 runs, keep their
verdicts."""

from __future__ import annotations

import math
from pathlib import Path

import attrs
from conftest import REPO
from gemmreg.contract.records import Problem
from gemmreg.reporting import runs
from gemmreg.timing import rejudging, stats, vetoes
from gemmreg.timing.timing_records import CompareReport, KernelSummary, ProcessRecord
from gemmreg.timing.verdicts import pair_key

H200 = "NVIDIA H200"
LAUNCH_BOUND = Problem(m=16, n=16, k=65536, dtype="bf16")
"""The shape where wrappers of torch.mm that skipped work read 8.2x FASTER."""
MEMORY_BOUND = Problem(m=32, n=8192, k=8192, dtype="bf16")
"""The shape where honest split-K came nearest the memory roof (82% of it)."""


def summary(name: str, ms: float, **extra: object) -> KernelSummary:
    return KernelSummary(
        kernel=name,
        package="p 1",
        precision="bf16",
        math="bf16",
        generator="normal",
        status="timed",
        process_medians_ms=(ms,) * 5,
        center_ms=ms,
        low_ms=ms,
        high_ms=ms,
        **extra,  # type: ignore[arg-type]
    )


def busy(ms: float, **more: object) -> dict[str, object]:
    """A kernel's record from the profiling process, as ``CompareReport.profiles`` holds it."""
    return {"profile": {"busy_ms_per_call": ms, "kernel_ms_per_call": ms, **more}}


# --- the memory roof -------------------------------------------------------


def test_the_bytes_are_a_and_b_in_the_problems_dtype():
    assert vetoes.read_bytes(MEMORY_BOUND) == (32 * 8192 + 8192 * 8192) * 2
    assert vetoes.read_bytes(attrs.evolve(MEMORY_BOUND, dtype="fp32")) == (
        (32 * 8192 + 8192 * 8192) * 4
    )


def test_a_call_faster_than_reading_a_and_b_at_peak_bandwidth_is_beyond_the_roof():
    floor_ms = vetoes.read_bytes(MEMORY_BOUND) / 4.8e12 * 1e3  # 28.07 us on the H200
    why = vetoes.memory_roof(floor_ms / 2, MEMORY_BOUND, H200)
    assert why.startswith("BEYOND MEMORY ROOF")
    assert "134.7 MB" in why and "4.8 TB/s" in why and "28.07 us" in why and "14.04 us" in why


def test_honest_kernels_near_the_roof_and_devices_without_a_binding_roof_keep_their_figures():
    # split-K's fastest end-to-end process at 32x8192x8192 bf16: 34.4 us, 82% of the roof
    assert vetoes.memory_roof(0.0344, MEMORY_BOUND, H200) == ""
    floor_ms = vetoes.read_bytes(MEMORY_BOUND) / 4.8e12 * 1e3
    assert vetoes.memory_roof(floor_ms, MEMORY_BOUND, H200) == ""  # at the roof, not past it
    assert vetoes.memory_roof(floor_ms / 2, MEMORY_BOUND, "cpu") == ""  # no peaks
    # an Infinity Cache that the L2 flush leaves warm can serve A and B faster than HBM
    assert vetoes.memory_roof(floor_ms / 2, MEMORY_BOUND, "AMD Instinct MI300X") == ""
    assert vetoes.memory_roof(floor_ms / 2, MEMORY_BOUND, "AMD Instinct MI250X") != ""


def test_the_nearest_an_honest_kernel_came_to_the_memory_roof_keeps_its_figures():
    """``triton_tuned``'s grouped GEMM at Mixtral's decode routing on the H200:
    6 of 8 experts' weights read at 85% of the datasheet bandwidth (fastest
    process), the nearest any committed run came; judged again, no veto."""
    run = (
        Path(__file__).resolve().parents[1]
        / "evidence/2026-12-04-h200-fp8-llm-and-grouped-roof/grouped"
    )
    decode = [r for r in runs.load_run(run)[1] if r.problem.m < 64]
    assert len(decode) == 2
    nearest = 0.0
    for report in decode:
        for s in vetoes.revetted(report).summaries:
            assert s.invalid == () and s.low_ms is not None
            floor_ms = vetoes.read_bytes(report.problem) / 4.8e12 * 1e3
            assert vetoes.memory_roof(s.low_ms, report.problem, H200) == ""
            nearest = max(nearest, floor_ms / s.low_ms)
    assert 0.84 < nearest < vetoes.MEMORY_ROOF_FRACTION


# --- the regimes' floor ----------------------------------------------------


def test_a_timed_call_far_shorter_than_its_profiled_device_work_is_invalid():
    # a wrapper of torch.mm that did its work only where it was profiled
    cheat = summary("cheat", 0.0015, device_kernel_ms=0.0075, launches_per_call=2.0)
    (why,) = vetoes.kernel_vetoes(cheat, LAUNCH_BOUND, H200, busy(0.00725))
    assert why.startswith("REGIMES DISAGREE ON THE WORK")
    assert "1.5 us" in why and "7.25 us" in why and "4.833x as long" in why


def test_honest_kernels_whose_end_to_end_time_is_near_or_above_their_device_time_pass():
    # torch_ref at 16x16x65536: 12.1 us end to end, 7.25 us of device work (launch-bound)
    assert vetoes.kernel_vetoes(summary("ref", 0.0121), LAUNCH_BOUND, H200, busy(0.00725)) == ()
    # the lowest honest ratio committed: hip_naive at 8192^3 fp32, 367 against 394 ms
    big = Problem(m=8192, n=8192, k=8192)
    assert vetoes.kernel_vetoes(summary("naive", 367.4), big, H200, busy(393.6)) == ()


def test_overlapping_streams_are_counted_once():
    """Four kernels at once on four streams: 4x the summed time, one busy interval."""
    wide = summary("wide", 0.010, device_kernel_ms=0.036, launches_per_call=4.0)
    assert (
        vetoes.kernel_vetoes(wide, LAUNCH_BOUND, H200, busy(0.009, kernel_ms_per_call=0.036)) == ()
    )
    # without the union (a run saved before it), the summed time over the launches stands in
    assert vetoes.kernel_vetoes(wide, LAUNCH_BOUND, H200, None) == ()
    cheat = summary("cheat", 0.001, device_kernel_ms=0.036, launches_per_call=4.0)
    assert vetoes.kernel_vetoes(cheat, LAUNCH_BOUND, H200, None) != ()


def test_a_kernel_without_a_profile_or_timing_has_nothing_to_disagree_with():
    assert vetoes.kernel_vetoes(summary("k", 0.0015), LAUNCH_BOUND, H200, None) == ()
    untimed = KernelSummary(
        kernel="k", package="p", precision="bf16", math="bf16", generator="g", status="error"
    )
    assert vetoes.kernel_vetoes(untimed, LAUNCH_BOUND, H200, busy(1.0)) == ()


def test_summarize_sets_the_vetoes_where_it_sets_the_peak_veto(fake_plugins):
    from fake_plugins import fp32_spec
    from gemmreg.discovery.registry import Origin, RegisteredKernel
    from gemmreg.timing.summaries import summarize
    from gemmreg.timing.timing_records import ProcessRun

    kernel = RegisteredKernel(
        spec=fp32_spec("k", lambda a, b, out: None),
        origin=Origin(plugin="k", module="k", distribution="d", version="1"),
    )
    problem = Problem(m=16, n=16, k=65536)  # fp32: 8.4 MB of A and B, 1.75 us at 4.8 TB/s
    timed = [ProcessRun(kernel="k", process=p, status="timed", round_ms=(0.002,)) for p in range(3)]
    honest = summarize(kernel, problem, timed, None, H200, busy(0.0019))
    assert honest.invalid == ()
    (why,) = summarize(kernel, problem, timed, None, H200, busy(0.0073)).invalid
    assert why.startswith("REGIMES DISAGREE ON THE WORK")
    fast = [attrs.evolve(r, round_ms=(0.001,)) for r in timed]
    assert [w.split(":")[0] for w in summarize(kernel, problem, fast, None, H200).invalid] == [
        "BEYOND MEMORY ROOF"
    ]


# --- a pair judged again ---------------------------------------------------


def pair_report(base_ms: float, new_ms: float, base_dev: float, new_dev: float) -> CompareReport:
    """Five processes whose end-to-end ratio is base_ms/new_ms, and one
    profiling process whose interleaved rounds say base_dev/new_dev."""
    key = pair_key("base", "new")
    log = math.log(base_ms / new_ms)
    records = [
        ProcessRecord(process=p, status="ok", log_ratios={"end-to-end": {key: log + d}})
        for p, d in enumerate((0.001, -0.002, 0.0, 0.002, -0.001))
    ]
    calls = {"base": [base_dev * (1 + 0.001 * i) for i in range(9)], "new": [new_dev] * 9}
    summaries = tuple(
        summary(
            name,
            ms,
            device_kernel_ms=dev,
            launches_per_call=1.0,
            device_call_ms=calls[name],
            device_interleaved=True,
        )
        for name, ms, dev in (("base", base_ms, base_dev), ("new", new_ms, new_dev))
    )
    profiles = {s.kernel: busy(s.device_kernel_ms or 0.0) for s in summaries}
    return CompareReport(
        problem=LAUNCH_BOUND,
        processes=5,
        seed=0,
        clock="",
        device_name=H200,
        summaries=summaries,
        verdicts=(),
        runs=(),
        records=tuple(records),
        profiles=profiles,
    )


def test_a_pair_whose_end_to_end_speedup_its_device_work_cannot_explain_is_invalid():
    # end to end 8.2x, device kernels 0.99x: the new kernel skipped its work where timed
    report = pair_report(0.0121, 0.0121 / 8.2, 0.00725, 0.00725 / 0.99)
    (judged,) = rejudging.rejudge(report, stats.DEFAULT_MARGIN).verdicts
    assert judged.verdict == "invalid"
    assert "new: REGIMES DISAGREE ON THE WORK" in judged.explanation
    (disagree,) = [n for n in judged.notes if n.startswith("regimes disagree")]
    assert "end-to-end FASTER 8.2x" in disagree and "device kernels" in disagree


def test_a_disagreement_that_launch_overhead_explains_stays_a_note():
    # split-K against cuBLAS at 128x128x32768 in a committed H200 run: faster end to end
    # (one launch against two), slower in device kernels
    report = pair_report(0.0139, 0.0130, 0.0094, 0.0089 / 0.9)
    (judged,) = rejudging.rejudge(report, stats.DEFAULT_MARGIN).verdicts
    assert judged.verdict == "faster"
    assert any(n.startswith("regimes disagree") for n in judged.notes)


# --- the committed H200 runs -----------------------------------------------

EVIDENCE = REPO / "evidence"
JUDGED_AGAIN = (
    "2026-12-02-h200-device-processes",
    "2026-12-03-h200-kernel-speed-verdicts",
    "2026-12-01-h200-device-kernel-figures/c5",
)
"""Split-K and tuned Triton against cuBLAS at launch-bound, memory-bound and
compute-bound shapes, and an exploit (``side_stream_mm``) beside them."""
EXPLOITS = {"side_stream_mm"}


def committed_reports() -> list[CompareReport]:
    found = sorted(p.parent for f in JUDGED_AGAIN for p in (EVIDENCE / f).rglob("run.json.xz"))
    return [report for folder in found for report in runs.load_run(Path(folder))[1]]


def test_the_committed_h200_runs_keep_every_honest_verdict(monkeypatch):
    reports = [r for r in committed_reports() if r.records]
    margin = stats.DEFAULT_MARGIN
    with_vetoes = [rejudging.rejudge(r, r.margin or margin) for r in reports]
    monkeypatch.setattr(rejudging, "revetted", lambda report: report)
    without = [rejudging.rejudge(r, r.margin or margin) for r in reports]
    pairs = [
        (a, b)
        for x, y in zip(with_vetoes, without, strict=True)
        for a, b in zip(x.verdicts, y.verdicts, strict=True)
    ]
    assert len(pairs) > 200
    assert [a.verdict for a, _ in pairs] == [b.verdict for _, b in pairs]
    vetoed = {
        s.kernel
        for r in with_vetoes
        for s in r.summaries
        if any(w.startswith(("BEYOND MEMORY ROOF", "REGIMES DISAGREE")) for w in s.invalid)
    }
    assert vetoed == EXPLOITS


def test_a_users_device_with_a_memory_side_cache_gets_no_memory_roof(monkeypatch, tmp_path):
    from gemmreg.timing import peaks_file

    path = tmp_path / "peaks.toml"
    path.write_text(
        '[devices."My accelerator"]\npattern = "MyAccel"\nmemory_tb_s = 1.0\n'
        "fp32 = 20.0\nfp16 = 80.0\nbf16 = 80.0\n"
    )
    monkeypatch.setenv(peaks_file.PEAKS_ENV, str(path))
    floor_ms = vetoes.read_bytes(MEMORY_BOUND) / 1e12 * 1e3
    assert vetoes.memory_roof(floor_ms / 2, MEMORY_BOUND, "MyAccel 1").startswith("BEYOND")
    cached = tmp_path / "cached.toml"  # another file: the peaks of one are read once
    cached.write_text(path.read_text() + "memory_side_cache_mb = 256\n")
    monkeypatch.setenv(peaks_file.PEAKS_ENV, str(cached))
    assert vetoes.memory_roof(floor_ms / 2, MEMORY_BOUND, "MyAccel 1") == ""


def test_the_profiling_exploit_skips_its_work_unless_a_profiler_records(fake_plugins):
    """tests/timing_plugins/unless_profiled.py, which the GPU run of the
    regimes' floor uses: it must work where profiled and skip where timed
    (C's version counts the writes into it)."""
    import torch
    from timing_plugins.unless_profiled import _make_launch

    launch = _make_launch(Problem(m=4, n=4, k=8))
    a, b, out = torch.ones(4, 8), torch.ones(8, 4), torch.zeros(4, 4)
    launch(a, b, out)
    assert bool((out == 8).all())
    first = out._version
    launch(a, b, out)  # timed: nothing done, C still right
    assert out._version == first
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        launch(a, b, out)  # profiled: all the work
    assert out._version > first
    out.zero_()  # C written by someone else: computed again
    launch(a, b, out)
    assert bool((out == 8).all())
