"""The datasheet peaks gemmreg ships: one entry per device model, each
naming its datasheet (looked up through :mod:`gemmreg.timing.peaks`, after
the user's own entries, :mod:`gemmreg.timing.peaks_file`).

Dense (no sparsity) rates in TFLOP/s and memory bandwidth in TB/s, from the
vendors' datasheets (named on each entry). They are ceilings for a sanity
gate, not targets: a figure above its peak means the measurement or the
kernel is wrong. A device not listed here has no peaks: no "% of peak", no
gate and no roof lines, rather than another GPU's.

Each entry's comment names the vendor's page and says how far its figures were
checked (2026-11-30, through a search of stored public pages and repositories;
the vendors' own pages were mostly not among them): "read" where the vendor's
own text was read, "transcribed" where only a public repository quoting that
page was, and "not verified" where neither agreed or neither was found.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs


@attrs.frozen(kw_only=True)
class DevicePeaks:
    """One GPU's datasheet ceilings."""

    name: str
    pattern: str
    """A case-insensitive regular expression on the name torch reports."""
    source: str
    """The datasheet the figures are from."""
    memory_tb_s: float
    fp32: float
    """Non-tensor (or, on AMD, the larger of vector and matrix) FP32."""
    tf32: float | None
    fp16: float
    """FP16 products with FP32 accumulation."""
    bf16: float
    fp16_acc16: float | None = None
    """FP16 products with FP16 accumulation, where the datasheet rates it higher."""
    fp64: float | None = None
    """FP64 (tensor-core or matrix, the larger), where the datasheet gives it."""
    fp8: float | None = None
    """FP8 products with FP32 accumulation, where the datasheet gives it."""
    int8: float | None = None
    """INT8 products with INT32 accumulation (TOPS: 2MNK a second, as the others)."""
    memory_side_cache_mb: float = 0.0
    """A cache between L2 and memory (AMD's Infinity Cache), in MB: gemmreg's
    flush (4x the L2 torch reports) leaves it warm, so A and B may come from it
    faster than memory allows, and no memory-roof veto applies
    (:mod:`gemmreg.timing.vetoes`)."""

    def tflops(self, math: str) -> float | None:
        """The ceiling for a math class (:data:`gemmreg.contract.records.MathMode`), or None."""
        by_math: Mapping[str, float | None] = {
            "ieee_fp32": self.fp32,
            "tf32": self.tf32,
            "tf32x3": self.tf32,
            "fp16": self.fp16,
            "fp16_acc16": self.fp16_acc16 or self.fp16,
            "bf16": self.bf16,
            "bf16x3": self.bf16,
            "fp64": self.fp64,
            "fp8": self.fp8,
            "fp8_fast_accum": self.fp8,
            "int8": self.int8,
        }
        return by_math.get(math)


