"""The TMA load path (``tma=1``) under Triton's interpreter, which emulates
tensor descriptors: the right C with tails on every axis, in both modes and
the swapped launch, through transposed descriptors too; the pointer path for
operands TMA cannot take; deterministic mode bit-identical whichever program
reduces. And where the knob applies (Hopper or later, the interpreter).

The interpreter runs in a fresh process (gemmreg decides the backend before
triton is imported), as in ``test_determinism``.
"""

from __future__ import annotations

import attrs
import gemmreg
import pytest
from gemmreg.testing import run_fresh
from gemmreg_splitk import heuristics, plugin, tma, tuned

SCRIPT = """
import json, os
import gemmreg
import torch
from gemmreg import Problem
from gemmreg_splitk import kernel
from gemmreg_splitk.plugin import make_prepare

DEVICE = gemmreg.where().device
M, N, K = 20, 40, 104  # rows of 104 (A) and 40 (B) elements: 16-byte multiples in fp16 and fp32
# 16x32 tiles leave tails on M and N; 7 K steps of 16 in 3 slices of 48 leave
# a last slice of 8, whose one box crosses K
TAILS = "tma=1,block_m=16,block_n=32,block_k=16,split_k=3"

paths = []
real = kernel.splitk_kernel()


class Spy:
    def __getitem__(self, grid):
        def run(*args, **kwargs):
            paths.append([bool(kwargs.get("TMA")), bool(kwargs.get("A_T")), bool(kwargs.get("B_T"))])
            return real[grid](*args, **kwargs)
        return run


kernel.splitk_kernel = lambda: Spy()
g = torch.Generator().manual_seed(11)
a32 = torch.randn(M, K, generator=g)
b32 = torch.randn(K, N, generator=g)
ref = a32.double() @ b32.double()


def run(config, atomic, reverse=False, calls=1, dtype=torch.float32, layout=None):
    os.environ["GEMMREG_SPLITK_CONFIG"] = config
    launch = make_prepare(atomic, reverse_splits=reverse)(Problem(m=M, n=N, k=K))
    a, b = a32.to(dtype), b32.to(dtype)
    if layout == "padded":  # rows of 105 elements (420 bytes): no descriptor
        a = torch.cat([a, torch.zeros(M, 1, dtype=dtype)], 1)[:, :K]
    if layout == "transposedA":  # column-major A: described through A^T
        a = a.t().contiguous().t()
    outs, used = [], []
    for _ in range(calls):
        paths.clear()
        c = torch.full((M, N), float("nan"), dtype=dtype, device=DEVICE)
        launch(a, b, c)
        used += paths
        outs.append(c)
    err = max(float((o.double() - ref).abs().max()) for o in outs)
    return {"bits": [o.view(torch.int16 if dtype == torch.float16 else torch.int32).tolist()
                     for o in outs], "error": err, "paths": used}


out = {}
for name, config in [("serial", TAILS), ("tree", TAILS + ",reduce=tree"),
                     ("swapped", TAILS + ",swap_ab=1")]:
    out[name] = run(config, False, calls=2)
    out[name + "_reversed"] = run(config, False, reverse=True)
    out[name + "_atomic"] = run(config, True, calls=2)
out["fp16"] = run(TAILS, False, dtype=torch.float16)
out["fp16_swapped_atomic"] = run(TAILS + ",swap_ab=1", True, dtype=torch.float16)
out["transposedA"] = run(TAILS, False, layout="transposedA")
out["padded"] = run(TAILS, False, layout="padded")
out["padded_swapped_atomic"] = run(TAILS + ",swap_ab=1", True, layout="padded")
out["unsplit"] = run("tma=1,block_m=32,block_n=64,block_k=32,split_k=1", False)
out["pointer"] = run("block_m=16,block_n=32,block_k=16,split_k=3", False)
print(json.dumps(out))
"""


INTERPRETER_TMA_BYTE_STRIDES = (3, 6)
"""Triton's interpreter checks a TMA descriptor's strides in bytes from 3.6 on;
3.4 and 3.5 check them in elements ("stride must be 16-byte aligned" for these
rows of 104 fp16 elements, 208 bytes), while their GPU path checks bytes, as
TMA does. Those interpreters cannot run the cases below, whatever the kernel."""


