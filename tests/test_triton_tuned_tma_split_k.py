"""triton_tuned's TMA split-K path (``tma_split_k.py``, ``tma_split_k_kernel.py``
and its candidates in ``tma_dispatch.py``), under Triton's interpreter.

The kernel runs on small odd shapes in fp16 (the interpreter cannot run
bf16) through TMA descriptors in every layout TMA takes, with K cut and not,
its ranges handed out in order and last to first; fp32 and strides TMA
cannot take go to the pointer split-K kernel. Every case checks C against
float64, the guard words around C, and that the call left the arrival
counters at 0.
"""

from __future__ import annotations

import attrs
import pytest
from gemmreg_plugins.triton_tuned import configs, dispatch, split_k, tma_dispatch, tma_split_k
from gemmreg_plugins.triton_tuned.configs import Config
from test_triton_tuned import TMA_IN_THE_INTERPRETER, launch_guarded

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim:DeprecationWarning"
)
H200_SMS = 132
TSK = Config(
    path="tma_split_k", block_m=32, block_n=16, block_k=16, num_stages=2, num_warps=4, split_k=3
)


def _counters_clean() -> bool:
    return all(int(found.counters.abs().sum()) == 0 for found in split_k.cached().values())


@TMA_IN_THE_INTERPRETER
@pytest.mark.parametrize("reversed_order", [False, True], ids=["in-order", "reversed"])
@pytest.mark.parametrize(
    "config, shape, layout",
    [
        (TSK, (65, 40, 72), "rowmajor"),  # tails on M, N and K; 5 K blocks in 3 ranges
        (TSK, (40, 40, 72), "transposedB"),  # B^T (a weight) through TMA, N tail
        (TSK, (72, 40, 33), "transposedA"),  # A^T through TMA, a 1-element K tail
        (attrs.evolve(TSK, split_k=1), (65, 40, 72), "rowmajor"),  # no split: C stored at once
        (attrs.evolve(TSK, split_k=8), (33, 48, 128), "transposedB"),  # 8 ranges of one block
        (attrs.evolve(TSK, block_m=16, block_n=32, split_k=2), (20, 72, 48), "rowmajor"),
    ],
)
def test_tma_split_k_computes_c(monkeypatch, reversed_order, config, shape, layout):
    monkeypatch.setattr(tma_split_k, "REVERSED", reversed_order)
    assert launch_guarded(config, shape, "fp16", layout, H200_SMS, seed=7) < 2e-3
    assert _counters_clean()


@TMA_IN_THE_INTERPRETER
def test_c_is_the_same_bits_whichever_range_arrives_last(monkeypatch):
    """The partials are added in split order whoever arrives last."""
    import torch
    from gemmreg.contract.inputs import apply_layout
    from gemmreg_plugins.triton_tuned import launchers

    m, n, k = 40, 40, 96
    generator = torch.Generator().manual_seed(5)
    a = torch.randn(m, k, generator=generator).half()
    b = torch.randn(k, n, generator=generator).half()
    a, b = apply_layout(a, b, "transposedB")
    results = []
    for order in (False, True):
        monkeypatch.setattr(tma_split_k, "REVERSED", order)
        out = torch.full((m, n), float("nan"), dtype=torch.float16)
        launchers.launcher(TSK, m, n, k, "ieee", H200_SMS)(a, b, out)
        results.append(out)
    assert torch.equal(results[0].view(torch.int16), results[1].view(torch.int16))


@pytest.mark.parametrize(
    "dtype, layout, shape, tma_able",
    [
        ("fp32", "rowmajor", (40, 64, 72), True),  # TF32 needs B K-major: not this kernel's
        ("fp16", "padded", (33, 61, 65), False),  # rows whose strides TMA refuses
    ],
)
def test_what_tma_cannot_take_goes_to_the_pointer_kernel(
    monkeypatch, dtype, layout, shape, tma_able
):
    taken = []
    real = split_k.split_k_launcher

    def spy(config, *args):
        launch = real(config, *args)

        def wrapped(a, b, out):
            taken.append(config.path)
            return launch(a, b, out)

        return wrapped

    monkeypatch.setattr(split_k, "split_k_launcher", spy)
    assert launch_guarded(TSK, shape, dtype, layout, H200_SMS, seed=3, tma_able=tma_able) < 2e-3
    assert taken == ["split_k"]  # the same tile and split, through pointers
    assert _counters_clean()


def test_tma_split_k_candidates_go_to_the_split_k_family_in_16_bits_only():
    m, n, k = 128, 4096, 4096  # Llama 3 8B's q_proj at 128 tokens
    found = configs.candidates("cuda", "bf16", m, n, k, tma=True, num_sms=H200_SMS)
    tma = [c for c in found if c.path == "tma_split_k"]
    pointer = [c for c in found if c.path == "split_k"]
    assert tma and pointer
    assert found.index(tma[0]) > found.index(pointer[-1])  # the untuned pick stays a pointer one
    for c in tma:
        tiles = -(-m // c.block_m) * -(-n // c.block_n)
        cut = split_k.plan(k, c.block_k, c.split_k)
        assert cut.splits == c.split_k and cut.blocks_per_split >= dispatch.MIN_BLOCKS_PER_SPLIT
        assert 4 * c.split_k * c.block_m * c.block_n <= tma_dispatch.TMA_MAX_REDUCE_BYTES
        assert tiles * c.split_k >= tma_dispatch.TMA_WHOLE_K_SHARE * H200_SMS  # most SMs busy
    # the probe's best there: 64x64 tiles, 128 of them, K whole
    assert Config(path="tma_split_k", block_m=64, block_n=64, block_k=128, num_stages=6,
                  num_warps=4, split_k=1) in tma  # fmt: skip
    # gate and up projections at 128 tokens: 112 tiles of 128x128, K whole, is a candidate
    wide = tma_dispatch.tma_split_k_candidates(128, 14336, 4096, H200_SMS, "bf16", "split_k")
    assert any((c.block_m, c.block_n, c.split_k) == (128, 128, 1) for c in wide)
    # none without TMA, for fp32, or where the tiles fill the GPU or M is swapped
    assert not any(
        c.path == "tma_split_k"
        for c in configs.candidates("cuda", "bf16", m, n, k, tma=False, num_sms=H200_SMS)
    )
    assert not tma_dispatch.tma_split_k_candidates(m, n, k, H200_SMS, "fp32", "split_k")
    assert not tma_dispatch.tma_split_k_candidates(16, n, k, H200_SMS, "bf16", "swap_ab")
    assert not tma_dispatch.tma_split_k_candidates(8192, n, k, H200_SMS, "bf16", "tiles")


def test_a_tma_split_k_config_survives_its_name_and_the_cache():
    config = attrs.evolve(TSK, block_m=128, block_n=64, block_k=64, num_stages=6, split_k=4)
    assert config.name == "tma_split_k:128x64x64-s6-w4-g8-k4"
    assert Config.from_name(config.name) == config
    assert Config.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError):
        Config.from_dict({**config.to_dict(), "swap_ab": True})  # swap-AB is the pointer path's
