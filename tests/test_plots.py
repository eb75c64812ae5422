"""A saved run's pictures: roofs from the run's own device, none for a device
without a datasheet entry or for the CPU, and tick labels as plain numbers."""

from __future__ import annotations

import re

import pytest
from gemmreg.contract.records import Problem
from gemmreg.contract.traffic import ideal_bytes
from gemmreg.timing import peaks
from gemmreg.timing.timing_records import CompareReport, KernelSummary

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
from gemmreg.reporting import plots  # noqa: E402


def point(n: int, ms: float) -> CompareReport:
    problem = Problem(m=n, n=n, k=n)
    timed = KernelSummary(
        kernel="k",
        package="p 1",
        precision="ieee_fp32",
        math="ieee_fp32",
        generator="normal",
        status="timed",
        process_medians_ms=(ms, ms, ms),
        center_ms=ms,
        low_ms=ms * 0.95,
        high_ms=ms * 1.05,
        tflops=problem.flops / (ms * 1e-3) / 1e12,
    )
    return CompareReport(
        problem=problem,
        processes=3,
        seed=1,
        clock="test",
        device_name="recorded",
        summaries=(timed,),
        verdicts=(),
        runs=(),
    )


SWEEP = [point(n, 1e-4 * (n / 32) ** 3) for n in (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)]


def draw(manifest):
    import matplotlib.pyplot as plt

    fig = plots.figure(plt, "fp32", SWEEP, manifest)
    fig.canvas.draw()
    return fig


def labelled(axes, prefix):
    return {
        line.get_label(): line for line in axes.get_lines() if line.get_label().startswith(prefix)
    }


@pytest.mark.parametrize(
    ("device", "fp32", "bandwidth"),
    [("NVIDIA H200", 66.9, 4.8), ("NVIDIA H100 PCIe", 51.0, 2.0), ("NVIDIA L4", 30.3, 0.3)],
)
def test_the_roofs_are_the_manifests_device(device, fp32, bandwidth):
    fig = draw({"device_name": device, "backend": "cuda"})
    sweep, roof = fig.axes
    for axes in (sweep, roof):  # the size panel has the peak line too
        (peak,) = labelled(axes, "ieee_fp32 peak").values()
        assert list(peak.get_ydata()) == [fp32, fp32]
    (slope,) = labelled(roof, "memory").values()
    xs, ys = slope.get_xdata(), slope.get_ydata()
    assert ys[0] / xs[0] == pytest.approx(bandwidth)
    assert peaks.device_peaks(device).source in fig.texts[0].get_text()


@pytest.mark.parametrize(
    ("manifest", "said"),
    [
        (
            {"device_name": "NVIDIA B300", "backend": "cuda"},
            "no datasheet peaks known for NVIDIA B300",
        ),
        ({"device_name": "x86_64", "backend": "cpu"}, "CPU run (x86_64): no datasheet peaks"),
    ],
)
def test_an_unknown_device_or_the_cpu_gets_no_roofs_and_says_so(manifest, said):
    fig = draw(manifest)
    for axes in fig.axes:
        assert not labelled(axes, "ieee_fp32 peak") and not labelled(axes, "memory")
    assert said in fig.texts[0].get_text()


def test_size_ticks_read_as_plain_integers():
    fig = draw({"device_name": "NVIDIA H200", "backend": "cuda"})
    shown = [t.get_text() for t in fig.axes[0].get_xticklabels() if t.get_text()]
    assert shown and all(re.fullmatch(r"\d+", text) for text in shown), shown
    assert {"32", "8192"} <= set(shown)
    rates = [t.get_text() for axes in fig.axes for t in axes.get_yticklabels() if t.get_text()]
    assert rates and not any("10" in text and "^" in text for text in rates)
    assert all(re.fullmatch(r"[\d.e+-]+", text) for text in rates), rates


def test_datasheet_entries_are_told_apart_by_the_name_torch_reports():
    def named(name):
        found = peaks.device_peaks(name)
        return found.name if found else None

    assert named("NVIDIA H100 80GB HBM3") == "H100 SXM"
    assert named("NVIDIA H100 PCIe") == "H100 PCIe"
    assert named("NVIDIA H200 NVL") is None  # a different card, not the SXM's peaks
    assert named("NVIDIA A100-SXM4-80GB") == "A100 SXM 80GB"
    assert named("NVIDIA A100-PCIE-40GB") == "A100 PCIe 40GB"
    assert named("NVIDIA L40S") == "L40S" and named("NVIDIA L4") == "L4"
    assert named("NVIDIA GeForce RTX 4090") == "RTX 4090"
    assert named("AMD Instinct MI300X") == "MI300X"
    assert peaks.peak_tflops("AMD Instinct MI250X", "tf32") is None  # CDNA 2 has no TF32
    assert peaks.peak_tflops("NVIDIA GeForce RTX 4090", "fp16_acc16") == 330.3


def test_each_point_of_the_roofline_sits_at_the_intensity_of_its_ideal_traffic():
    """The roofline's intensity divides 2MNK by the bytes the tables' ideal
    GB/s divides (one function): a point's TFLOP/s over its intensity is the
    ideal GB/s its row shows, and the grey slope is the memory roof."""
    fig = draw({"device_name": "NVIDIA H200", "backend": "cuda"})
    roof = fig.axes[1]
    (scatter,) = roof.collections
    intensity = [x for x, _ in scatter.get_offsets()]
    assert intensity == pytest.approx([r.problem.flops / ideal_bytes(r.problem) for r in SWEEP])
    for x, report in zip(intensity, SWEEP, strict=True):
        (s,) = report.summaries
        assert s.tflops * 1e3 / x == pytest.approx(s.ideal_gbps)  # the row's ideal GB/s
    assert "ideal" in roof.get_xlabel()
    (slope,) = labelled(roof, "memory").values()
    assert slope.get_color() == "grey" and slope.get_label() == "memory 4.8 TB/s"


def test_points_of_one_shape_in_other_layouts_and_forms_are_all_drawn():
    """A sweep may time one MxNxK in two layouts, batched, or grouped (the
    members' rows stacked): each is a point of its own on both pictures."""
    import attrs
    import matplotlib.pyplot as plt

    plain = point(64, 1e-3)
    problems = [
        attrs.evolve(plain.problem, layout="padded"),
        attrs.evolve(plain.problem, batch=2),
        attrs.evolve(plain.problem, groups=(0, 1, 63)),
    ]
    twins = [plain, *(attrs.evolve(plain, problem=p) for p in problems)]
    fig = plots.figure(plt, "fp32", twins, {"backend": "cpu"})
    fig.canvas.draw()
    (scatter,) = fig.axes[1].collections
    assert len(scatter.get_offsets()) == len(twins)
