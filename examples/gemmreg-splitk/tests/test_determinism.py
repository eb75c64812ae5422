"""One launch per call, bit-identical results in deterministic mode whichever
program reduces a tile, and cached buffers left clean for the next call.

Run in a fresh process, so that gemmreg decides the backend (and, with no
GPU, switches Triton's interpreter on) before triton is imported. Under the
interpreter programs run one at a time in program-id order, so
``reverse_splits`` (the K slices run last to first) hands the reduction of
each tile to another program, with the partials arriving in the other order.
"""

from __future__ import annotations

import pytest
from gemmreg.testing import run_fresh

SCRIPT = """
import json, os
import gemmreg
import torch
from gemmreg import Problem
from gemmreg_splitk import kernel, workspace
from gemmreg_splitk.plugin import make_prepare

DEVICE = gemmreg.where().device
M, N, K = 20, 24, 700  # the interpreter splits this 8 ways, 96 elements of K each

launches = []
real = kernel.splitk_kernel()


class Counting:
    def __getitem__(self, grid):
        launches.append(grid)
        return real[grid]


kernel.splitk_kernel = lambda: Counting()

g = torch.Generator().manual_seed(5)
a = torch.randn(M, K, generator=g).to(DEVICE)
b = torch.randn(K, N, generator=g).to(DEVICE)
ref = a.double().cpu() @ b.double().cpu()


def run(atomic, reverse, calls, dtype=torch.float32):
    launch = make_prepare(atomic, reverse_splits=reverse)(Problem(m=M, n=N, k=K))
    outs = []
    for _ in range(calls):
        c = torch.full((M, N), float("nan"), dtype=dtype, device=DEVICE)
        launch(a.to(dtype), b.to(dtype), c)
        outs.append(c.cpu())
    return outs


def bits(t):
    return t.view(torch.int32).tolist()


before = len(workspace.cached())
forward = run(False, False, 3)
made = len(workspace.cached()) - before
launches.clear()
backward = run(False, True, 2)
det_launches = len(launches)
det_grids = sorted({g[0] for g in launches})
atomic = run(True, False, 2) + run(True, True, 1)
half = run(False, False, 1, torch.float16)
os.environ["GEMMREG_SPLITK_CONFIG"] = "reduce=tree"
tree_forward = run(False, False, 2)
tree_backward = run(False, True, 2)
os.environ["GEMMREG_SPLITK_CONFIG"] = "swap_ab=1,split_k=4"
swapped = run(False, False, 1) + run(False, True, 1)
swapped_atomic = run(True, False, 1)
os.environ["GEMMREG_SPLITK_CONFIG"] = "block_m=16,block_n=16,split_k=4"
pinned = run(False, False, 1)
os.environ["GEMMREG_SPLITK_CONFIG"] = "block_m=16,block_n=16,split_k=4,fixed_order=1"
fixed_atomic = run(True, False, 2) + run(True, True, 1)
del os.environ["GEMMREG_SPLITK_CONFIG"]
print(json.dumps({
    "made": made,
    "launches_for_two_calls": det_launches,
    "grids": det_grids,
    "forward_bits": [bits(o) for o in forward],
    "backward_bits": [bits(o) for o in backward],
    "error": max(float((o.double() - ref).abs().max()) for o in forward + backward),
    "atomic_error": max(float((o.double() - ref).abs().max()) for o in atomic),
    "tree_forward_bits": [bits(o) for o in tree_forward],
    "tree_backward_bits": [bits(o) for o in tree_backward],
    "tree_error": max(float((o.double() - ref).abs().max()) for o in tree_forward + tree_backward),
    "swapped_bits": [bits(o) for o in swapped],
    "swapped_error": max(float((o.double() - ref).abs().max()) for o in swapped + swapped_atomic),
    "pinned_bits": bits(pinned[0]),
    "fixed_atomic_bits": [bits(o) for o in fixed_atomic],
    "half_dtype": str(half[0].dtype),
    "half_error": float((half[0].double() - ref).abs().max()),
    "buffers": [
        {"key": list(key), "counters": bufs.counters.cpu().tolist(),
         "partials_nonzero": int(bufs.partials.count_nonzero()), "shape": list(bufs.partials.shape)}
        for key, bufs in workspace.cached().items()
    ],
}))
"""


@pytest.fixture(scope="module")
def result() -> dict:
    return run_fresh(SCRIPT)


def test_deterministic_mode_is_bit_identical_across_calls(result):
    first, *others = result["forward_bits"]
    assert all(other == first for other in others)
    assert result["error"] < 1e-3


def test_deterministic_mode_is_bit_identical_whichever_program_reduces(result):
    assert all(bits == result["forward_bits"][0] for bits in result["backward_bits"])


def test_the_tree_reduction_is_bit_identical_whichever_program_reduces(result):
    """Eight slices, three levels: the reversed run hands every node's sum to the
    other program of its pair, and the second call relies on every node's counter reset."""
    first, *others = result["tree_forward_bits"] + result["tree_backward_bits"]
    assert all(other == first for other in others)
    assert result["tree_error"] < 1e-3


def test_the_swapped_launch_is_right_and_bit_identical_whichever_program_reduces(result):
    """C^T = B^T A^T through the same kernel (both modes): the strides, the
    swapped tile edges and the workspace's transposed layout all line up."""
    first, *others = result["swapped_bits"]
    assert all(other == first for other in others)
    assert result["swapped_error"] < 1e-3


def test_one_launch_per_call_and_buffers_made_once_per_problem(result):
    assert result["launches_for_two_calls"] == 2
    assert result["grids"] == [8]  # one 32x32 tile, split 8 ways: one program per slice
    assert result["made"] == 1  # made by prepare; the calls reuse it


def test_every_cached_buffer_is_left_clean(result):
    modes = {key[-1] for key in (b["key"] for b in result["buffers"])}
    assert modes == {"slots", "atomic"}
    assert {tuple(b["key"][-2:]) for b in result["buffers"]} >= {(1, "slots"), (8, "slots")}
    for buf in result["buffers"]:
        atomic = buf["key"][-1] == "atomic"
        assert buf["counters"] == [0] * len(buf["counters"])
        swapped = buf["key"][2:4] == [24, 20]  # the transposed launch's [N, M] layout
        expected = [1, 24, 20] if swapped else [1, 20, 24]
        if not atomic:
            expected[0] = buf["key"][4]
        assert buf["shape"] == expected
        if atomic:  # the reducer zeroes the accumulator; the deterministic slots are overwritten
            assert buf["partials_nonzero"] == 0


def test_atomic_mode_and_fp16_output_are_correct(result):
    """Every call after the first relies on the reset: a stale count would skip C's write."""
    assert result["atomic_error"] < 1e-3
    assert result["half_dtype"] == "torch.float16"
    assert result["half_error"] < 0.05


def test_atomic_mode_in_a_fixed_order_is_deterministic_modes_kernel(result):
    """``fixed_order`` (what a tuned entry sets where that measured faster) makes
    atomic mode launch deterministic mode's kernel: the same bits as
    deterministic mode with the same tiles and split, call after call and
    whichever program reduces, so no atomics ran."""
    assert all(bits == result["pinned_bits"] for bits in result["fixed_atomic_bits"])
    assert result["pinned_bits"] != result["forward_bits"][0]  # another split: other bits
