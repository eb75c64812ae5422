"""The reduce-scatter (``reduce=scatter``): C is bit-identical whichever
program arrives last, call after call, swapped or not, at ragged edge tiles,
with ``SPLIT_K`` not a power of two (shares past the tile) and a short last
K slice; atomic mode's fixed order (``fixed_order=1``) gives the same bits;
every counter is left as the next call needs it.

Under Triton's interpreter programs run one at a time, so the kernel never
spins there: the last program to arrive sums every share, through the same
share function a spinning GPU program runs for its own share
(:mod:`gemmreg_splitk.scatter`). ``reverse_splits`` hands that to another
program. The GPU's spinning path is checked on the H200 (``gemmreg check``,
``bench``'s determinism runs) and compiled here for sm_90
(test_compiles_for_hopper.py). Run in a fresh process, as Triton's
interpreter is switched on by gemmreg before triton is imported.
"""

from __future__ import annotations

import pytest
from fresh_run import run_fresh

SCRIPT = """
import json, os
import gemmreg
import torch
from gemmreg import Problem
from gemmreg_splitk import workspace
from gemmreg_splitk.plugin import make_prepare

DEVICE = gemmreg.where().device
M, N, K = 40, 72, 700  # 16x32 tiles: 3 x 3, the last row and column ragged
TILES = "block_m=16,block_n=32,block_k=16"
g = torch.Generator().manual_seed(11)
a = torch.randn(M, K, generator=g).to(DEVICE)
b = torch.randn(K, N, generator=g).to(DEVICE)
ref = a.double().cpu() @ b.double().cpu()


def call(config, reverse=False, atomic=False):
    os.environ["GEMMREG_SPLITK_CONFIG"] = config
    launch = make_prepare(atomic, reverse_splits=reverse)(Problem(m=M, n=N, k=K))
    c = torch.full((M, N), float("nan"), device=DEVICE)
    launch(a, b, c)
    return c.cpu()


def bits(t):
    return t.view(torch.int32).tolist()


out = {}
for name, config in [("split 6", f"{TILES},split_k=6,reduce=scatter"),
                     ("split 11", f"{TILES},split_k=11,reduce=scatter"),
                     ("swapped", f"{TILES},split_k=6,reduce=scatter,swap_ab=1")]:
    runs = [call(config), call(config), call(config, reverse=True), call(config, reverse=True)]
    runs.append(call(config + ",fixed_order=1", atomic=True))
    out[name] = {
        "bits": [bits(c) for c in runs],
        "error": max(float((c.double() - ref).abs().max()) for c in runs),
    }
call(f"{TILES},split_k=6")  # the serial reduction's buffers, for comparison
# 64x32 tiles (3), split 6 up a tree: 18 counters, as many as split 6's scatter
tree = call("block_m=64,block_n=32,block_k=16,split_k=6,reduce=tree")
out["tree_error"] = float((tree.double() - ref).abs().max())
out["counters"] = [bufs.counters.cpu().tolist() for bufs in workspace.cached().values()]
out["keys"] = [list(key[2:]) for key in workspace.cached()]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def result() -> dict:
    return run_fresh(SCRIPT)


@pytest.mark.parametrize("name", ["split 6", "split 11", "swapped"])
def test_the_scatter_is_bit_identical_whoever_arrives_last_and_in_atomic_modes_fixed_order(
    result, name
):
    """Forward and reversed, twice each (the later calls rely on the counters
    the earlier ones left), then atomic mode with ``fixed_order=1``: one set
    of bits, and C right (fp32 inputs, K = 700)."""
    got = result[name]
    assert all(run == got["bits"][0] for run in got["bits"])
    assert got["error"] < 1e-3


def test_the_scatter_launch_keeps_a_generation_word_per_tile(result):
    """The scatter's launch, not the serial one under another name: its
    counters are the 9 tiles' arrival counts plus their 9 generation words
    (the serial reduction's set has 9)."""
    assert sorted({len(c) for c in result["counters"]}) == [9, 18]


def test_a_scatter_set_is_never_handed_to_another_reduction(result):
    """The generation words count calls and are never reset (on a GPU), so a
    serial or tree launch reading them as arrival counts would skip tiles: the
    tree of split 6 over 3 tiles has as many counters as the scatter's, and
    still gets a set of its own."""
    assert [40, 72, 6, 18, "scatter"] in result["keys"]
    assert [40, 72, 6, 18, "slots"] in result["keys"]
    assert result["tree_error"] < 1e-3


def test_every_counter_is_back_at_zero(result):
    """Without the spin (here) only the arrival counts are used, and the last
    program resets each; the generation words stay 0."""
    assert result["counters"] and all(not any(c) for c in result["counters"])
