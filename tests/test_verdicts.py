"""The verdict logic on synthetic process records."""

from __future__ import annotations

import math

import attrs
import pytest
from gemmreg.timing import look_verdicts, stats
from gemmreg.timing.timing_records import KernelSummary, ProcessRecord
from gemmreg.timing.verdicts import SUSPICIOUS_SPEEDUP, all_verdicts, judge, pair_key


def summary(name, ms=1.0, math_mode="ieee_fp32", generator="normal", status="timed", **extra):
    return KernelSummary(
        kernel=name,
        package="p 1",
        precision=f"{math_mode} (detail)",
        math=math_mode,
        generator=generator,
        status=status,
        process_medians_ms=(ms,) * 5 if status == "timed" else (),
        center_ms=ms if status == "timed" else None,
        low_ms=ms if status == "timed" else None,
        high_ms=ms if status == "timed" else None,
        **extra,
    )


def records(per_process, regime="end-to-end", pair=("base", "new")):
    """Process records whose paired log-ratio (base/new) is the given value."""
    return [
        ProcessRecord(process=p, status="ok", log_ratios={regime: {pair_key(*pair): v}})
        for p, v in enumerate(per_process)
    ]


def verdict(per_process, base=None, new=None, **kwargs):
    return judge(
        base or summary("base"),
        new or summary("new"),
        records(per_process),
        confidence=kwargs.get("confidence", stats.CONFIDENCE),
        margin=kwargs.get("margin", stats.DEFAULT_MARGIN),
    )


def test_consistent_processes_give_faster_and_slower():
    faster = verdict([math.log(1.05) + d for d in (0.001, -0.002, 0.0, 0.002, -0.001)])
    assert faster.verdict == "faster" and faster.speedup == pytest.approx(1.05, rel=1e-3)
    assert faster.interval[0] > 1
    slower = verdict([-math.log(1.05) + d for d in (0.001, -0.002, 0.0, 0.002, -0.001)])
    assert slower.verdict == "slower"


def test_a_tight_interval_around_one_is_equivalent_and_a_wide_one_is_no_claim():
    assert verdict([0.001, -0.001, 0.0005, -0.0005, 0.0]).verdict == "equivalent"
    wide = verdict([0.05, -0.04, 0.03, -0.05, 0.01])
    assert wide.verdict == "inconclusive" and "includes 1" in wide.explanation


def test_one_outlier_process_blocks_a_claim():
    # Four processes say 3% faster, one says 3% slower: not a claim.
    assert verdict([0.03, 0.03, 0.03, 0.03, -0.03]).verdict == "inconclusive"


def test_too_few_processes_is_inconclusive_with_the_reason():
    v = verdict([0.2, 0.21])
    assert v.verdict == "inconclusive" and "at least 3" in v.explanation


def test_a_real_difference_inside_the_margin_is_equivalent_and_says_so():
    v = verdict([math.log(1.004) + d for d in (0.0001, -0.0001, 0.0, 0.0002, -0.0002)])
    assert v.verdict == "equivalent" and "real but inside the margin" in v.explanation
    past = verdict([math.log(1.02) + d for d in (0.0001, -0.0001, 0.0, 0.0002, -0.0002)])
    assert past.verdict == "faster" and "reaches past" in past.explanation


def test_a_real_difference_just_inside_the_margin_never_prints_as_the_margin():
    """0.996% rounded to two decimals is 1.00%, which the margin of 1.0% does
    not hold: the explanation keeps the digits that show it inside."""
    v = verdict([math.log(1.00996) + d for d in (1e-6, -1e-6, 0.0, 2e-6, -2e-6)])
    assert v.verdict == "equivalent", v.explanation
    assert "a difference of 0.996%, real but inside the margin" in v.explanation
    plain = verdict([math.log(1.004) + d for d in (1e-6, -1e-6, 0.0, 2e-6, -2e-6)])
    assert "a difference of 0.40%, real but inside the margin" in plain.explanation


def test_escaped_work_and_above_peak_make_the_verdict_invalid():
    cheat = summary("new", ms=0.01, invalid=("process 0: work escaped its timed interval: x",))
    v = verdict([math.log(97.0)] * 5, new=cheat)
    assert v.verdict == "invalid" and "escaped" in v.explanation
    peak = summary("new", invalid=("ABOVE PEAK: 2000 TFLOP/s > datasheet 989.4 for bf16",))
    assert verdict([math.log(2.0)] * 5, new=peak).verdict == "invalid"


