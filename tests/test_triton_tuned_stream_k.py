"""triton_tuned's stream-K tail (``Config.stream_k``), under Triton's interpreter.

The interpreter runs a launch's programs one after another, so it runs the
hand-over of a cut tile in one order only: ``stream_k.REVERSED`` hands the
ranges out last to first, which makes a tile's first piece the one that
arrives second and stores C. Every case checks C in float64, the guard words
around C, and that the call left the arrival counters at 0 (the next call
counts from them).
"""

from __future__ import annotations

import attrs
import pytest
from gemmreg_plugins.triton_tuned import launchers, stream_k, tma_rules
from gemmreg_plugins.triton_tuned.configs import Config
from test_triton_tuned import SMALL_TILED, TMA_IN_THE_INTERPRETER, launch_guarded

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim:DeprecationWarning"
)

SK = Config(
    path="persistent_tma",
    block_m=32,
    block_n=16,
    block_k=16,
    num_stages=1,
    num_warps=4,
    group_m=2,
    stream_k=True,
)


@pytest.mark.parametrize(
    "tiles, programs, tail",
    [
        (512, 132, 248),  # 4096^3 in 128x256 tiles on an H200: 116 left over, plus a round
        (3584, 132, 152),  # 8192x14336x4096
        (133, 132, 133),  # one over: every tile in the tail
        (264, 132, 0),  # whole rounds: nothing to share out
        (100, 132, 0),  # one round
        (132, 132, 0),
        (9, 4, 5),
    ],
)
def test_the_tail_is_the_remainder_and_one_round(tiles, programs, tail):
    assert stream_k.tail_tiles(tiles, programs) == tail
    if tail:  # every program's range is at least one tile's K steps
        assert programs <= tail < 2 * programs and (tiles - tail) % programs == 0


def _tail_of(config: Config, shape, sms: int) -> int:
    m, n, _ = shape
    tiles = -(-m // config.block_m) * -(-n // config.block_n)
    return stream_k.tail_tiles(tiles, min(tiles, sms))


@TMA_IN_THE_INTERPRETER
@pytest.mark.parametrize("reversed_order", [False, True], ids=["in-order", "reversed"])
@pytest.mark.parametrize(
    "config, shape, dtype, layout, sms",
    [
        (SK, (65, 40, 72), "fp16", "rowmajor", 4),  # 9 tiles: 4 in a round, 5 cut by K
        (SK, (65, 40, 72), "fp16", "rowmajor", 5),  # 4 tiles, every range across a cut
        (SK, (100, 68, 200), "fp32", "rowmajor", 3),  # 20 tiles, 13 K steps, tails on M, N, K
        (SK, (72, 40, 33), "fp16", "transposedA", 4),  # A^T in-kernel, a 1-element K tail
        (SK, (40, 36, 72), "fp32", "transposedB", 4),  # 6 tiles, all in the tail
        (SK, (65, 40, 16), "fp16", "rowmajor", 4),  # one K step: no tile is cut
        (attrs.evolve(SK, block_n=32, epilogue_parts=2), (97, 72, 72), "fp16", "rowmajor", 5),
        (attrs.evolve(SK, block_n=64, epilogue_parts=4), (97, 132, 48), "fp32", "rowmajor", 5),
    ],
)
def test_stream_k_tails_compute_c(monkeypatch, reversed_order, config, shape, dtype, layout, sms):
    assert _tail_of(config, shape, sms) > 0
    monkeypatch.setattr(stream_k, "REVERSED", reversed_order)
    assert launch_guarded(config, shape, dtype, layout, sms, seed=3) < 2e-3
    made = stream_k.cached()
    tail = _tail_of(config, shape, sms)
    assert any(key[2] == tail for key in made)  # the call took a set for its tail
    assert all(int(made[key].counters.abs().sum()) == 0 for key in made)


@TMA_IN_THE_INTERPRETER
def test_whole_rounds_take_no_tail_and_no_buffers():
    """20 tiles on 4 programs: five whole rounds, the plain persistent loop."""
    shape = (100, 68, 200)
    assert _tail_of(SK, shape, 4) == 0
    before = stream_k.cached()
    assert launch_guarded(SK, shape, "fp32", "rowmajor", 4, seed=3) < 2e-3
    assert stream_k.cached() == before


@TMA_IN_THE_INTERPRETER
@pytest.mark.parametrize("reversed_order", [False, True], ids=["in-order", "reversed"])
def test_cut_tiles_add_up_to_the_same_bits_whichever_piece_arrives_second(
    monkeypatch, reversed_order
):
    """A tile's two pieces are added in either order (a + b == b + a), so the
    order the programs finish in does not reach C."""
    import torch

    config, (m, n, k), sms = SK, (65, 40, 72), 4
    generator = torch.Generator().manual_seed(5)
    a = torch.randn(m, k, generator=generator).half()
    b = torch.randn(k, n, generator=generator).half()
    results = []
    for order in (False, True):
        monkeypatch.setattr(stream_k, "REVERSED", order)
        out = torch.empty(m, n, dtype=torch.half)
        launchers.launcher(config, m, n, k, "ieee", sms, fallback=SMALL_TILED)(a, b, out)
        results.append(out)
    assert torch.equal(results[0], results[1])


@TMA_IN_THE_INTERPRETER
def test_tf32_swapped_products_take_the_tail_too():
    """Row-major fp32 under TF32 runs C^T = B^T A^T (``tma_rules.tf32_swap``);
    the tail transposes each piece back before it is handed over. 25 tiles
    of 16x16 on 3 programs: 4 in the tail, 3 K steps each."""
    import torch

    config = attrs.evolve(SK, block_m=16, block_n=16)
    m, n, k = 65, 68, 40
    assert _tail_of(config, (m, n, k), 3) == 4
    generator = torch.Generator().manual_seed(11)
    a, b = torch.randn(m, k, generator=generator), torch.randn(k, n, generator=generator)
    assert tma_rules.tf32_swap("tf32", a, False, False)
    out = torch.full((m, n), float("nan"))
    launchers.launcher(config, m, n, k, "tf32", 3, fallback=SMALL_TILED)(a, b, out)
    truncated_b = (b.view(torch.int32) & -(1 << 13)).view(torch.float32)  # what TF32 keeps
    assert float((out.double() - a.double() @ truncated_b.double()).abs().max()) < 1e-4


def test_stream_k_is_refused_off_the_persistent_path():
    with pytest.raises(ValueError, match="stream_k"):
        Config.from_dict({**attrs.asdict(SK), "persistent": False})
    with pytest.raises(ValueError, match="stream_k"):
        Config.from_dict({**attrs.asdict(SMALL_TILED), "stream_k": True})