_HOPPER_SXM = {
    **{"fp32": 66.9, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp64": 66.9},
    **{"fp8": 1978.9, "int8": 1978.9},  # the Hopper whitepaper's dense table, as the rest
}
_A100 = {"fp32": 19.5, "tf32": 156.0, "fp16": 312.0, "bf16": 312.0, "fp64": 19.5}

DEVICES: tuple[DevicePeaks, ...] = (
    # NVIDIA Blackwell datasheet, HGX B200 column (per GPU); tensor rates
    # halved from the sheet's "with sparsity" figures.
    # https://www.nvidia.com/en-us/data-center/hgx/ -- not verified: FP32 75 and
    # FP16 2250 transcribed, TF32 and FP64 not found, memory quoted as 8 TB/s and
    # as 7.7 TB/s (8.0 kept: a ceiling).
    DevicePeaks(
        name="B200",
        pattern=r"\bB200\b",
        source="NVIDIA Blackwell datasheet (HGX B200, per GPU, dense)",
        memory_tb_s=8.0,
        fp32=75.0,
        tf32=1100.0,
        fp16=2250.0,
        bf16=2250.0,
        fp64=37.0,
    ),
    # NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column).
    # https://www.nvidia.com/en-us/data-center/h200/ -- transcribed: 4.8 TB/s,
    # compute the H100 SXM's (the Hopper whitepaper's 66.9 / 494.7 / 989.4).
    DevicePeaks(
        name="H200 SXM",
        pattern=r"\bH200\b(?!\s*NVL)",
        source="NVIDIA H200 Tensor Core GPU datasheet (SXM)",
        memory_tb_s=4.8,
        **_HOPPER_SXM,
    ),
    # NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column); torch says "H100 80GB HBM3".
    # https://www.nvidia.com/en-us/data-center/h100/ -- transcribed (67 / 989 / 1979
    # sparse, 3.35 TB/s; the Hopper whitepaper's dense table: 66.9 / 494.7 / 989.4).
    DevicePeaks(
        name="H100 SXM",
        pattern=r"\bH100\b.*(HBM3|SXM)",
        source="NVIDIA H100 Tensor Core GPU datasheet (SXM)",
        memory_tb_s=3.35,
        **_HOPPER_SXM,
    ),
    # NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe column).
    # https://www.nvidia.com/en-us/data-center/h100/ -- transcribed: 51 / 756 and
    # 1513 sparse / 2 TB/s.
    DevicePeaks(
        name="H100 PCIe",
        pattern=r"\bH100\b.*PCIe",
        source="NVIDIA H100 Tensor Core GPU datasheet (PCIe)",
        memory_tb_s=2.0,
        fp32=51.0,
        tf32=378.0,
        fp16=756.5,
        bf16=756.5,
        fp64=51.0,
    ),
    # NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM column); "A100-SXM4-80GB".
    # https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf
    # -- transcribed, for the three A100 entries below too: 19.5 / 156 / 312 dense
    # (the Ampere whitepaper's table agrees); the four bandwidths not verified.
    DevicePeaks(
        name="A100 SXM 80GB",
        pattern=r"\bA100\b.*SXM.*80GB",
        source="NVIDIA A100 Tensor Core GPU datasheet (80GB SXM)",
        memory_tb_s=2.039,
        **_A100,
    ),
    # NVIDIA A100 Tensor Core GPU datasheet (A100 40GB SXM column); "A100-SXM4-40GB".
    DevicePeaks(
        name="A100 SXM 40GB",
        pattern=r"\bA100\b.*SXM.*40GB",
        source="NVIDIA A100 Tensor Core GPU datasheet (40GB SXM)",
        memory_tb_s=1.555,
        **_A100,
    ),
    # NVIDIA A100 Tensor Core GPU datasheet (A100 80GB PCIe column); "A100 80GB PCIe".
    DevicePeaks(
        name="A100 PCIe 80GB",
        pattern=r"\bA100\b.*(80GB.*PCIe|PCIe.*80GB)",
        source="NVIDIA A100 Tensor Core GPU datasheet (80GB PCIe)",
        memory_tb_s=1.935,
        **_A100,
    ),
    # NVIDIA A100 Tensor Core GPU datasheet (A100 40GB PCIe column); "A100-PCIE-40GB".
    DevicePeaks(
        name="A100 PCIe 40GB",
        pattern=r"\bA100\b.*(40GB.*PCIe|PCIe.*40GB)",
        source="NVIDIA A100 Tensor Core GPU datasheet (40GB PCIe)",
        memory_tb_s=1.555,
        **_A100,
    ),
    # NVIDIA L40S GPU datasheet.
    # https://www.nvidia.com/en-us/data-center/l40s/ -- transcribed: 91.6 / 183 /
    # 362.05 dense (733 sparse); 864 GB/s not verified.
    DevicePeaks(
        name="L40S",
        pattern=r"\bL40S\b",
        source="NVIDIA L40S GPU datasheet",
        memory_tb_s=0.864,
        fp32=91.6,
        tf32=183.0,
        fp16=362.05,
        bf16=362.05,
    ),
    # NVIDIA L4 Tensor Core GPU datasheet.
    # https://www.nvidia.com/en-us/data-center/l4/ -- not verified (no copy found).
    DevicePeaks(
        name="L4",
        pattern=r"\bL4\b",
        source="NVIDIA L4 Tensor Core GPU datasheet",
        memory_tb_s=0.3,
        fp32=30.3,
        tf32=60.0,
        fp16=121.0,
        bf16=121.0,
    ),
    # NVIDIA Ada Lovelace GPU Architecture whitepaper, appendix (GeForce RTX 4090):
    # FP16/BF16 tensor rates with FP32 accumulation are half those with FP16's.
    # https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf
    # -- transcribed (appendix A): 82.6 / 165.2 / 330.3, 1008 GB/s.
    DevicePeaks(
        name="RTX 4090",
        pattern=r"\bRTX 4090\b(?!\s*D\b)",
        source="NVIDIA Ada Lovelace GPU Architecture whitepaper (GeForce RTX 4090)",
        memory_tb_s=1.008,
        fp32=82.6,
        tf32=82.6,
        fp16=165.2,
        bf16=165.2,
        fp16_acc16=330.3,
    ),
    # AMD Instinct MI300X accelerator data sheet (one device in SPX mode).
    # https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi300.html -- read:
    # matrix FP32 163.4, TF32 653.7, FP16 and BF16 1307.4, matrix FP64 163.4, 5.3 TB/s.
    # https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html --
    # transcribed: the same, and footnote MI300-05A's exact 5.325 TB/s (kept).
    DevicePeaks(
        name="MI300X",
        pattern=r"\bMI300X\b",
        source="AMD Instinct MI300X accelerator data sheet",
        memory_tb_s=5.325,
        fp32=163.4,
        tf32=653.7,
        fp16=1307.4,
        bf16=1307.4,
        fp64=163.4,
        memory_side_cache_mb=256.0,  # AMD Infinity Cache (CDNA 3): not verified
    ),
    # AMD Instinct MI325X accelerator data sheet: MI300X's compute, more and
    # faster memory.
    # https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html --
    # transcribed: 6 TB/s (footnote MI325-001A), FP16 and BF16 1307.4 (MI325-002).
    # FP32, TF32 and FP64 not verified: MI300X's, for the same 304 CUs (ROCm's
    # GPU specs, read) at the same 2100 MHz (a third-party page only).
    DevicePeaks(
        name="MI325X",
        pattern=r"\bMI325X\b",
        source="AMD Instinct MI325X accelerator data sheet",
        memory_tb_s=6.0,
        fp32=163.4,
        tf32=653.7,
        fp16=1307.4,
        bf16=1307.4,
        fp64=163.4,
        memory_side_cache_mb=256.0,  # AMD Infinity Cache (CDNA 3): not verified
    ),
    # AMD Radeon RX 9070 XT specifications (RDNA 4): FP32 vector, FP16 and
    # BF16 matrix (dense: half the "with sparsity" figure); no TF32.
    # https://www.amd.com/en/products/graphics/desktops/radeon/9000-series/amd-radeon-rx-9070xt.html
    # -- transcribed: 48.7 FP32, 195 FP16 matrix dense (389 sparse), "up to 640
    # GB/s" (0.6446 matched a pre-launch GPU-Z reading); BF16 = FP16 per AMD's
    # https://gpuopen.com/learn/using_matrix_core_amd_rdna4/ (not read).
    DevicePeaks(
        name="RX 9070 XT",
        pattern=r"\bRX 9070 XT\b",
        source="AMD Radeon RX 9070 XT specifications",
        memory_tb_s=0.640,
        fp32=48.7,
        tf32=None,
        fp16=195.0,
        bf16=195.0,
        memory_side_cache_mb=64.0,  # AMD Infinity Cache (RDNA 4): not verified
    ),
    # AMD Instinct MI250X accelerator data sheet, halved: the sheet rates the
    # package, and torch sees each of its two GCDs as a device. No TF32 (CDNA 2).
    # https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html --
    # transcribed: 3.2768 TB/s (footnote MI200-07) and 383 FP16 for the package;
    # matrix FP32 and FP64 95.7 (halved here) not verified.
    DevicePeaks(
        name="MI250X (one GCD)",
        pattern=r"\bMI250X\b",
        source="AMD Instinct MI250X accelerator data sheet (per package, halved per GCD)",
        memory_tb_s=1.6384,
        fp32=47.85,
        tf32=None,
        fp16=191.5,
        bf16=191.5,
        fp64=47.85,
    ),
)
"""The first entry whose pattern matches the device name is the device."""