def test_unlike_precision_and_inputs_are_stated():
    v = verdict([0.0] * 5, new=summary("new", math_mode="tf32", generator="other"))
    assert any("UNLIKE PRECISION" in n for n in v.notes)
    assert any("generators differ" in n for n in v.notes)


def test_a_kernel_without_timing_gets_no_verdict():
    v = verdict([0.0] * 5, new=summary("new", status="crashed"))
    assert v.verdict == "no verdict" and "new has no timing" in v.explanation


def test_regimes_that_disagree_are_stated():
    both = records([math.log(1.08)] * 3 + [math.log(1.081), math.log(1.079)])
    graph = records([0.0, 0.001, -0.001, 0.0005, -0.0005], regime="graph replay")
    merged = [
        attrs.evolve(r, log_ratios={**r.log_ratios, **g.log_ratios})
        for r, g in zip(both, graph, strict=True)
    ]
    v = judge(summary("base"), summary("new"), merged, confidence=0.995, margin=0.01)
    assert v.verdict == "faster"
    assert [r.word for r in v.regimes] == ["faster", "equivalent", "not measured"]
    assert any(n.startswith("regimes disagree") for n in v.notes)


def test_every_pair_is_judged_with_a_corrected_confidence():
    names = ["a", "b", "c"]
    summaries = [summary(n) for n in names]
    recs = [
        ProcessRecord(
            process=p,
            status="ok",
            log_ratios={
                "end-to-end": {
                    pair_key("a", "b"): 0.0,
                    pair_key("a", "c"): 0.0,
                    pair_key("b", "c"): 0.0,
                }
            },
        )
        for p in range(5)
    ]
    out = all_verdicts(summaries, recs, confidence=0.995, margin=0.01)
    assert [(v.baseline, v.kernel) for v in out] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert all(v.confidence == pytest.approx(1 - 0.005 / 3) for v in out)


def test_a_kernel_the_problem_was_not_asked_of_pairs_with_nothing():
    """An fp32-only kernel in an fp16 sweep point: its row says why, and no
    NO VERDICT row stands for a question nobody asked. A kernel that crashed
    keeps its rows (something went wrong), and the correction counts only the
    pairs judged: those two are NO VERDICT at any level, so counting them
    would only widen the one real pair's interval."""
    summaries = [
        summary("a"),
        summary("b"),
        summary("fp32_only", status="skipped", asked=False),
        summary("crashed", status="crashed"),
    ]
    recs = [
        ProcessRecord(process=p, status="ok", log_ratios={"end-to-end": {pair_key("a", "b"): 0.0}})
        for p in range(5)
    ]
    out = all_verdicts(summaries, recs, confidence=0.995, margin=0.01)
    assert [(v.baseline, v.kernel) for v in out] == [("a", "b"), ("a", "crashed"), ("b", "crashed")]
    assert [v.verdict for v in out][1:] == ["no verdict", "no verdict"]
    assert out[0].confidence == pytest.approx(0.995)  # one pair judged, not three or six


def test_beating_a_vendor_library_tenfold_is_flagged():
    vendor = summary("base", ms=1.0, vendor_library=True)
    fast = summary("new", ms=1.0 / (SUSPICIOUS_SPEEDUP * 2))
    v = verdict([math.log(20.0)] * 5, base=vendor, new=fast)
    assert any("SUSPICIOUS" in n for n in v.notes)


def test_a_device_kernel_ratio_on_the_other_side_of_one_is_stated():
    """CUPTI's device-kernel figure comes from one process: no interval, but a
    ratio that contradicts the verdict is stated (launch-bound kernels)."""
    base = summary("base", device_kernel_ms=0.010)
    new = summary("new", device_kernel_ms=0.012)  # more device work per call...
    v = verdict([math.log(1.05)] * 5, base=base, new=new)  # ...yet faster end to end
    assert v.verdict == "faster"
    assert v.regimes[-1].estimate == pytest.approx(0.010 / 0.012)
    assert any(n.startswith("regimes disagree") for n in v.notes)


