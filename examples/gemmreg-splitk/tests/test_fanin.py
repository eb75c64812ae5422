"""The tree reduction's fan-in (``reduce=tree,fanin=F``): C is the fixed
tree's sum bit for bit, whichever program arrives last at each node, with
``SPLIT_K`` not a power of ``F`` and a ragged last slice; fan-in 2 is the
binary tree; every node's counter is left at zero.

The reference is computed outside the tree: each K slice's fp32 partial is
the same kernel run unsplit on that slice (the same BLOCK_K steps, so the
same bits), then the partials are summed in torch, in the order the tree
promises. Run in a fresh process (Triton's interpreter is switched on by
gemmreg before triton is imported); under the interpreter programs run in
program-id order, so ``reverse_splits`` hands each node to another program.
"""

from __future__ import annotations

import attrs
import pytest
from gemmreg.testing import run_fresh
from gemmreg_splitk import heuristics, tuned

SCRIPT = """
import json, os
import gemmreg
import torch
from gemmreg import Problem
from gemmreg_splitk import heuristics, workspace
from gemmreg_splitk.plugin import make_prepare

DEVICE = gemmreg.where().device
M, N, K = 20, 24, 700  # one 32x32 tile; K slices of 128 (6 ways) or 64 (11 ways), the last short
TILES = "block_m=32,block_n=32,block_k=16"
g = torch.Generator().manual_seed(7)
a = torch.randn(M, K, generator=g).to(DEVICE)
b = torch.randn(K, N, generator=g).to(DEVICE)
ref = a.double().cpu() @ b.double().cpu()


def call(config, reverse=False, x=a, y=b):
    os.environ["GEMMREG_SPLITK_CONFIG"] = config
    m, k = x.shape
    launch = make_prepare(False, reverse_splits=reverse)(Problem(m=m, n=y.shape[1], k=k))
    c = torch.full((m, y.shape[1]), float("nan"), device=DEVICE)
    launch(x, y, c)
    return c.cpu()


def partials(split):
    os.environ["GEMMREG_SPLITK_CONFIG"] = f"{TILES},split_k={split}"
    kps = heuristics.choose(M, N, K, heuristics.INTERPRETER).k_per_split
    assert -(-K // kps) == split and K % kps, (split, kps)  # that many slices, the last short
    return [call(f"{TILES},split_k=1", x=a[:, s:s + kps].contiguous(),
                 y=b[s:s + kps].contiguous()) for s in range(0, K, kps)]


def binary(parts):
    # the binary tree as it was: pairs up a level at a time; the second of a
    # pair to arrive adds its sibling (first ^ half); no sibling: up unchanged
    sums, half = dict(enumerate(parts)), 1
    while half < len(parts):
        for first in range(0, len(parts), 2 * half):
            if first + half < len(parts):
                sums[first] = sums[first] + sums[first ^ half]
        half *= 2
    return sums[0]


def fan_in(parts, fanin):
    # the fan-in tree: groups of `fanin` aligned runs, cut at the split, summed
    # member 0, 1, ... left to right into the group's first slot; then a level up
    sums, span = dict(enumerate(parts)), 1
    while span < len(parts):
        for first in range(0, len(parts), span * fanin):
            members = [sums[s] for s in range(first, min(len(parts), first + span * fanin), span)]
            total = members[0]
            for part in members[1:]:
                total = total + part
            sums[first] = total
        span *= fanin
    return sums[0]


def bits(t):
    return t.view(torch.int32).tolist()


out = {"trees": {}, "binary": {}, "model": {}}
for split in (6, 11):
    parts = partials(split)
    out["binary"][split] = bits(binary(parts))
    out["model"].update({f"{split} {f}": bits(fan_in(parts, f)) for f in (2, 4, 8, 16)})
    for fanin in (2, 4, 8, 16):
        config = f"{TILES},split_k={split},reduce=tree,fanin={fanin}"
        runs = [call(config), call(config), call(config, reverse=True), call(config, reverse=True)]
        out["trees"][f"{split} {fanin}"] = {
            "bits": [bits(c) for c in runs],
            "error": max(float((c.double() - ref).abs().max()) for c in runs),
        }
    out["trees"][f"{split} default"] = {"bits": [bits(call(f"{TILES},split_k={split},reduce=tree"))]}
swapped = "block_m=32,block_n=32,split_k=6,reduce=tree,fanin=4,swap_ab=1"
out["swapped"] = [bits(call(swapped)), bits(call(swapped, reverse=True))]
out["swapped_error"] = float((call(swapped).double() - ref).abs().max())
out["counters"] = [bufs.counters.cpu().tolist() for bufs in workspace.cached().values()]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def result() -> dict:
    return run_fresh(SCRIPT)


@pytest.mark.parametrize("split", [6, 11])
@pytest.mark.parametrize("fanin", [2, 4, 8, 16])
def test_the_tree_is_its_fixed_order_sum_bit_for_bit_whoever_arrives_last(result, split, fanin):
    """Forward and reversed, twice each (the second call relies on the counters'
    reset): every run is the model's left-to-right group sums, bit for bit."""
    got = result["trees"][f"{split} {fanin}"]
    assert all(run == result["model"][f"{split} {fanin}"] for run in got["bits"])
    assert got["error"] < 1e-3


