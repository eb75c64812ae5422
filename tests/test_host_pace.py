"""HOST-PACED: a FASTER or SLOWER verdict that an eager loop would read the
other way, where the host's launch path, not the GPU, paces the calls. The
rule on made-up figures at its edges, then on the saved H200 runs: fp16 at
Llama 3 8B's decode points, where a Triton launch takes 45-120 us of host
time against 8-33 us on the GPU, and the 2048- and 8192-token points, where
the GPU paces every call and no note may appear."""

from __future__ import annotations

import attrs
import pytest
from conftest import REPO
from gemmreg.reporting import render_compare, render_verdicts, runs
from gemmreg.timing import host_pace

FOLDER = REPO / "evidence" / "2026-12-04-h200-llm-fp16-fp8-tf32"
DECODE = FOLDER / "fp16-1-16" / "bench"
PREFILL = FOLDER / "fp16-2048-8192" / "bench"


def first_pair():
    """The first point of the decode run: its verdict and both summaries."""
    _, reports, _ = runs.load_run(DECODE)
    report = reports[1]  # 1x1024x4096: FASTER 1.195x on the GPU
    by_name = {s.kernel: s for s in report.summaries}
    verdict = report.verdicts[0]
    return report, verdict, by_name[verdict.kernel], by_name[verdict.baseline]


def with_ms(summary, gpu_ms, host_ms):
    return attrs.evolve(summary, center_ms=gpu_ms, host_ms=host_ms)


def test_each_call_costs_the_larger_of_its_gpu_time_and_its_launch_path():
    _, _, kernel, baseline = first_pair()
    mine, theirs = with_ms(kernel, 0.008, 0.066), with_ms(baseline, 0.010, 0.043)
    assert host_pace.host_paced_speedup(mine, theirs) == pytest.approx(0.043 / 0.066)
    # only the baseline is host-paced: the kernel's GPU time against the baseline's host time
    mine = with_ms(kernel, 0.030, 0.020)
    assert host_pace.host_paced_speedup(mine, theirs) == pytest.approx(0.043 / 0.030)
    # neither is: the GPU paces both, the verdict's own ratio stands alone
    assert host_pace.host_paced_speedup(mine, with_ms(baseline, 0.05, 0.04)) is None
    # a run with no host figure (CPU, or saved before it was kept)
    assert host_pace.host_paced_speedup(with_ms(kernel, 0.008, None), theirs) is None


def test_the_note_names_a_reversal_and_nothing_else():
    _, verdict, kernel, baseline = first_pair()
    assert verdict.verdict == "faster"
    slow_host = with_ms(kernel, 0.008, 0.066)
    note = host_pace.host_pace_note(verdict, slow_host, with_ms(baseline, 0.010, 0.043))
    assert note.startswith("HOST-PACED: back to back without a CUDA graph, 0.652x")
    assert "66 us a call for triton_tuned, 43 us for torch_ref" in note
    # host-paced, but the kernel still the cheaper call: no reversal, no note
    quick_host = with_ms(kernel, 0.008, 0.030)
    assert not host_pace.host_pace_note(verdict, quick_host, with_ms(baseline, 0.010, 0.043))
    # SLOWER on the GPU, but the baseline's launch path paces the loop: reversed too
    slower = attrs.evolve(verdict, verdict="slower")
    note = host_pace.host_pace_note(
        slower, with_ms(kernel, 0.012, 0.020), with_ms(baseline, 0.010, 0.043)
    )
    assert note.startswith("HOST-PACED: back to back without a CUDA graph, 2.15x")
    for word in ("equivalent", "inconclusive", "invalid", "no verdict"):
        undecided = attrs.evolve(verdict, verdict=word)
        assert not host_pace.host_pace_note(undecided, slow_host, baseline)


def test_decode_verdicts_on_the_h200_carry_the_note_where_the_host_paces():
    """At 1 and 16 tokens every FASTER verdict of triton_tuned reverses once
    each call costs its host launch path; the INCONCLUSIVE one gets no note."""
    _, reports, _ = runs.load_run(DECODE)
    rows = render_verdicts.verdict_rows(reports)
    faster = [r for r in rows if r["verdict"] == "faster"]
    assert len(faster) == 7
    assert all("HOST-PACED" in str(r["notes"]) for r in faster)
    assert not [r for r in rows if r["verdict"] != "faster" and "HOST-PACED" in str(r["notes"])]
    lines = render_compare.verdict_lines(reports[1])
    assert any(line.startswith("  note: HOST-PACED: ") for line in lines)


def test_prefill_verdicts_carry_no_note():
    """From 2048 tokens up a call takes 27 us to 1.2 ms on the GPU, longer
    than either launch path at six of the eight points; at the other two
    (N = 1024) triton_tuned's launch path outlasts its GPU time, but it is SLOWER
    there on the GPU too, so nothing reverses."""
    _, reports, _ = runs.load_run(PREFILL)
    assert not [r for r in render_verdicts.verdict_rows(reports) if "HOST-PACED" in str(r["notes"])]


def test_the_compare_legend_states_the_rule():
    _, reports, _ = runs.load_run(DECODE)
    text = render_compare.compare_table(reports[1], "table")
    assert "HOST-PACED (notes): a FASTER or SLOWER verdict that reads the other way" in text


def test_a_tie_in_the_eager_loop_reads_neither_way_whichever_kernel_is_named_first():
    """Both launch paths 45 us, both pacing: back to back the calls cost the
    same. The SLOWER verdict got a note that the loop reads the other way at
    1x, its mirror FASTER verdict none."""
    _, verdict, kernel, baseline = first_pair()
    quick, slow = with_ms(kernel, 0.010, 0.045), with_ms(baseline, 0.012, 0.045)
    assert host_pace.host_paced_speedup(quick, slow) == 1.0
    faster = attrs.evolve(verdict, verdict="faster")
    turned = attrs.evolve(
        verdict, verdict="slower", kernel=verdict.baseline, baseline=verdict.kernel
    )
    assert not host_pace.host_pace_note(faster, quick, slow)
    assert not host_pace.host_pace_note(turned, slow, quick)