def test_regimes_that_claim_opposite_words_are_stated_even_with_nothing_else_beside_them():
    """End to end SLOWER, graph replay FASTER, no device figure: two claims
    that contradict each other (the note was once left to a third regime)."""
    both = [
        ProcessRecord(
            process=p,
            status="ok",
            log_ratios={
                "end-to-end": {pair_key("base", "new"): -math.log(1.05) + d},
                "graph replay": {pair_key("base", "new"): math.log(1.05) + d},
            },
        )
        for p, d in enumerate((0.001, -0.002, 0.0, 0.002, -0.001))
    ]
    v = judge(summary("base"), summary("new"), both, confidence=0.95, margin=0.01)
    assert v.verdict == "slower" and v.regimes[1].word == "faster"
    assert v.regimes[-1].word == "not measured"
    assert any(n.startswith("regimes disagree") for n in v.notes)


def test_interleaved_device_calls_give_the_paired_ratio_not_the_ratio_of_medians():
    """The clock drifts by 30% over ten rounds and the kernel slows by 20% in
    the later half; the two medians (given equal here) say 1.0x, the rounds
    say otherwise, and the figure is what the rounds say."""
    drift = [1.0 + 0.3 * r / 9 for r in range(10)]
    base_calls = tuple(0.011 * d for d in drift)
    new_calls = tuple(0.010 * d for d in drift[:5]) + tuple(0.010 * d * 1.2 for d in drift[5:])
    paired = {"device_interleaved": True}
    base = summary("base", device_kernel_ms=0.0125, device_call_ms=base_calls, **paired)
    new = summary("new", device_kernel_ms=0.0125, device_call_ms=new_calls, **paired)
    regime = verdict([math.log(1.05)] * 5, base=base, new=new).regimes[-1]
    logs = sorted(math.log(b / n) for b, n in zip(base_calls, new_calls, strict=True))
    assert regime.estimate == pytest.approx(math.exp(sum(logs[2:8]) / 6))  # trimmed 20% each end
    assert regime.estimate != pytest.approx(1.0)  # the medians' ratio
    assert "10 interleaved rounds" in regime.reason and regime.word == "one process"


def paired_device(ratios):
    """Summaries whose interleaved device calls give these per-round ratios base/new."""
    base_calls = tuple(0.01 * r for r in ratios)
    new_calls = (0.01,) * len(ratios)
    common = {"device_interleaved": True, "device_kernel_ms": 0.01}
    return (
        summary("base", device_call_ms=base_calls, **common),
        summary("new", device_call_ms=new_calls, **common),
    )


def test_a_device_figure_its_own_rounds_cannot_tell_from_one_contradicts_nothing():
    """FASTER end to end beside a 0.999x device figure whose rounds spread
    +-4%: no "regimes disagree" note; the rounds' own range is in the reason."""
    noisy = [0.999 * (1.04 if r % 2 else 1 / 1.04) for r in range(40)]
    base, new = paired_device(noisy)
    v = verdict([math.log(1.05)] * 5, base=base, new=new)
    device = v.regimes[-1]
    assert device.estimate == pytest.approx(0.999, abs=0.002)
    assert not device.settled and "its rounds alone span" in device.reason
    assert v.verdict == "faster" and not any(n.startswith("regimes disagree") for n in v.notes)


def test_a_device_figure_its_rounds_put_below_one_still_contradicts_faster():
    tight = [0.97 * (1.005 if r % 2 else 1 / 1.005) for r in range(40)]
    base, new = paired_device(tight)
    v = verdict([math.log(1.05)] * 5, base=base, new=new)
    assert v.regimes[-1].settled
    assert any(n.startswith("regimes disagree") and "0.97x" in n for n in v.notes)


@pytest.mark.parametrize(
    "base_extra, new_extra",
    [
        ({"device_call_ms": (0.01,) * 6}, {"device_call_ms": (0.02,) * 6}),  # not interleaved
        (
            {"device_call_ms": (0.01,) * 6, "device_interleaved": True},
            {"device_call_ms": (0.02,) * 5, "device_interleaved": True},  # unequal rounds
        ),
        (
            {"device_call_ms": (0.01,) * 4, "device_interleaved": True},
            {"device_call_ms": (0.02,) * 4, "device_interleaved": True},  # too few rounds
        ),
    ],
)
def test_without_paired_rounds_the_device_ratio_is_the_ratio_of_medians(base_extra, new_extra):
    base = summary("base", device_kernel_ms=0.03, **base_extra)
    new = summary("new", device_kernel_ms=0.01, **new_extra)
    regime = verdict([0.0] * 5, base=base, new=new).regimes[-1]
    assert regime.estimate == pytest.approx(3.0)
    assert "interleaved" not in regime.reason


