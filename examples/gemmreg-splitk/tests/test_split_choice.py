"""How SPLIT_K is chosen from the shape, or given by the user."""

from __future__ import annotations

import pytest
from gemmreg_splitk import heuristics

H200_SMS = 132


def test_a_tiny_output_grid_is_split_many_ways():
    config = heuristics.choose(16, 16, 65536, H200_SMS)
    assert config.block_m == config.block_n == 16
    # 2 programs per SM would be 264 splits; the cap keeps the reduction short.
    assert config.split_k == min(2 * H200_SMS, heuristics.MAX_SPLIT_K) == 256
    assert config.k_per_split % config.block_k == 0


def test_a_grid_that_fills_the_device_is_not_split():
    assert heuristics.choose(4096, 4096, 4096, H200_SMS).split_k == 1


def test_short_k_is_not_split_into_slivers():
    config = heuristics.choose(16, 16, 256, H200_SMS)
    assert config.split_k == 1  # 256 / 64 = 4 K blocks: one split's worth


def test_every_split_has_work_and_together_they_cover_k():
    for m, n, k in [
        (16, 16, 65536),
        (128, 128, 32768),
        (64, 4096, 16384),
        (32, 8192, 8192),
        (3, 5, 7),
    ]:
        config = heuristics.choose(m, n, k, H200_SMS)
        assert (config.split_k - 1) * config.k_per_split < k <= config.split_k * config.k_per_split


def test_the_user_can_force_split_k(monkeypatch):
    monkeypatch.setenv(heuristics.SPLIT_K_ENV, "8")
    assert heuristics.choose(4096, 4096, 4096, H200_SMS).split_k == 8
    monkeypatch.setenv(heuristics.SPLIT_K_ENV, "many")
    with pytest.raises(ValueError, match="positive integer"):
        heuristics.choose(16, 16, 1024, H200_SMS)
