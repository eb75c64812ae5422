"""The reduce-scatter (``reduce=scatter``): C is bit-identical whichever
program arrives last, call after call, swapped or not, at ragged edge tiles,
with ``SPLIT_K`` not a power of two (shares past the tile) and a short last
K slice; atomic mode's fixed order (``fixed_order=1``) gives the same bits;
each tile's arrival count keeps growing by the split per call, in a
workspace set no other kind of reduction is handed.

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
from gemmreg.testing import run_fresh

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
# the serial reduction on the same tiles and split: as many counters as the scatter's
serial = call(f"{TILES},split_k=6")
out["serial_error"] = float((serial.double() - ref).abs().max())
out["sets"] = [[*key[2:], bufs.counters.cpu().tolist(), str(bufs.counters.dtype)]
               for key, bufs in workspace.cached().items()]
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


def test_each_tiles_count_grows_by_the_split_per_call(result):
    """The spin waits for the next multiple of the split, so the count is
    never reset: after 5 calls of each config (4 deterministic, one atomic in
    the fixed order, which is the same launch) every one of the 9 tiles has
    counted 5 x split arrivals, in 64 bits."""
    scatter = [s for s in result["sets"] if s[4] == "scatter"]
    assert sorted((m, n, split) for m, n, split, *_ in scatter) == [
        (40, 72, 6), (40, 72, 11), (72, 40, 6)
    ]  # fmt: skip
    for _m, _n, split, tiles, _kind, counts, dtype in scatter:
        assert tiles == len(counts) == 9 and dtype == "torch.int64"
        assert counts == [5 * split] * 9


def test_a_scatter_set_is_never_handed_to_another_reduction(result):
    """A serial launch of the same tiles and split has as many counters, and
    reads them as counts it resets to 0 (a grown scatter count would make it
    skip tiles): it gets a set of its own, and leaves it at zero."""
    serial = [s for s in result["sets"] if s[:5] == [40, 72, 6, 9, "slots"]]
    assert len(serial) == 1 and serial[0][5] == [0] * 9
    assert [40, 72, 6, 9, "scatter"] in [s[:5] for s in result["sets"]]
    assert result["serial_error"] < 1e-3