def test_work_that_escaped_in_any_process_or_the_profile_makes_the_kernel_invalid(fake_plugins):
    from fake_plugins import fp32_spec
    from gemmreg.contract.records import Problem
    from gemmreg.discovery.registry import Origin, RegisteredKernel
    from gemmreg.timing.summaries import summarize
    from gemmreg.timing.timing_records import ProcessRun

    kernel = RegisteredKernel(
        spec=fp32_spec("k", lambda a, b, out: None),
        origin=Origin(plugin="k", module="k", distribution="d", version="1"),
    )
    problem = Problem(m=64, n=64, k=64)

    def runs(escaped=""):
        return [
            ProcessRun(kernel="k", process=p, status="timed", round_ms=(1.0,), escaped=escaped)
            for p in range(3)
        ]

    clean = summarize(kernel, problem, runs(), None, "cpu")
    assert clean.invalid == ()
    synced = summarize(kernel, problem, runs("device busy 180 us after the end event"), None, "cpu")
    assert len(synced.invalid) == 3 and "escaped its timed interval" in synced.invalid[0]
    profile = {"profile": {"kernel_ms_per_call": 0.2, "launches_per_call": 2.0, "escaped": "x"}}
    profiled = summarize(kernel, problem, runs(), None, "cpu", profile)
    assert profiled.invalid == ("device profile: x",)
    assert profiled.device_kernel_ms == 0.2 and profiled.launches_per_call == 2.0
    assert profiled.device_call_ms == () and profiled.device_interleaved is False
    profile["profile"].update(escaped=None, call_ms=[0.1, 0.3], interleaved=True)
    paired = summarize(kernel, problem, runs(), None, "cpu", profile)
    assert paired.device_call_ms == (0.1, 0.3) and paired.device_interleaved is True


def test_an_interpreted_and_a_native_kernel_get_no_speed_claim():
    """Triton's interpreter against native code: the ratio compares NumPy on
    the host with a BLAS, not the kernels, so no word claims a speed."""
    interpreted = summary("new", ms=25.0, execution="interpreted")
    for base, new in ((summary("base"), interpreted), (interpreted, summary("base"))):
        v = judge(
            base, new, records([-math.log(25.0)] * 5), confidence=0.995, margin=stats.DEFAULT_MARGIN
        )
        assert v.verdict == "no verdict" and v.speedup is None and v.interval is None
        assert "interpreted and a native kernel" in v.explanation
        assert v.notes[0] == (
            "UNLIKE EXECUTION: new runs under Triton's interpreter (a correctness tool), "
            "base natively: the ratio says nothing about the kernels"
        )


def test_two_interpreted_kernels_are_like_for_like_and_judged():
    base = summary("base", execution="interpreted")
    new = summary("new", execution="interpreted")
    v = verdict([math.log(1.05) + d for d in (0.001, -0.002, 0.0, 0.002, -0.001)], base, new)
    assert v.verdict == "faster" and not any("UNLIKE EXECUTION" in n for n in v.notes)


def test_an_invalid_kernel_keeps_its_word_in_an_unlike_pair():
    bad = summary("base", invalid=("process 0: work escaped its timed interval: x",))
    v = verdict([0.0] * 5, base=bad, new=summary("new", execution="interpreted"))
    assert v.verdict == "invalid" and v.notes[0].startswith("UNLIKE EXECUTION")


