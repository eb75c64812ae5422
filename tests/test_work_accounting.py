"""Work accounting: the rules on constructed device activity (three cheats
seen on an H200, honest single- and multi-launch kernels), the charging of a
recorded trace to calls, and the records it travels in. Nothing is timed."""

from __future__ import annotations

import pytest
from gemmreg.instruments.activity_analysis import Activity, analyse
from gemmreg.instruments.work_accounting import (
    PATTERNS_KEPT,
    WorkAccounting,
    account,
    attribute,
    contains,
    invalid_reasons,
    process_findings,
    shown,
)

MARKER = "gemmreg_call_marker"
CALLER = 7
SIDE = 9
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute"
PARTIAL = "splitk_partial_kernel"
REDUCE = "splitk_reduce_kernel"
ATOMIC = "gemm_atomic_add_kernel"
COPY = "at::native::vectorized_elementwise_kernel<4, at::native::direct_copy_kernel_cuda>"
FLUSH = "at::native::reduce_kernel<512, 1, at::native::ReduceOp<long, sum_functor>>"
POISON = "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::BFloat16>>"
SPACING = 100.0


def kernel(name: str, start: float, end: float, stream: int = CALLER, kind: str = "kernel"):
    return Activity(name=name, kind=kind, stream=stream, start_us=start, end_us=end)


def trace(calls: list[list[tuple[str, str]]], side: dict[int, str] | None = None) -> list[Activity]:
    """A recorded timed phase: per sample, gemmreg's flush and poison of C,
    the opening marker, the call's work (``(name, kind)`` in order on the
    caller's stream), the closing marker; ``side[i]``: a kernel of call ``i``
    on another stream."""
    out = []
    for i, work in enumerate(calls):
        t = i * SPACING
        out += [kernel(FLUSH, t, t + 20), kernel(POISON, t + 20, t + 22)]
        out.append(kernel(MARKER, t + 25, t + 26))
        for j, (name, kind) in enumerate(work):
            out.append(kernel(name, t + 30 + 10 * j, t + 38 + 10 * j, kind=kind))
        out.append(kernel(MARKER, t + 90, t + 91))
        if side and i in side:
            out.append(kernel(side[i], t + 31, t + 80, stream=SIDE))
    return out


def accounted(calls, checked_work, owner="k", side=None) -> WorkAccounting:
    """The accounting of ``calls`` (timed) then one checked call."""
    per_call = attribute(trace([*calls, checked_work], side), MARKER, len(calls) + 1)
    assert not isinstance(per_call, str), per_call
    return account(per_call, [owner] * (len(calls) + 1), [False] * len(calls) + [True])[owner]


GEMM_CALL = [(GEMM, "kernel")]
SPLIT_K = [(PARTIAL, "kernel"), (REDUCE, "kernel")]
MEMSET_ATOMIC = [("Memset (Device)", "memset"), (ATOMIC, "kernel")]


def test_a_kernel_that_launched_nothing_on_repeated_calls_is_invalid():
    """The first cheat: the GEMM skipped on a repeat with unchanged operands
    (CUPTI saw 0 kernels per call, the events said FASTER)."""
    acc = accounted([GEMM_CALL] + [[]] * 9, GEMM_CALL)
    assert (acc.calls, acc.empty) == (10, 9)
    reasons = invalid_reasons(acc)
    assert reasons == ["launched no device work in 9 of 10 recorded timed calls"]


def test_a_copy_of_a_cached_result_instead_of_the_gemm_is_invalid_with_both_lists():
    """The second cheat: one copy kernel where the checked call (fresh
    operands) launched the GEMM; both lists are named, shortened."""
    acc = accounted([[(COPY, "kernel")]] * 8, GEMM_CALL)
    (reason,) = invalid_reasons(acc)
    assert reason.startswith("8 of 8 timed calls launched at::native::vectorized_elementwise")
    assert f"{GEMM[:60]}... x1" in reason and "the checked call (fresh operands" in reason
    as_memcpy = accounted([[("Memcpy DtoD (Device -> Device)", "memcpy")]] * 4, GEMM_CALL)
    (reason,) = invalid_reasons(as_memcpy)  # work, so not "no device work"; but no GEMM
    assert reason.startswith("4 of 4 timed calls launched no kernel, where the checked call")


def test_a_gemm_launched_only_when_profiled_is_invalid_against_the_profiling_process():
    """The third cheat: its GEMM ran in the profiling process, not in the
    timed ones (where it launched a cheap kernel); its checked call was cheap too."""
    cheap = [("tiny_kernel", "kernel")]
    acc = accounted([cheap] * 6, cheap)
    assert invalid_reasons(acc) == []  # the checked call alone does not tell
    (reason,) = invalid_reasons(acc, profiled=[((GEMM, 1),)])
    assert reason.startswith("6 of 6 timed calls launched tiny_kernel x1")
    assert "where the profiling process's calls launched sm90_xmma" in reason


def test_the_profiling_process_typical_call_is_what_the_device_profile_keeps():
    """analyse keeps the most common call's multiset, markers left out."""
    spin = "at::cuda::(anonymous namespace)::spin_kernel(long)"
    acts = [kernel(spin, i * 100, i * 100 + 10) for i in range(4)]
    for i in range(3):
        acts += [kernel(PARTIAL, i * 100 + 20, i * 100 + 30)]
        acts += [kernel(REDUCE, i * 100 + 40, i * 100 + 50)]
    acts.append(kernel("Memset (Device)", 25, 26, kind="memset"))
    profile = analyse(acts, "spin_kernel", 3)
    assert not isinstance(profile, str)
    assert profile.call_kernels == ((PARTIAL, 1), (REDUCE, 1))


