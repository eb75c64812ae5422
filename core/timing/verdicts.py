"""From process runs to kernel summaries and verdicts an expert would sign.

A verdict rests on the paired per-round log-ratios of the two kernels,
averaged within each process and combined across processes with a Student-t
interval (:mod:`gemmreg.timing.stats`), at a confidence corrected for the number of
pairs judged at once (Bonferroni). Words:

- **equivalent**: the interval lies inside the margin (default +-1%), even
  when it excludes 1 (a real difference too small to matter); this is
  decided first;
- **faster** / **slower**: otherwise, the interval excludes a ratio of 1;
- **inconclusive**: anything else, or too few processes (with the reason;
  :mod:`gemmreg.timing.look_verdicts` adds how many processes it had);
- **invalid**: a kernel's figures cannot be trusted (its device work escaped
  the timed interval, or it ran above the datasheet peak): no speed claim;
- **no verdict**: a kernel has no timing at all, or the pair ran unlike: one
  kernel under Triton's interpreter, the other natively (its figures stay in
  the table; their ratio compares NumPy on the host with native code, not the
  kernels). Two interpreted kernels are like for like and are judged.

The primary regime is the end-to-end call (events, cold L2); the regimes
measured beside it in the timing processes (:mod:`gemmreg.timing.regimes`: the
warm graph replay) are judged the same way, and each regime measured in
processes of its own by its own rule (the device-kernel time, CUPTI, across
its profiling processes, one process's a figure beside them:
:mod:`gemmreg.timing.regime_device`). A disagreement between regimes
is stated beside the verdict. Kernel summaries are :mod:`gemmreg.timing.summaries`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gemmreg.contract import numbers
from gemmreg.timing import regimes, stats
from gemmreg.timing.timing_records import (
    KernelSummary,
    ProcessRecord,
    RegimeResult,
    Verdict,
    VerdictWord,
)

SUSPICIOUS_SPEEDUP = 10.0
"""A kernel more than this many times faster than a vendor library is flagged."""


def pair_key(baseline: str, kernel: str) -> str:
    return f"{baseline}|{kernel}"


def _regime(
    name: str, ratios: Sequence[float], confidence: float, margin: float, processes: int
) -> RegimeResult:
    if not ratios:
        return RegimeResult(regime=name, word="not measured", reason="no process measured it")
    judged = stats.judge_values(ratios, confidence, margin)
    if judged is None:
        reason = (
            f"{len(ratios)} of {processes} processes measured it; "
            f"a verdict needs at least {stats.MIN_PROCESSES}"
        )
        return RegimeResult(regime=name, word="inconclusive", reason=reason)
    word, interval, two_one_sided = judged
    return RegimeResult(
        regime=name,
        word=word,
        interval=interval,
        estimate=interval.estimate,
        reason=TWO_ONE_SIDED if two_one_sided else "",
    )


TWO_ONE_SIDED = stats.TWO_ONE_SIDED


def judge(
    baseline: KernelSummary,
    other: KernelSummary,
    records: Sequence[ProcessRecord],
    *,
    confidence: float,
    margin: float,
) -> Verdict:
    """The verdict on one pair, from the processes' paired log-ratios."""
    notes = []
    if baseline.math != other.math:
        notes.append(
            f"UNLIKE PRECISION: {baseline.kernel} computes {baseline.precision}, "
            f"{other.kernel} computes {other.precision}"
        )
    if baseline.generator != other.generator:
        notes.append(f"input generators differ: {baseline.generator} vs {other.generator}")
    common: dict[str, Any] = {"baseline": baseline.kernel, "kernel": other.kernel}
    if baseline.status != "timed" or other.status != "timed":
        missing = other.kernel if other.status != "timed" else baseline.kernel
        return Verdict(
            **common,
            verdict="no verdict",
            speedup=None,
            interval=None,
            explanation=f"{missing} has no timing",
            notes=tuple(notes),
        )
    invalid = [f"{s.kernel}: {why}" for s in (baseline, other) for why in s.invalid]
    unlike = _unlike_execution(baseline, other)
    if unlike:
        notes.insert(0, unlike)
    if unlike and not invalid:  # an invalid kernel is the louder news, so it keeps its word
        return Verdict(
            **common,
            verdict="no verdict",
            speedup=None,
            interval=None,
            explanation="no speed claim between an interpreted and a native kernel",
            confidence=confidence,
            notes=tuple(notes),
        )
    key = pair_key(baseline.kernel, other.kernel)
    processes = len(records)
    ratios = {
        name: [r.log_ratios[name][key] for r in records if key in r.log_ratios.get(name, {})]
        for name in regimes.process_regimes()
    }
    judged = (
        *(_regime(name, found, confidence, margin, processes) for name, found in ratios.items()),
        *(regime.judge(baseline, other, confidence, margin) for regime in regimes.profiled()),
    )
    primary = judged[0]
    interval = primary.interval
    speedup = interval.estimate if interval else None
    bounds = (interval.low, interval.high) if interval else None
    word: VerdictWord
    if invalid:
        word, why = "invalid", "no speed claim: " + "; ".join(invalid)
    else:
        word, why = _explain(primary, margin)
    if _disagree(judged):
        notes.append(
            "regimes disagree: "
            + ", ".join(
                f"{r.regime} {r.word.upper()} {numbers.ratio(r.estimate)}x"
                for r in judged
                if r.estimate is not None
            )
        )
    notes += _suspicious(baseline, other)
    return Verdict(
        **common,
        verdict=word,
        speedup=speedup,
        interval=bounds,
        explanation=why,
        confidence=interval.confidence if interval else confidence,
        regimes=judged,
        notes=tuple(notes),
        processes=processes,
    )