def test_execution_follows_the_triton_declaration_and_the_backend(fake_plugins, monkeypatch):
    """The core decides it from ``Capabilities(triton=...)`` and whether its
    backend interprets Triton; the plugin never says "interpreted" itself."""
    from fake_plugins import fp32_spec
    from gemmreg.contract import backend
    from gemmreg.contract.records import Capabilities, Precision, Problem
    from gemmreg.discovery.registry import Origin, RegisteredKernel
    from gemmreg.timing.summaries import summarize
    from gemmreg.timing.timing_records import ProcessRun

    def kernel(name, triton):
        capabilities = Capabilities(
            dtypes={"fp32"},
            backends={"cpu", "cuda"},
            precision={"fp32": Precision(math="ieee_fp32")},
            triton=triton,
        )
        spec = fp32_spec(name, lambda a, b, out: None, capabilities=capabilities)
        return RegisteredKernel(
            spec=spec, origin=Origin(plugin=name, module=name, distribution="d", version="1")
        )

    def execution(name, triton):
        runs = [
            ProcessRun(kernel=name, process=p, status="timed", round_ms=(1.0,)) for p in range(3)
        ]
        return summarize(kernel(name, triton), Problem(m=8, n=8, k=8), runs, None, "x").execution

    interpreting = attrs.evolve(backend.current(), triton_interpreter=True)
    monkeypatch.setattr(backend, "current", lambda: interpreting)
    assert (execution("t", True), execution("n", False)) == ("interpreted", "native")
    compiled = attrs.evolve(interpreting, triton_interpreter=False)
    monkeypatch.setattr(backend, "current", lambda: compiled)
    assert execution("t", True) == "native"


def test_an_interrupted_comparison_keeps_no_estimate_and_names_the_processes_that_finished():
    """Partial data is no basis for a claim nor for an estimate a summary
    would average: the pair keeps its name, loses its speedup, interval and
    regime figures, and names the 3 processes that finished, not the 8 asked."""
    summaries = [summary("a"), summary("b")]
    recs = [
        ProcessRecord(process=p, status="ok", log_ratios={"end-to-end": {pair_key("a", "b"): r}})
        for p, r in enumerate((0.3, 0.31, 0.29))
    ]
    (whole,) = look_verdicts.verdicts(summaries, recs, confidence=0.995, margin=0.01, processes=8)
    assert whole.speedup is not None and whole.processes == 8
    (cut,) = look_verdicts.interrupted([whole], recs)
    assert (cut.verdict, cut.speedup, cut.interval, cut.regimes) == ("no verdict", None, None, ())
    assert cut.processes == 3 and cut.explanation == "partial: interrupted"
    assert (cut.baseline, cut.kernel) == ("a", "b")


def hair_from_one(high: float) -> list[float]:
    """Five processes' log-ratios whose 99.5% interval ends at ``high``,
    reaching well past the -1% margin below it."""
    spread = [0.004, -0.004, 0.002, -0.002, 0.0]
    half = stats.mean_halfwidth(spread)
    return [math.log(high) - half + d for d in spread]


def test_an_interval_that_misses_1_by_a_hair_never_prints_an_end_as_1():
    """Four digits printed SLOWER's interval 0.98426 to 0.99997 as ``0.9843
    to 1``, and its explanation said that interval "excludes 1"."""
    from gemmreg.reporting.render_verdicts import interval_text

    slower = verdict(hair_from_one(0.99997))
    assert slower.verdict == "slower" and slower.interval[1] == pytest.approx(0.99997)
    assert "0.99997 over 5 processes excludes 1" in slower.explanation
    assert interval_text(slower).endswith(" to 0.99997")
    faster = verdict([-v for v in hair_from_one(0.99997)])
    assert faster.verdict == "faster" and "interval 1.00003 to " in faster.explanation
    assert interval_text(faster).startswith("1.00003 to ")


def test_the_compare_legend_prints_a_small_margin_as_given():
    """The legend under compare's table said ``EQUIVALENT when inside +-0.0%``
    for ``--margin 0.0004``, as the explanations once did."""
    from gemmreg.reporting import compare_legend, runs
    from test_host_pace import DECODE

    _, reports, _ = runs.load_run(DECODE)
    small = attrs.evolve(reports[1], margin=0.0004)
    assert "EQUIVALENT when inside +-0.04% (even if it" in "\n".join(compare_legend.legend(small))


def test_a_small_margin_is_printed_as_given():
    """``--margin 0.001``: the explanation said "reaches past +-0.0%"."""
    v = verdict([-0.00004 + d for d in (1e-6, -1e-6, 0.0, 2e-6, -2e-6)], margin=0.00001)
    assert v.verdict == "slower" and v.explanation.endswith("reaches past +-0.001%")
    assert "0.99996 to 0.99996" in v.explanation
