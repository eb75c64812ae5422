"""hip_regtiled's declarations and its Python launch glue, on the CPU.

The kernel itself runs on a GPU (``gemmreg check --full hip_regtiled``) and,
for its index arithmetic, guards and barriers, on the CPU in
``test_hip_on_cpu.py``. Here: what it declares agrees with its source, it
refuses what it does not declare, and ``launch`` passes the grid, block and
row strides the kernel expects.
"""

from __future__ import annotations

import re

import gemmreg
import pytest
import torch
from gemmreg.contract.inputs import apply_layout
from gemmreg.discovery.registry import discover
from gemmreg_plugins import hip_regtiled, hip_seed


@pytest.fixture(scope="module")
def spec() -> gemmreg.KernelSpec:
    return discover(env={"GEMMREG_PLUGINS": "hip_regtiled"}).get("hip_regtiled").spec


def source_constant(name: str) -> int:
    match = re.search(rf"constexpr int {name} = (\d+);", hip_regtiled.SOURCE.read_text())
    assert match, name
    return int(match.group(1))


def test_declares_ieee_fp32_on_both_gpu_backends_with_the_seed_tolerance(spec):
    caps = spec.capabilities
    assert caps.dtypes == {"fp32"}
    assert caps.backends == {"cuda", "rocm"}
    assert caps.precision["fp32"].math == "ieee_fp32"
    assert caps.layouts == {"rowmajor", "padded"}
    assert caps.max_dim == 2**31 - 1
    assert spec.tolerances["fp32"] == hip_seed.TOLERANCE
    assert spec.sources == (str(hip_regtiled.SOURCE),)
    assert hip_regtiled.SOURCE.is_file()


def test_declared_tile_and_block_match_the_kernel_source(spec):
    assert spec.capabilities.tile == (
        source_constant("kBlockM"),
        source_constant("kBlockN"),
        source_constant("kBlockK"),
    )
    assert source_constant("kThreads") == hip_regtiled.THREADS
    assert f"__launch_bounds__({hip_regtiled.THREADS}, " in hip_regtiled.SOURCE.read_text()


def test_unavailable_without_a_gpu_and_says_why(spec):
    reason = spec.available()
    assert reason == gemmreg.compile_unavailable()
    if not torch.cuda.is_available():
        assert reason is not None and "NVRTC" in reason


@pytest.mark.parametrize("layout", ["transposedA", "transposedB"])
def test_prepare_refuses_an_undeclared_layout_before_compiling(spec, layout, monkeypatch):
    def no_compile(*args):
        raise AssertionError("compiled a problem it should have refused")

    monkeypatch.setattr(gemmreg, "compile_kernel", no_compile)
    with pytest.raises(gemmreg.UnsupportedProblem, match=layout):
        spec.prepare(gemmreg.Problem(m=17, n=19, k=23, layout=layout))


def test_a_grid_beyond_one_dimension_is_declared_unsupported(spec):
    fits = gemmreg.Problem(m=2**31 - 1, n=128, k=1)
    too_many = gemmreg.Problem(m=2**31 - 1, n=2**31 - 1, k=1)
    assert spec.capabilities.unsupported(fits) is None
    reason = spec.capabilities.unsupported(too_many)
    assert reason is not None and "1-D grid" in reason


class RecordingKernel:
    def __init__(self) -> None:
        self.launches: list[tuple] = []

    def launch(self, grid, block, args, shared_mem=0):
        self.launches.append((grid, block, tuple(args), shared_mem))


@pytest.mark.parametrize(
    ("shape", "layout", "blocks", "strides"),
    [
        ((65, 67, 69), "rowmajor", 1, (69, 67, 67)),
        ((65, 67, 69), "padded", 1, (72, 70, 67)),  # the core's padding: 3 more per row
        ((260, 136, 20), "rowmajor", 3 * 2, (20, 136, 136)),
        ((1, 300, 1), "rowmajor", 3, (1, 300, 300)),
    ],
)
def test_launch_passes_a_1d_grid_and_the_row_strides(
    spec, monkeypatch, shape, layout, blocks, strides
):
    kernel = RecordingKernel()
    compiled: list[tuple[str, str]] = []

    def fake_compile(source: str, name: str) -> RecordingKernel:
        compiled.append((source, name))
        return kernel

    monkeypatch.setattr(gemmreg, "compile_kernel", fake_compile)
    m, n, k = shape
    problem = gemmreg.Problem(m=m, n=n, k=k, layout=layout)
    launch = spec.prepare(problem)
    assert compiled == [(hip_regtiled.SOURCE.read_text(), "matmul_regtiled")]

    a, b = apply_layout(torch.ones(m, k), torch.ones(k, n), layout)
    out = torch.empty(m, n)
    launch(a, b, out)
    ((grid, block, args, shared_mem),) = kernel.launches
    assert grid == (blocks, 1, 1)
    assert block == (hip_regtiled.THREADS, 1, 1)
    assert args[:3] == (a, b, out) and args[3:6] == shape
    assert args[6:] == strides
    assert shared_mem == 0  # static shared memory only, under the 48 KB default


def test_launch_refuses_a_matrix_whose_row_elements_are_not_adjacent():
    transposed = torch.ones(5, 7).t()  # 7 x 5, column-major
    with pytest.raises(gemmreg.UnsupportedProblem, match="adjacent"):
        hip_regtiled._row_stride(transposed, "A")
    assert hip_regtiled._row_stride(torch.ones(5, 7), "A") == 7
    assert hip_regtiled._row_stride(torch.ones(5, 1), "A") == 1