@pytest.mark.parametrize(
    "work", [GEMM_CALL, SPLIT_K, MEMSET_ATOMIC], ids=["one", "split-k", "memset+atomic"]
)
def test_honest_single_and_multi_launch_kernels_pass(work):
    acc = accounted([work] * 12, work)
    assert (acc.calls, acc.empty) == (12, 0)
    profiled = [((name, 1),) for name, kind in work if kind == "kernel"]
    assert invalid_reasons(acc, profiled=profiled) == []
    assert process_findings(
        [(0, acc)], [{"call_kernels": [[n, c] for p in profiled for n, c in p]}]
    ) == ([], [])


def test_side_stream_work_counts_and_extra_launches_on_some_calls_pass():
    """A split-K whose reduce runs on a side stream; a workspace memset and a
    fill on a new placement's first call only: more work, never less."""
    side = {i: REDUCE for i in range(7)}
    calls = [[(PARTIAL, "kernel")]] * 6
    calls[2] = [(PARTIAL, "kernel"), ("fill_workspace", "kernel"), ("Memset (Device)", "memset")]
    acc = accounted(calls, [(PARTIAL, "kernel")], side=side)
    assert acc.checked == ((PARTIAL, 1), (REDUCE, 1))
    assert acc.patterns[0].kernels == ((PARTIAL, 1), (REDUCE, 1)) and acc.patterns[0].calls == 5
    assert invalid_reasons(acc) == []
    missing_reduce = accounted([[(PARTIAL, "kernel")]] * 3, [(PARTIAL, "kernel")], side={3: REDUCE})
    assert invalid_reasons(missing_reduce) == [
        f"3 of 3 timed calls launched {PARTIAL} x1, where the checked call (fresh operands, "
        f"output verified) launched {PARTIAL} x1, {REDUCE} x1"
    ]


def test_gemmregs_flush_and_poison_between_calls_are_charged_to_no_call():
    per_call = attribute(trace([GEMM_CALL, []]), MARKER, 2)
    assert [[a.name for a in work] for work in per_call] == [[GEMM], []]


def test_a_trace_with_the_wrong_markers_is_unreadable_never_clean():
    acts = trace([GEMM_CALL] * 3)
    assert "expected 4 marker kernels" in attribute(acts, MARKER, 2)
    plugin_marker = [*acts, kernel(MARKER, 150, 151)]  # launched by the plugin itself
    assert "found 7" in attribute(plugin_marker, MARKER, 3)
    moved = [a if a.start_us != 25 else kernel(MARKER, 25, 26, stream=SIDE) for a in acts]
    assert "several streams" in attribute(moved, MARKER, 3)


def test_calls_beyond_the_kept_patterns_are_judged_by_their_common_part():
    extras = [[(GEMM, "kernel"), (f"extra{i}", "kernel")] for i in range(PATTERNS_KEPT + 3)]
    acc = accounted(extras, GEMM_CALL)
    assert len(acc.patterns) == PATTERNS_KEPT + 1
    assert acc.patterns[-1].kernels == ((GEMM, 1),) and acc.patterns[-1].calls == 3
    assert invalid_reasons(acc) == []
    cheats = extras[: PATTERNS_KEPT + 1] + [[(f"cheap{i}", "kernel")] for i in range(2)]
    (reason,) = invalid_reasons(accounted(cheats, GEMM_CALL))
    assert reason.startswith("3 of 7 timed calls launched no kernel")  # the rest, as one


def test_multisets_count_launches():
    assert contains(((GEMM, 2), (COPY, 1)), ((GEMM, 1),))
    assert not contains(((GEMM, 1),), ((GEMM, 2),))
    assert shown(()) == "no kernel" and shown((("a", 2),)) == "a x2"


def test_accounting_of_several_kernels_keeps_each_owner_apart_and_notes_a_missing_checked_call():
    per_call = attribute(trace([GEMM_CALL, SPLIT_K, GEMM_CALL, SPLIT_K]), MARKER, 4)
    assert not isinstance(per_call, str)
    got = account(per_call, ["a", "b", "a", "b"], [False, False, False, True])
    assert got["a"].calls == 2 and got["a"].checked is None
    assert got["b"].calls == 1 and got["b"].checked == ((PARTIAL, 1), (REDUCE, 1))
    only_checked = account(per_call[:1], ["c"], [True])["c"]
    assert only_checked.unavailable == "no timed call of it was recorded"
    assert process_findings([(0, only_checked)], [])[1] == [
        "process 0: no work accounting: no timed call of it was recorded"
    ]
    invalid, flags = process_findings([(1, got["a"]), (2, None)], [])
    assert invalid == [] and flags == ["process 1: work accounting: no checked call was recorded"]
    off = WorkAccounting(unavailable="expected 4 marker kernels")
    assert process_findings([(0, off), (1, off), (2, got["a"])], []) == (
        [],
        [
            "process 0, 1: no work accounting: expected 4 marker kernels",
            "process 2: work accounting: no checked call was recorded",
        ],
    )