def _claimable(baseline: KernelSummary, other: KernelSummary) -> bool:
    """Whether the pair can be judged FASTER or SLOWER at all."""
    timed = baseline.status == "timed" and other.status == "timed"
    return timed and not _unlike_execution(baseline, other)


def _unlike_execution(baseline: KernelSummary, other: KernelSummary) -> str:
    """The note that rules out a speed claim when one kernel of the pair ran
    under Triton's interpreter and the other natively, else ``""``."""
    if baseline.execution == other.execution:
        return ""
    interpreted, native = (
        (baseline, other) if baseline.execution == "interpreted" else (other, baseline)
    )
    return (
        f"UNLIKE EXECUTION: {interpreted.kernel} runs under Triton's interpreter "
        f"(a correctness tool), {native.kernel} natively: the ratio says nothing "
        "about the kernels"
    )


def _disagree(judged: Sequence[RegimeResult]) -> bool:
    """A claim in one regime that another regime contradicts: the opposite
    claim, no claim at all, or (one-process figures) a ratio on the other side
    of 1 that the figure's own rounds do not leave in doubt."""
    claims = {r.word for r in judged if r.word in ("faster", "slower")}
    if not claims:
        return False
    if len(claims) > 1:  # one regime FASTER, another SLOWER
        return True
    for r in judged:
        if r.interval is not None and r.word not in claims:
            return True
        opposite = r.estimate is not None and (
            ("faster" in claims and r.estimate < 1) or ("slower" in claims and r.estimate > 1)
        )
        if r.interval is None and opposite and r.settled:
            return True
    return False


def _explain(result: RegimeResult, margin: float) -> tuple[VerdictWord, str]:
    if result.interval is None:
        return "inconclusive", result.reason
    i = result.interval
    marks = (1.0, 1.0 + margin, 1.0 / (1.0 + margin))  # the word rests on these sides
    bounds = f"{numbers.ratio_span(i.low, i.high, marks)} over {i.units} processes"
    within = f"+-{numbers.margin_percent(margin)}"
    if result.word == "faster":
        return "faster", f"interval {bounds} excludes 1 and reaches past {within}"
    if result.word == "slower":
        return "slower", f"interval {bounds} excludes 1 and reaches past {within}"
    if result.word == "equivalent" and result.reason == TWO_ONE_SIDED:
        return "equivalent", (
            f"interval {bounds} lies inside {within} (two one-sided tests, each at "
            f"{(1 - i.confidence) / 2:.2g}: the {numbers.level_percent(i.confidence)} interval)"
        )
    if result.word == "equivalent":
        real = i.low > 1.0 or i.high < 1.0
        detail = (
            f"; it excludes 1: a difference of {numbers.percent_inside(abs(i.estimate - 1), margin)}, "
            "real but inside the margin"
            if real
            else ""
        )
        return "equivalent", f"interval {bounds} lies inside {within}{detail}"
    return "inconclusive", f"interval {bounds} includes 1 and reaches past {within}"


def _suspicious(baseline: KernelSummary, other: KernelSummary) -> list[str]:
    notes = []
    for fast, slow in ((other, baseline), (baseline, other)):
        if (
            slow.vendor_library
            and fast.center_ms
            and slow.center_ms
            and slow.center_ms / fast.center_ms > SUSPICIOUS_SPEEDUP
        ):
            notes.append(
                f"SUSPICIOUS: {fast.kernel} is over {SUSPICIOUS_SPEEDUP:g}x faster than "
                f"the vendor library {slow.kernel}; check the measurement"
            )
    return notes


def all_verdicts(
    summaries: Sequence[KernelSummary],
    records: Sequence[ProcessRecord],
    *,
    confidence: float,
    margin: float,
) -> tuple[Verdict, ...]:
    """Every pair of kernels the problem was asked of (``KernelSummary.asked``),
    earlier-named first, with the family confidence corrected for the number
    of pairs judged: those that can carry a claim (both kernels timed, both
    native or both interpreted). A pair with a failed kernel gets NO VERDICT
    whatever the level, so counting it would only widen the others' intervals."""
    summaries = [s for s in summaries if s.asked]
    pairs = [(i, j) for i in range(len(summaries)) for j in range(i + 1, len(summaries))]
    judged = [(i, j) for i, j in pairs if _claimable(summaries[i], summaries[j])]
    level = stats.family_confidence(confidence, max(1, len(judged)))
    return tuple(
        judge(summaries[i], summaries[j], records, confidence=level, margin=margin)
        for i, j in pairs
    )


def process_log_ratios(
    names: Sequence[str], rounds_by_regime: Mapping[str, Sequence[Any]]
) -> dict[str, dict[str, float]]:
    """One process's paired log-ratio of every pair, in every regime it measured."""
    from gemmreg.timing import rounds as rounds_module

    out: dict[str, dict[str, float]] = {}
    pairs = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    for regime, taken in rounds_by_regime.items():
        values = {}
        for b, o in pairs:
            estimate = rounds_module.process_estimate(taken, b, o)
            if estimate is not None:
                values[pair_key(b, o)] = estimate
        out[regime] = values
    return out