def interpreter_checks_strides_in_elements() -> bool:
    from importlib.metadata import version

    major, minor = (int(part) for part in version("triton").split(".")[:2])
    return (major, minor) < INTERPRETER_TMA_BYTE_STRIDES


@pytest.fixture(scope="module")
def result() -> dict:
    if interpreter_checks_strides_in_elements():
        pytest.skip("this Triton's interpreter checks TMA strides in elements, not bytes")
    return run_fresh(SCRIPT, timeout=600)


RUNS = ["serial", "tree", "swapped", "serial_atomic", "tree_atomic", "swapped_atomic"]
RUNS += ["serial_reversed", "tree_reversed", "swapped_reversed", "transposedA", "unsplit"]


@pytest.mark.parametrize("name", RUNS)
def test_the_tma_path_computes_c_with_tails_on_every_axis(result, name):
    got = result[name]
    assert got["error"] < 1e-3
    assert got["paths"] and all(path[0] for path in got["paths"])  # every call went through TMA


def test_the_swapped_launch_describes_both_operands_through_their_transposes(result):
    """C^T = B^T A^T of row-major A and B: the kernel's A is B^T, column-major."""
    assert result["swapped"]["paths"] == [[True, True, True]] * 2
    assert result["serial"]["paths"] == [[True, False, False]] * 2
    assert result["transposedA"]["paths"] == [[True, True, False]]


def test_half_precision_through_tma(result):
    assert result["fp16"]["paths"] == [[True, False, False]]
    assert result["fp16"]["error"] < 0.05
    assert result["fp16_swapped_atomic"]["paths"] == [[True, True, True]]
    assert result["fp16_swapped_atomic"]["error"] < 0.05


@pytest.mark.parametrize("name", ["serial", "tree", "swapped"])
def test_deterministic_mode_through_tma_is_bit_identical(result, name):
    """Across calls (the second relies on the counters left clean) and with the
    slices run last to first (another program reduces each tile)."""
    first, *others = result[name]["bits"] + result[name + "_reversed"]["bits"]
    assert others and all(other == first for other in others)


def test_strides_tma_cannot_take_fall_back_to_the_pointer_path(result):
    for name in ("padded", "padded_swapped_atomic"):
        assert result[name]["paths"] == [[False, False, False]]
        assert result[name]["error"] < 1e-3
    assert result["pointer"]["paths"] == [[False, False, False]]


def test_the_knob_applies_on_hopper_and_later_and_the_interpreter_only():
    here = gemmreg.where()
    gpu = attrs.evolve(here, triton_interpreted=False, backend="cuda")
    assert tma.supported(attrs.evolve(gpu, capability=(9, 0)))
    assert tma.supported(attrs.evolve(gpu, capability=(10, 0)))
    assert not tma.supported(attrs.evolve(gpu, capability=(8, 0)))
    assert not tma.supported(attrs.evolve(gpu, capability=None))
    assert not tma.supported(attrs.evolve(gpu, backend="rocm", capability=(9, 4)))
    assert tma.supported(attrs.evolve(here, triton_interpreted=True))


def test_the_knob_comes_from_the_environment_or_the_table(monkeypatch):
    h200 = heuristics.gpu(132)
    assert heuristics.choose(32, 8192, 8192, h200).tma is False
    monkeypatch.setenv(heuristics.CONFIG_ENV, "tma=1,block_n=256")
    assert heuristics.choose(32, 8192, 8192, h200).tma is True
    monkeypatch.setenv(heuristics.CONFIG_ENV, "tma=yes")
    with pytest.raises(ValueError, match="tma must be 0 or 1"):
        heuristics.choose(32, 8192, 8192, h200)
    monkeypatch.delenv(heuristics.CONFIG_ENV)
    entry = tuned.Tuned(block_m=32, block_n=256, block_k=128, programs_per_sm=1.0, tma=True)
    monkeypatch.setitem(tuned.TABLE, ("flat32", False), entry)
    assert heuristics.choose(32, 8192, 8192, h200).tma is True
    assert tma.__file__ in plugin.SOURCES