@pytest.mark.parametrize("split", [6, 11])
def test_fan_in_2_is_the_binary_tree_and_the_default(result, split):
    trees = result["trees"]
    assert trees[f"{split} 2"]["bits"][0] == result["binary"][str(split)]
    assert trees[f"{split} default"]["bits"][0] == result["binary"][str(split)]


def test_the_fan_ins_sum_in_different_orders(result):
    """So the bit-for-bit checks above tell the trees apart: at 11 slices fan-in
    4 and 8 group the partials differently from the binary tree."""
    model = result["model"]
    assert model["11 4"] != model["11 2"] and model["11 8"] != model["11 4"]


def test_a_swapped_fan_in_tree_is_right_and_bit_identical(result):
    first, second = result["swapped"]
    assert first == second
    assert result["swapped_error"] < 1e-3


def test_every_node_counter_is_left_at_zero(result):
    assert result["counters"]
    assert all(c == [0] * len(c) for c in result["counters"])


@pytest.mark.parametrize(
    ("split", "fanin", "levels"),
    [(32, 2, 5), (32, 4, 3), (32, 8, 2), (64, 8, 2), (11, 8, 2), (6, 4, 2), (4, 4, 1), (1, 4, 0)],
)
def test_the_levels_are_the_ceiling_of_the_log(split, fanin, levels):
    assert tuned.tree_levels(split, fanin) == levels


def test_the_knob_sets_the_fan_in_and_rejects_anything_but_a_power_of_two(monkeypatch):
    monkeypatch.setenv(heuristics.CONFIG_ENV, "reduce=tree,split_k=32,fanin=8")
    config = heuristics.choose(128, 128, 32768, heuristics.gpu(132))
    assert (config.reduce, config.split_k, config.fanin) == ("tree", 32, 8)
    for bad in ("3", "1", "0", "6", "x", "", "-4"):
        monkeypatch.setenv(heuristics.CONFIG_ENV, f"fanin={bad}")
        with pytest.raises(ValueError, match="fanin must be a power of two >= 2"):
            heuristics.choose(128, 128, 32768, heuristics.gpu(132))
    monkeypatch.delenv(heuristics.CONFIG_ENV)
    monkeypatch.delitem(tuned.TABLE, ("small", False))  # the heuristic's pick: the default fan-in
    base = heuristics.choose(128, 128, 32768, heuristics.gpu(132))
    assert base.fanin == 2
    for bad_value in (3, 1, 0):
        with pytest.raises(ValueError, match="fanin must be a power of two >= 2"):
            attrs.evolve(base, fanin=bad_value)
        with pytest.raises(ValueError, match="fanin must be a power of two >= 2"):
            tuned.Tuned(block_m=32, block_n=64, block_k=128, programs_per_sm=1.0, fanin=bad_value)
