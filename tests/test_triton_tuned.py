"""triton_tuned's own logic: the tuning cache, pruning, the tuner, the declared
precision, and both kernel paths under Triton's interpreter.

The correctness matrix covers the plugin as a whole (test_builtin_matrix.py);
these tests cover what the matrix cannot see on a CPU: tuning and caching run
only on a GPU, so they are driven here with fake trials and a fake clock.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import statistics
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import gemmreg
import pytest
from gemmreg.checking.sanitizer_tools import SANITIZING_ENV
from gemmreg.contract.runtime import CACHE_DIR_ENV
from gemmreg_plugins import triton_tuned
from gemmreg_plugins.triton_tuned import (
    configs,
    device_trial,
    interleaving,
    launchers,
    tma_rules,
    tuner,
    tuning_cache,
)
from gemmreg_plugins.triton_tuned.configs import Config

if TYPE_CHECKING:
    import torch

# Triton 3.6's interpreter trips a NumPy deprecation on every scalar index.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim:DeprecationWarning"
)

# ---------------------------------------------------------------------------
# Fakes
# ---------------------------------------------------------------------------


def tiled(bm: int, bn: int, bk: int = 32, stages: int = 3, warps: int = 4) -> Config:
    return Config(
        path="tiled", block_m=bm, block_n=bn, block_k=bk, num_stages=stages, num_warps=warps
    )


def tma(bm: int, bn: int, bk: int = 64) -> Config:
    return Config(
        path="persistent_tma", block_m=bm, block_n=bn, block_k=bk, num_stages=3, num_warps=8
    )


class FakeTrial:
    """A trial whose 'kernels' cost what ``times_ms`` says; ``broken`` configs
    raise at build, ``crashing`` ones on their call, ``wrong`` ones compute
    garbage. Counts every call."""

    def __init__(
        self,
        times_ms: dict[str, float],
        broken: set[str] = frozenset(),  # type: ignore[assignment]
        crashing: set[str] = frozenset(),  # type: ignore[assignment]
        wrong: set[str] = frozenset(),  # type: ignore[assignment]
        flaky: dict[str, int] | None = None,
    ):
        self.times_ms = times_ms
        self.broken, self.crashing, self.wrong = broken, crashing, wrong
        self.flaky = flaky or {}
        """Configs right on every call but the n-th checked one (a race)."""
        self.checks: dict[str, int] = {}
        self.built: list[str] = []
        self.benchmarked: list[str] = []
        self.current = ""

    def build(self, config: Config) -> tuner.Run:
        if config.name in self.broken:
            raise RuntimeError("PassManager::run failed (out of shared memory)")
        self.built.append(config.name)

        def run() -> None:
            if config.name in self.crashing:
                raise RuntimeError("illegal instruction")
            self.current = config.name

        return run

    def verify(self) -> str | None:
        self.checks[self.current] = self.checks.get(self.current, 0) + 1
        if self.flaky.get(self.current) == self.checks[self.current]:
            return "1 element off"
        return "3 elements off" if self.current in self.wrong else None

    def benchmark(self, run: tuner.Run) -> float:
        run()
        self.benchmarked.append(self.current)
        return self.times_ms[self.current]


def key(**changes: object) -> tuning_cache.CacheKey:
    base = tuning_cache.CacheKey(
        m=4096,
        n=4096,
        k=4096,
        dtype="fp16",
        layout="rowmajor",
        device="NVIDIA H200",
        capability="sm90",
        triton="3.6.0",
        source="0123456789abcdef",
    )
    return attrs.evolve(base, **changes)


CANDIDATES = [tma(128, 256), tiled(128, 128), tiled(64, 64), tiled(32, 32)]
TIMES = {c.name: t for c, t in zip(CANDIDATES, [1.0, 2.0, 0.5, 3.0], strict=True)}
BIG = 4096**3


def tuning_calls(times: dict[str, float]) -> int:
    """The benchmark calls a tuning of candidates that take ``times`` makes:
    to screen them, a lead-in and two each; then, for two contenders or more,
    per round a lead-in and one call each."""
    kept = interleaving.contenders(times)
    screening = 1 + 2 * len(times) if times else 0
    if len(kept) < 2:
        return screening
    return screening + len(interleaving.schedule(len(kept))) * (len(kept) + 1)


@pytest.fixture
def cache_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(tuning_cache.RETUNE_ENV, raising=False)
    return tuning_cache.cache_path()


# ---------------------------------------------------------------------------
# The cache
# ---------------------------------------------------------------------------


def test_the_cache_lives_in_gemmreg_cache_dir_else_home(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    assert tuning_cache.cache_path() == tmp_path / tuning_cache.FILE_NAME
    monkeypatch.delenv(CACHE_DIR_ENV)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert (
        tuning_cache.cache_path() == tmp_path / "home" / ".cache" / "gemmreg" / "triton_tuned.json"
    )


def test_every_field_of_the_key_changes_its_text():
    base = key()
    changes = {
        "m": 4097,
        "n": 14336,
        "k": 8192,
        "dtype": "bf16",
        "layout": "transposedB",
        "device": "NVIDIA H100 80GB HBM3",
        "capability": "sm100",
        "triton": "3.5.1",
        "source": "fedcba9876543210",
        "paths": "persistent_tma",
    }
    assert set(changes) == {f.name for f in attrs.fields(tuning_cache.CacheKey)}
    texts = {base.text()}
    for field, value in changes.items():
        text = attrs.evolve(base, **{field: value}).text()
        assert text not in texts, field
        texts.add(text)
    # the shape is spelt as on the command line, so a file is readable by eye
    assert base.text().startswith("4096x4096x4096|fp16|rowmajor|NVIDIA H200|sm90|triton-3.6.0|")
    assert base.text().endswith("|paths-all")


def test_the_source_hash_follows_the_kernel_source_and_the_lists(tmp_path):
    source = tmp_path / "kernels.py"
    source.write_text("BLOCK = 64\n")
    first = tuning_cache.source_hash([source], "lists-1")
    assert tuning_cache.source_hash([source], "lists-1") == first
    assert tuning_cache.source_hash([source], "lists-2") != first
    source.write_text("BLOCK = 128\n")
    assert tuning_cache.source_hash([source], "lists-1") != first


def test_editing_a_candidate_list_changes_the_plugins_hash(monkeypatch):
    triton_tuned.source_hash.cache_clear()
    before = triton_tuned.source_hash()
    monkeypatch.setattr(configs, "CUDA_TILED", (*configs.CUDA_TILED, tiled(16, 16)))
    triton_tuned.source_hash.cache_clear()
    try:
        assert triton_tuned.source_hash() != before
    finally:
        triton_tuned.source_hash.cache_clear()


def test_choices_made_with_the_unmeasured_forms_offered_are_kept_apart(monkeypatch):
    monkeypatch.delenv(tuning_cache.UNMEASURED_ENV, raising=False)
    triton_tuned.source_hash.cache_clear()
    plain = triton_tuned.source_hash()
    monkeypatch.setenv(tuning_cache.UNMEASURED_ENV, "1")
    triton_tuned.source_hash.cache_clear()
    try:
        assert triton_tuned.source_hash() != plain
    finally:
        triton_tuned.source_hash.cache_clear()


def test_store_then_lookup_round_trips_and_leaves_no_temporary_files(cache_file):
    assert tuning_cache.lookup(key()) is None
    assert tuning_cache.store(key(), {"best": {"x": 1}}) is None
    assert tuning_cache.store(key(m=8192), {"best": {"x": 2}}) is None
    assert tuning_cache.lookup(key()) == {"best": {"x": 1}}
    assert tuning_cache.lookup(key(m=8192)) == {"best": {"x": 2}}
    assert tuning_cache.lookup(key(m=1)) is None
    data = json.loads(cache_file.read_text())
    assert data["format"] == tuning_cache.FORMAT
    assert sorted(p.name for p in cache_file.parent.iterdir()) == [tuning_cache.FILE_NAME]


def test_a_write_that_fails_halfway_leaves_the_old_file_whole(cache_file, monkeypatch):
    tuning_cache.store(key(), {"best": {"x": 1}})
    before = cache_file.read_bytes()

    def fail(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(tuning_cache.os, "replace", fail)
    reason = tuning_cache.store(key(m=8192), {"best": {"x": 2}})
    assert reason is not None and "disk full" in reason
    assert cache_file.read_bytes() == before  # never a half-written file
    assert sorted(p.name for p in cache_file.parent.iterdir()) == [tuning_cache.FILE_NAME]


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe\x00garbage",
        b"[1, 2, 3]",
        json.dumps({"format": "someone-else/9", "entries": {}}).encode(),
        json.dumps({"format": tuning_cache.FORMAT, "entries": [1]}).encode(),
    ],
    ids=["truncated", "binary", "a-list", "foreign-format", "bad-entries"],
)
def test_a_corrupt_or_foreign_file_is_ignored_and_replaced(cache_file, content):
    cache_file.parent.mkdir(parents=True)
    cache_file.write_bytes(content)
    assert tuning_cache.lookup(key()) is None
    assert tuning_cache.store(key(), {"best": {"x": 1}}) is None
    assert tuning_cache.lookup(key()) == {"best": {"x": 1}}


def test_an_unwritable_cache_is_reported_not_raised(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_DIR_ENV, str(blocker / "cache"))
    assert tuning_cache.store(key(), {"best": {}}) is not None
    assert tuning_cache.lookup(key()) is None


# ---------------------------------------------------------------------------
# choose: cache, rule, tuning
# ---------------------------------------------------------------------------


def test_a_cache_hit_benchmarks_nothing(cache_file):
    first = FakeTrial(TIMES)
    choice = tuner.choose(CANDIDATES, key(), lambda: first, volume=BIG)
    assert choice.origin == "tuned"
    assert len(first.benchmarked) == tuning_calls(TIMES)

    def no_trial() -> tuner.Trial:
        raise AssertionError("a cache hit must not make operands or benchmark")

    again = tuner.choose(CANDIDATES, key(), no_trial, volume=BIG)
    assert again.origin == "cache"
    assert (again.best, again.fallback) == (choice.best, choice.fallback)


def test_a_different_key_or_a_forced_retune_benchmarks_again(cache_file, monkeypatch):
    tuner.choose(CANDIDATES, key(), lambda: FakeTrial(TIMES), volume=BIG)
    other = FakeTrial(TIMES)
    tuner.choose(CANDIDATES, key(triton="3.7.0"), lambda: other, volume=BIG)
    assert len(other.benchmarked) == tuning_calls(TIMES)

    monkeypatch.setenv(tuning_cache.RETUNE_ENV, "1")
    forced = FakeTrial({**TIMES, tiled(32, 32).name: 0.1})
    choice = tuner.choose(CANDIDATES, key(), lambda: forced, volume=BIG)
    assert len(forced.benchmarked) == tuning_calls(forced.times_ms)
    assert choice.best == tiled(32, 32)
    monkeypatch.delenv(tuning_cache.RETUNE_ENV)
    assert tuner.choose(CANDIDATES, key(), lambda: FakeTrial({}), volume=BIG).best == tiled(32, 32)


def test_an_entry_that_is_not_ours_is_tuned_again(cache_file):
    tuning_cache.store(key(), {"best": {"path": "warp-drive"}, "fallback": {}})
    trial = FakeTrial(TIMES)
    choice = tuner.choose(CANDIDATES, key(), lambda: trial, volume=BIG)
    assert choice.origin == "tuned" and trial.benchmarked


def test_the_stored_entry_records_timings_and_skip_reasons(cache_file):
    trial = FakeTrial(TIMES, broken={tiled(32, 32).name})
    tuner.choose(CANDIDATES, key(), lambda: trial, volume=BIG)
    entry = tuning_cache.lookup(key())
    assert entry is not None
    assert Config.from_dict(entry["best"]) == tiled(64, 64)
    assert set(entry["screened_ms"]) == {c.name for c in CANDIDATES[:3]}
    assert set(entry["timings_ms"]) == {tiled(64, 64).name}  # the others screened out
    assert entry["same_binary"] == {}
    assert "PassManager" in entry["skipped"][tiled(32, 32).name]
    assert entry["clock"] == ""  # a trial with no clock to describe


def test_the_entry_keeps_what_the_trials_clock_says_of_its_batches(cache_file):
    """A tuning whose clock's holds gave up ranked on figures a launch path can
    be in: the entry says so, beside the pick it explains."""

    class NotedTrial(FakeTrial):
        def clock_note(self) -> str:
            return f"1 batch taken again after their hold gave up ({len(self.benchmarked)} timed)"

    trial = NotedTrial(TIMES)
    choice = tuner.choose(CANDIDATES, key(), lambda: trial, volume=BIG)
    timed = len(trial.benchmarked)
    assert choice.clock == f"1 batch taken again after their hold gave up ({timed} timed)"
    entry = tuning_cache.lookup(key())
    assert entry is not None and entry["clock"] == choice.clock


def test_a_tuning_is_also_recorded_where_the_record_switch_says(cache_file, monkeypatch, tmp_path):
    """The run's own copy of why the tuner chose: the same entry as the
    cache's, written to the file the switch names; a cache hit adds nothing."""
    record = tmp_path / "record" / "tuning.json"
    monkeypatch.setenv(tuning_cache.RECORD_ENV, str(record))
    trial = FakeTrial(TIMES, broken={tiled(32, 32).name})
    tuner.choose(CANDIDATES, key(), lambda: trial, volume=BIG)
    recorded = tuning_cache.lookup(key(), record)
    assert recorded is not None and recorded == tuning_cache.lookup(key())
    assert "PassManager" in recorded["skipped"][tiled(32, 32).name]
    record.unlink()
    tuner.choose(CANDIDATES, key(), lambda: FakeTrial(TIMES), volume=BIG)  # a hit
    assert not record.exists()
    monkeypatch.delenv(tuning_cache.RECORD_ENV)
    assert tuning_cache.record_path() is None


def test_small_problems_are_chosen_by_rule_without_operands(cache_file):
    def no_trial() -> tuner.Trial:
        raise AssertionError("a launch-bound problem is not tuned")

    choice = tuner.choose(CANDIDATES, key(), no_trial, volume=64**3, tune_min_volume=2**24)
    assert choice.origin == "rule"
    assert choice.best == choice.fallback == tiled(32, 32)
    assert not cache_file.exists()  # nothing measured, nothing stored


# ---------------------------------------------------------------------------
# tune
# ---------------------------------------------------------------------------


def test_the_tuner_picks_the_fastest_under_a_fake_clock():
    result = tuner.tune(CANDIDATES, FakeTrial(TIMES))
    assert result.best == tiled(64, 64)
    assert result.screened_ms == pytest.approx(TIMES)
    # the rest are over SCREEN_RATIO times the fastest: not ranked
    assert result.timings_ms == pytest.approx({tiled(64, 64).name: 0.5})
    faster_tma = FakeTrial({**TIMES, tma(128, 256).name: 0.25})
    assert tuner.tune(CANDIDATES, faster_tma).best == tma(128, 256)


def test_compile_time_is_kept_out_of_the_ranking():
    trial = FakeTrial(TIMES)
    winner = tuner.tune(CANDIDATES, trial).best.name
    # each candidate built once, its run called before its benchmark (the
    # compile); then the winner built again for each re-check
    assert trial.built == [c.name for c in CANDIDATES] + [winner] * tuner.RECHECK_CALLS


def test_the_tuner_skips_configs_that_fail_and_says_why():
    fastest, second = tiled(64, 64).name, tma(128, 256).name
    trial = FakeTrial(TIMES, broken={fastest}, crashing={second}, wrong={tiled(128, 128).name})
    result = tuner.tune(CANDIDATES, trial)
    assert result.best == tiled(32, 32)  # the only one left, though the slowest
    assert "PassManager" in result.skipped[fastest]
    assert "illegal instruction" in result.skipped[second]
    assert result.skipped[tiled(128, 128).name].startswith("wrong result")
    assert set(result.timings_ms) == {tiled(32, 32).name}


def test_a_nonsense_time_is_skipped_too():
    trial = FakeTrial({**TIMES, tiled(64, 64).name: float("nan")})
    result = tuner.tune(CANDIDATES, trial)
    assert result.best == tma(128, 256)
    assert "nan" in result.skipped[tiled(64, 64).name]


def test_when_every_config_fails_the_error_lists_them():
    trial = FakeTrial(TIMES, broken={c.name for c in CANDIDATES})
    with pytest.raises(tuner.TuningFailed, match="no candidate config ran") as error:
        tuner.tune(CANDIDATES, trial)
    assert all(c.name in str(error.value) for c in CANDIDATES)


def test_the_fallback_is_the_fastest_tiled_config():
    assert tuner.fallback_of(CANDIDATES, TIMES) == tiled(64, 64)
    assert tuner.fallback_of(CANDIDATES, {}) == tiled(32, 32)  # untimed: the rule
    with pytest.raises(ValueError):
        tuner.fallback_of([tma(128, 256)], {})


# ---------------------------------------------------------------------------
# Pruning
# ---------------------------------------------------------------------------


def _blocks(found: list[Config]) -> set[tuple[int, int, int]]:
    return {(c.block_m, c.block_n, c.block_k) for c in found}


def test_large_problems_keep_every_candidate():
    found = configs.candidates("cuda", "fp16", 4096, 4096, 4096, tma=True)
    assert found == [*configs.CUDA_PERSISTENT_TMA, *configs.CUDA_TILED]
    assert not any(
        c.path == "persistent_tma"
        for c in configs.candidates("cuda", "fp16", 4096, 4096, 4096, tma=False)
    )


def test_no_tile_wider_than_the_problem():
    found = configs.candidates("cuda", "fp16", 64, 64, 4096, tma=True)
    assert found, "a 64-wide problem still gets candidates"
    assert all(c.block_m <= 64 and c.block_n <= 64 for c in found)
    assert all(c.path == "tiled" for c in found)  # TMA tiles do not fit: dropped
    assert len(found) == len(set(found))  # shrunk duplicates removed


def test_skinny_and_tiny_problems_get_small_tiles():
    skinny = configs.candidates("cuda", "fp16", 8, 4096, 4096, tma=True)
    assert {c.block_m for c in skinny} == {16}
    assert max(c.block_n for c in skinny) == 256
    tiny = configs.candidates("cuda", "fp16", 3, 5, 7, tma=True)
    assert _blocks(tiny) == {(16, 16, 16)}
    assert all(c.num_warps <= 4 for c in tiny)


def test_fp32_halves_block_k_of_the_tiled_configs_and_has_tma_configs_of_its_own():
    half = configs.candidates("cuda", "fp16", 4096, 4096, 4096, tma=True)
    single = configs.candidates("cuda", "fp32", 4096, 4096, 4096, tma=True)

    def tiled(found: list[Config]) -> list[Config]:
        return [c for c in found if c.path == "tiled"]

    assert [c.block_k // 2 for c in tiled(half)] == [c.block_k for c in tiled(single)]
    tma = [c for c in single if c.path == "persistent_tma"]
    assert tma == list(configs.CUDA_PERSISTENT_TMA_TF32)
    # A 128x256 fp32 C tile fits 227 KB beside its stages only when stored in parts.
    assert all(c.epilogue_parts >= 2 for c in tma if c.block_m * c.block_n >= 128 * 256)
    assert len(set(single)) == len(single)


def test_rocm_gets_the_tiled_path_only():
    found = configs.candidates("rocm", "fp16", 4096, 4096, 4096, tma=True)
    assert found == list(configs.ROCM_TILED)
    with pytest.raises(ValueError):
        configs.candidates("cpu", "fp16", 64, 64, 64, tma=False)


def test_a_config_survives_the_cache_and_nonsense_does_not():
    config = configs.CUDA_PERSISTENT_TMA[0]
    assert Config.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    for bad in (
        {**config.to_dict(), "path": "warp-drive"},
        {**config.to_dict(), "block_m": 100},
        {**config.to_dict(), "num_warps": 0},
        {**config.to_dict(), "colour": "blue"},
    ):
        with pytest.raises((TypeError, ValueError)):
            Config.from_dict(bad)


# ---------------------------------------------------------------------------
# What is declared
# ---------------------------------------------------------------------------


def test_fp32_is_declared_as_tf32_on_nvidia_and_ieee_elsewhere():
    assert triton_tuned.precision_for("cuda")["fp32"].math == "tf32"
    assert triton_tuned.INPUT_PRECISION["cuda"] == "tf32"
    assert str(triton_tuned.precision_for("cpu")["fp32"]) == "ieee_fp32 (interpreter)"
    assert triton_tuned.precision_for("rocm")["fp32"].math == "ieee_fp32"
    assert triton_tuned.INPUT_PRECISION["rocm"] == "ieee"
    for kind in ("cuda", "rocm", "cpu"):
        assert triton_tuned.precision_for(kind)["fp16"].math == "fp16"


def test_the_tf32_tolerance_is_loose_and_says_why():
    tf32 = triton_tuned.tolerances_for("cuda")["fp32"]
    assert tf32.rtol > gemmreg.contract.records.LOOSE_RTOL["fp32"] and "TF32" in tf32.why
    assert (
        triton_tuned.tolerances_for("cpu")["fp32"].rtol
        <= gemmreg.contract.records.LOOSE_RTOL["fp32"]
    )
    for kind in ("cuda", "rocm", "cpu"):  # every declaration is one the core accepts
        gemmreg.KernelSpec(
            name="tuned_check",
            summary="declaration check",
            prepare=triton_tuned.prepare,
            capabilities=triton_tuned.capabilities_for(kind),
            tolerances=triton_tuned.tolerances_for(kind),
        )


# ---------------------------------------------------------------------------
# Both kernel paths, under the interpreter
# ---------------------------------------------------------------------------

SMALL_TMA = Config(
    path="persistent_tma", block_m=32, block_n=16, block_k=16, num_stages=1, num_warps=4, group_m=2
)
SMALL_TMA_VARIANTS = (
    SMALL_TMA,
    attrs.evolve(SMALL_TMA, block_n=32, epilogue_parts=2),  # C stored in two halves
    attrs.evolve(SMALL_TMA, block_n=64, epilogue_parts=4),  # and in four quarters
    attrs.evolve(SMALL_TMA, persistent=False),  # one program per tile
)
SMALL_TILED = Config(
    path="tiled", block_m=32, block_n=32, block_k=32, num_stages=1, num_warps=4, group_m=2
)

INTERPRETER_TMA_BYTE_STRIDES = (3, 6)
"""Triton's interpreter checks a TMA descriptor's strides in bytes from 3.6 on;
3.4 and 3.5 check them in elements ("stride must be 16-byte aligned" for a
72-element fp16 row, 144 bytes), while their GPU path checks bytes as TMA
does. Those interpreters cannot run the TMA cases below, whatever the kernel."""


def interpreter_refuses_byte_aligned_strides() -> bool:
    from importlib.metadata import version

    major, minor = (int(part) for part in version("triton").split(".")[:2])
    return (major, minor) < INTERPRETER_TMA_BYTE_STRIDES


TMA_IN_THE_INTERPRETER = pytest.mark.skipif(
    interpreter_refuses_byte_aligned_strides(),
    reason="this Triton's interpreter checks TMA strides in elements, not bytes",
)
"""For the TMA kernels' interpreter cases in this module's sibling test files."""


@pytest.mark.parametrize(
    "layout, shape, dtype, tma_able, sms",
    [
        # 4 "SMs": 9 or 6 tiles take 3 or 2 rounds, so 3 programs each step by 3
        ("rowmajor", (65, 40, 72), "fp16", True, 4),  # tails on M and K, through TMA
        ("rowmajor", (65, 40, 72), "fp16", True, 16),  # 9 programs of one tile, step 16
        ("transposedA", (72, 40, 33), "fp16", True, 4),  # A^T through TMA, transposed in-kernel
        ("transposedB", (40, 36, 72), "fp32", True, 4),  # B^T through TMA, N tail
        ("padded", (33, 61, 65), "fp32", False, 4),  # rows 68 and 64 wide: the tiled fallback
    ],
)
@pytest.mark.parametrize("config", SMALL_TMA_VARIANTS, ids=lambda c: c.name)
def test_the_persistent_path_under_the_interpreter(layout, shape, dtype, tma_able, sms, config):
    """Grouped persistent tile loop, TMA zero-fill and clipping, in-kernel
    transposes and the per-launch fallback, checked in float64 (the interpreter
    multiplies in fp32, so the GPU's TF32 is not exercised here)."""
    from gemmreg.contract import backend

    assert backend.current().triton_interpreter
    if tma_able and interpreter_refuses_byte_aligned_strides():
        pytest.skip("this Triton's interpreter checks TMA strides in elements, not bytes")
    assert launch_guarded(config, shape, dtype, layout, sms, seed=7, tma_able=tma_able) < 2e-3


def launch_guarded(
    config: Config,
    shape: tuple[int, int, int],
    dtype: str,
    layout: str,
    sms: int,
    *,
    seed: int,
    tma_able: bool = True,
    precision: str = "ieee",
) -> float:
    """One launch of ``config`` on random operands laid out as ``layout``, into
    a C inside guard words: asserts that TMA takes (or refuses) the operands
    as ``tma_able`` says and that the guards are untouched, and returns the
    largest error against the float64 product, relative to max |A|@|B|."""
    import torch
    from gemmreg.contract.inputs import apply_layout, torch_dtype

    m, n, k = shape
    generator = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=generator).to(torch_dtype(dtype))
    b = torch.randn(k, n, generator=generator).to(torch_dtype(dtype))
    expected = a.double() @ b.double()
    a, b = apply_layout(a, b, layout)
    buffer = torch.full((m * n + 64,), -1280.0, dtype=a.dtype)
    out = buffer[32 : 32 + m * n].view(m, n)
    out.fill_(float("nan"))
    assert (tma_rules.tma_refusal(a, b, out) is None) == tma_able
    launch = launchers.launcher(config, m, n, k, precision, sms, fallback=SMALL_TILED)
    launch(a, b, out)
    scale = (a.double().abs() @ b.double().abs()).max()
    assert bool((buffer[:32] == -1280).all() and (buffer[-32:] == -1280).all())
    return float((out.double() - expected).abs().max() / scale)


@pytest.mark.parametrize(
    "tiles, sms, programs",
    [
        (512, 132, 128),  # 4096^3 in 128x256 tiles on an H200: 4 rounds either way
        (3584, 132, 128),  # 8192x14336x4096: 28 rounds
        (1024, 132, 128),  # 8192x4096x14336: 8 rounds
        (133, 132, 67),  # one tile over: 2 rounds, split evenly
        (264, 132, 132),  # already even
        (100, 132, 100),  # fewer tiles than SMs: one program each
        (1, 132, 1),
    ],
)
def test_a_persistent_launch_starts_the_fewest_programs_for_its_rounds(tiles, sms, programs):
    assert launchers.persistent_programs(tiles, sms) == programs
    rounds = -(-tiles // sms)
    assert programs <= sms and -(-tiles // programs) == rounds


def test_prepare_on_the_cpu_uses_the_fixed_config_and_touches_no_cache(cache_file):
    import torch

    problem = gemmreg.Problem(m=40, n=24, k=8, dtype="fp32")
    a, b = torch.randn(40, 8), torch.randn(8, 24)
    out = torch.empty(40, 24)
    triton_tuned.prepare(problem)(a, b, out)
    assert torch.allclose(out, a @ b, rtol=1e-5, atol=1e-5)
    assert not cache_file.exists()
    with pytest.raises(gemmreg.UnsupportedProblem, match="interpreter"):
        triton_tuned.prepare(gemmreg.Problem(m=4, n=4, k=4, dtype="bf16"))


def test_the_plugin_is_registered_with_its_sources():
    from gemmreg.discovery.registry import discover

    spec = discover().get("triton_tuned").spec
    assert spec.capabilities.tile is None
    assert spec.capabilities.backends == {"cuda", "rocm", "cpu"}
    assert all(os.path.exists(path) for path in spec.sources)


@pytest.mark.parametrize("layout", ["rowmajor", "padded"])
def test_the_real_trial_checks_what_each_candidate_wrote(layout):
    """DeviceTrial's build and verify, on the CPU with interpreted kernels: a
    right kernel passes, one that skips a tile or computes A@B wrongly fails."""
    import torch

    m, n, k = 70, 40, 24

    def make_launch(config: Config) -> launchers.Launcher:
        right = launchers.tiled_launcher(SMALL_TILED, m, n, k, "ieee")
        if config.block_m == 32:
            return right

        def wrong(a, b, out):
            right(a, b, out)
            if config.block_m == 64:
                out[64:, :] = float("nan")  # the last tile row never written
            else:
                out[5, 7] += 0.5

        return wrong

    trial = device_trial.device_trial(m, n, k, torch.float32, layout, make_launch, device="cpu")
    assert trial.a.stride() != (k, 1) or layout == "rowmajor"
    for block_m, verdict in ((32, None), (64, "non-finite"), (16, "1 of")):
        trial.build(attrs.evolve(SMALL_TILED, block_m=block_m))()
        found = trial.verify()
        assert (found is None) if verdict is None else (verdict in (found or ""))
    # The interpreter hands back no machine code: the tuner times every candidate.
    assert trial.binary(SMALL_TILED) is None


class SameBinaryTrial(FakeTrial):
    """A trial that can tell which configs compile to one binary: ``same``
    maps a config's name to the name of the config it shares a binary with."""

    def __init__(self, times_ms: dict[str, float], same: dict[str, str]):
        super().__init__(times_ms)
        self.same = same

    def binary(self, config: Config) -> str | None:
        return "code of " + self.same.get(config.name, config.name)


def test_a_config_with_the_binary_of_an_earlier_one_is_not_timed_again():
    """Under Triton 3.6 ``ws`` compiles to nothing on Hopper: two configs,
    one binary (evidence/2026-12-02-h200-tuner-order-bias/same-binary.txt)."""
    plain, twin, other = tma(128, 256), attrs.evolve(tma(128, 256), ws=True), tma(128, 128)
    times = {plain.name: 1.0, twin.name: 1.0, other.name: 1.02}
    trial = SameBinaryTrial(times, same={twin.name: plain.name})
    result = tuner.tune([plain, twin, other], trial)
    assert twin.name not in trial.benchmarked
    assert result.same_binary == {twin.name: plain.name}
    assert set(result.timings_ms) == {plain.name, other.name}
    assert result.best == plain
    # A trial whose binary() fails or says nothing times everyone.
    assert tuner._binary(FakeTrial(times), plain) is None


def test_a_forced_path_tunes_that_path_alone(cache_file, monkeypatch):
    trial = FakeTrial(TIMES)  # the tiled 64x64 is fastest overall
    choice = tuner.choose(CANDIDATES, key(), lambda: trial, volume=BIG, only="persistent_tma")
    assert choice.best == tma(128, 256)
    # screened alone (a lead-in, then one call per pass): nothing to rank
    assert trial.benchmarked == [tma(128, 256).name] * 3
    assert choice.fallback == tiled(32, 32)  # no tiled config was timed: the rule's
    # a path with no candidate for the problem leaves the choice to all of them
    assert tuner.choose(
        CANDIDATES[1:], key(m=1), lambda: FakeTrial(TIMES), volume=BIG, only="persistent_tma"
    ).best == tiled(64, 64)
    monkeypatch.setenv(tuning_cache.PATH_ENV, "persistent_tma")
    assert tuning_cache.forced_path() == "persistent_tma"
    monkeypatch.setenv(tuning_cache.PATH_ENV, "fast")
    with pytest.raises(ValueError, match="tiled"):
        tuning_cache.forced_path()


def test_without_benchmarking_the_first_candidate_or_a_stored_choice_is_taken(
    cache_file, monkeypatch
):
    """Under a sanitizer (or GEMMREG_TRITON_TUNED_TUNE=0) nothing is timed: a
    stored choice still wins, else the first candidate of the path asked for."""

    def no_trial() -> tuner.Trial:
        raise AssertionError("nothing may be benchmarked")

    untuned = tuner.choose(CANDIDATES, key(), no_trial, volume=BIG, benchmark=False)
    assert (untuned.best, untuned.origin) == (CANDIDATES[0], "untuned")
    only_tiled = tuner.choose(
        CANDIDATES, key(), no_trial, volume=BIG, only="tiled", benchmark=False
    )
    assert only_tiled.best == next(c for c in CANDIDATES if c.path == "tiled")
    assert tuning_cache.lookup(key()) is None  # an untuned choice is never stored

    tuned = tuner.choose(CANDIDATES, key(), lambda: FakeTrial(TIMES), volume=BIG)
    stored = tuner.choose(CANDIDATES, key(), no_trial, volume=BIG, benchmark=False)
    assert (stored.best, stored.origin) == (tuned.best, "cache")

    assert tuning_cache.benchmarking_allowed()
    monkeypatch.setenv(tuning_cache.TUNE_ENV, "0")
    assert not tuning_cache.benchmarking_allowed()
    monkeypatch.delenv(tuning_cache.TUNE_ENV)
    monkeypatch.setenv(SANITIZING_ENV, "racecheck")
    assert not tuning_cache.benchmarking_allowed()


TF32_SWAP_VARIANTS = (
    attrs.evolve(SMALL_TMA, block_n=32, epilogue_parts=2),
    attrs.evolve(SMALL_TMA, block_m=16, block_n=64, epilogue_parts=4, persistent=False),
)
TF32_ROUTES = (
    (TF32_SWAP_VARIANTS[0], "swapped"),
    (TF32_SWAP_VARIANTS[1], "swapped"),
    (attrs.evolve(SMALL_TMA, block_n=32, epilogue_parts=2, transpose_b=True), "k-major copy"),
)


def tf32_truncated(t: torch.Tensor) -> torch.Tensor:
    """``t`` (fp32) with its low 13 mantissa bits cleared: what TF32 keeps of it."""
    import torch

    return (t.view(torch.int32) & -(1 << 13)).view(torch.float32)


@pytest.mark.parametrize("config, route", TF32_ROUTES, ids=lambda c: getattr(c, "name", c))
def test_tf32_products_take_a_k_major_route_for_b(config, route):
    """Row-major fp32 under TF32 either runs C^T = B^T A^T with B truncated in
    registers (``tf32_swap``; tails on every axis, the transposed accumulator
    stored in parts) or copies B K-major first (``transpose_b``). The
    interpreter multiplies in fp32, which tells the routes apart: the swapped
    kernel's result is A times the truncated B, measurably not A times B."""
    import torch

    if interpreter_refuses_byte_aligned_strides():
        pytest.skip("this Triton's interpreter checks TMA strides in elements, not bytes")
    m, n, k = 65, 68, 40  # rows of 160, 272 and 272 bytes: TMA-able, tails on every axis
    generator = torch.Generator().manual_seed(11)
    a = torch.randn(m, k, generator=generator)
    b = torch.randn(k, n, generator=generator)
    out = torch.full((m, n), float("nan"))
    assert tma_rules.tma_refusal(a, b, out) is None
    assert tma_rules.tf32_swap("tf32", a, False, False)
    launchers.launcher(config, m, n, k, "tf32", 3, fallback=SMALL_TILED)(a, b, out)
    truncated = a.double() @ tf32_truncated(b).double()
    plain = a.double() @ b.double()
    expected, other = (truncated, plain) if route == "swapped" else (plain, truncated)
    assert float((out.double() - expected).abs().max()) < 1e-4
    assert float((out.double() - other).abs().max()) > 1e-3


@pytest.mark.parametrize("k, n", [(40, 68), (1, 16), (130, 3)])
def test_the_k_major_copy_of_b_is_b(k, n):
    """Tails on both axes of the 64x64 tiles; the copy is K-major with rows
    padded to 16 bytes, which is what TMA takes as a transposed B."""
    import torch
    from gemmreg_plugins.triton_tuned import transpose

    b = torch.randn(k, n, generator=torch.Generator().manual_seed(5))
    copy = transpose.k_major(b)
    assert copy.shape == (k, n) and copy.stride(0) == 1
    assert (copy.stride(1) * copy.element_size()) % 16 == 0
    assert torch.equal(copy, b)


@pytest.mark.parametrize(
    "precision, dtype, a_t, b_t, swapped",
    [
        ("tf32", "fp32", False, False, True),
        ("ieee", "fp32", False, False, False),  # IEEE fp32 is no wgmma product
        ("tf32", "fp16", False, False, False),  # 16-bit wgmma transposes in shared memory
        ("tf32", "fp32", True, False, False),  # A^T: the plain kernel
        ("tf32", "fp32", False, True, False),  # B^T is K-major already
    ],
)
def test_only_row_major_tf32_products_are_swapped(precision, dtype, a_t, b_t, swapped):
    import torch
    from gemmreg.contract.inputs import torch_dtype

    a = torch.empty(8, 8, dtype=torch_dtype(dtype))
    assert tma_rules.tf32_swap(precision, a, a_t, b_t) is swapped


def test_a_winner_wrong_on_a_later_call_loses_to_the_next_fastest():
    """A race shows on some calls only: the fastest config is right when first
    checked and wrong on its 5th call, so the tuner re-runs the winner, skips
    it with the reason, and takes the next fastest (re-checked in turn)."""
    racy, steady, slow = tma(128, 256), tma(128, 128), tiled(64, 64)
    trial = FakeTrial({racy.name: 1.0, steady.name: 1.5, slow.name: 3.0}, flaky={racy.name: 5})
    result = tuner.tune([racy, steady, slow], trial)
    assert result.best == steady
    assert "re-run" in result.skipped[racy.name] and racy.name not in result.timings_ms
    assert trial.checks[steady.name] == 1 + tuner.RECHECK_CALLS


def test_no_candidate_right_on_every_call_is_a_tuning_failure():
    only = tiled(128, 128)
    with pytest.raises(tuner.TuningFailed, match="re-run"):
        tuner.tune([only], FakeTrial({only.name: 1.0}, flaky={only.name: 2}))


# ---------------------------------------------------------------------------
# interleaved timing: clocks that move while the tuner runs
# ---------------------------------------------------------------------------


class DriftingTrial(FakeTrial):
    """A trial on a GPU whose clocks move: the n-th benchmark call (from 0)
    takes the config's time times ``clock(n)``."""

    def __init__(self, times_ms: dict[str, float], clock):
        super().__init__(times_ms)
        self.clock = clock

    def benchmark(self, run: tuner.Run) -> float:
        calls = len(self.benchmarked)
        return super().benchmark(run) * self.clock(calls)


def sequential_pick(candidates: list[Config], trial: DriftingTrial) -> Config:
    """What timing each candidate once, one after the other, would choose."""
    timed = []
    for config in candidates:
        run = trial.build(config)
        timed.append((trial.benchmark(run), config.name, config))
    return min(timed)[2]


@pytest.mark.parametrize(
    "clock, why",
    [
        (lambda n: 1 + 0.03 * n, "clocks falling steadily as the GPU heats"),
        (lambda n: 1.0 if n < 2 else 1.08, "a sudden drop to a lower clock"),
        (lambda n: 1.08 if 2 <= n < 5 else 1.0, "a dip inside one pair of rounds"),
    ],
)
def test_interleaved_rounds_pick_the_fastest_where_a_sequential_tuner_does_not(clock, why):
    fast, close, slow = tma(128, 256), tiled(128, 128), tiled(64, 64)
    times = {fast.name: 1.00, close.name: 1.01, slow.name: 1.03}
    order = [slow, close, fast]  # the fastest timed last: where the clocks have fallen
    assert sequential_pick(order, DriftingTrial(times, clock)) != fast, why
    result = tuner.tune(order, DriftingTrial(times, clock))
    assert result.best == fast, why
    assert min(result.timings_ms, key=result.timings_ms.__getitem__) == fast.name


def test_screening_after_an_idle_spell_drops_no_candidate_a_cold_start_flattered():
    """On the H200 the tuner's first candidate, screened first right after the
    candidates were compiled and checked, screened 2-13% faster than its
    ranking score put it, against the others' median
    (evidence/2026-12-02-h200-tuner-screening-bias/screen-bias.txt). Here the first call
    runs 20% fast (a GPU cooled while the host compiled) and the clocks fall
    3% a call after it: one pass in list order cuts every later candidate,
    the fastest with them; the lead-in and the reversed second pass keep
    every one of them, and the rounds then find the fastest."""
    order = [tma(128, 256)] + [attrs.evolve(tma(128, 256), group_m=g) for g in (1, 2, 4, 16, 32)]
    best = order[-1]
    times = {c.name: 1.0 for c in order} | {best.name: 0.97}

    def clock(n: int) -> float:
        return 0.8 if n == 0 else 1 + 0.03 * n

    one_pass = DriftingTrial(times, clock)
    flattered = {c.name: one_pass.benchmark(one_pass.build(c)) for c in order}
    assert interleaving.contenders(flattered) == [order[0].name]
    result = tuner.tune(order, DriftingTrial(times, clock))
    assert set(result.screened_ms) == set(result.timings_ms) == set(times)
    assert result.best == best


def test_every_round_times_every_candidate_once_in_a_balanced_design():
    """Whole passes through a Williams design: each candidate in each position,
    and after each other candidate, equally often."""
    for count in (2, 3, 7, 10):
        orders = interleaving.schedule(count)
        assert len(orders) >= interleaving.MIN_ROUNDS
        assert all(sorted(order) == list(range(count)) for order in orders)
        at = Counter((order.index(i), i) for order in orders for i in range(count))
        assert len(set(at.values())) == 1 and len(at) == count * count
        after = Counter((a, b) for order in orders for a, b in itertools.pairwise(order))
        assert len(set(after.values())) == 1 and len(after) == count * (count - 1)
    assert interleaving.schedule(0) == [[]] * interleaving.MIN_ROUNDS


class CarryOverTrial(FakeTrial):
    """A GPU on which a kernel runs at the clocks its predecessor left: the
    call right after ``cool`` (a slow candidate, light on power) runs
    ``boost`` faster. On the H200 this made the tuner's first candidate, timed
    right after its list's slowest one, beat its own byte-identical twin by
    3.5% at the median (evidence/2026-12-02-h200-tuner-order-bias/tuner-bias.txt)."""

    def __init__(self, times_ms: dict[str, float], cool: str, boost: float = 0.94):
        super().__init__(times_ms)
        self.cool, self.boost = cool, boost

    def benchmark(self, run: tuner.Run) -> float:
        after_cool = bool(self.benchmarked) and self.benchmarked[-1] == self.cool
        return super().benchmark(run) * (self.boost if after_cool else 1.0)


def forward_backward_pick(candidates: list[Config], trial: FakeTrial) -> str:
    """The tuner before the Williams design: three forward-backward pairs of rounds, each
    pair starting at another offset, the median over pairs of each pair's mean
    log-ratio against the round's mean."""
    runs = {c.name: trial.build(c) for c in candidates}
    names, count = list(runs), len(runs)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(6):
        order = [(r // 2 * count // 3 + i) % count for i in range(count)]
        for i in order if r % 2 == 0 else order[::-1]:
            samples[names[i]].append(trial.benchmark(runs[names[i]]))
    logs = {n: [math.log(t) for t in samples[n]] for n in names}
    centres = [statistics.fmean(logs[n][r] for n in names) for r in range(6)]
    score = {
        n: statistics.median(
            statistics.fmean(logs[n][r] - centres[r] for r in (p, p + 1)) for p in (0, 2, 4)
        )
        for n in names
    }
    return min(score, key=score.__getitem__)


def test_a_predecessor_s_clocks_favour_no_candidate():
    first, fast, third, cool = (
        tma(128, 256),
        attrs.evolve(tma(128, 256), group_m=16),
        attrs.evolve(tma(128, 256), flatten=True),
        tma(128, 128),
    )
    order = [first, fast, third, cool]  # cool within SCREEN_RATIO: it is ranked too
    times = {first.name: 1.0, fast.name: 0.995, third.name: 1.004, cool.name: 1.12}
    assert forward_backward_pick(order, CarryOverTrial(times, cool.name)) == first.name
    result = tuner.tune(order, CarryOverTrial(times, cool.name))
    assert result.best == fast
    # Equal kernels score alike, wherever they stand and whatever follows what.
    level = dict.fromkeys(times, 1.0) | {cool.name: 1.12}
    scores = tuner.tune(order, CarryOverTrial(level, cool.name)).timings_ms
    assert scores[first.name] == pytest.approx(scores[fast.name], rel=1e-12)
    assert scores[fast.name] == pytest.approx(scores[third.name], rel=1e-12)


def test_a_candidate_failing_in_a_later_round_is_skipped_and_the_rest_still_ranked():
    fast, slow = tma(128, 256), tiled(64, 64)

    class FailsLater(FakeTrial):
        def benchmark(self, run: tuner.Run) -> float:
            ms = super().benchmark(run)
            # its 5th call: after the screening's three, in the first ranking round
            if self.current == fast.name and self.benchmarked.count(fast.name) == 5:
                raise RuntimeError("unspecified launch failure")
            return ms

    result = tuner.tune([fast, slow], FailsLater({fast.name: 1.0, slow.name: 1.05}))
    assert result.best == slow
    assert "launch failure" in result.skipped[fast.name]
    assert set(result.timings_ms) == {slow.name}
    assert result.lead is None  # no ranked contender left beside it


def test_scores_refuse_samples_of_unequal_rounds():
    with pytest.raises(ValueError, match="one time per round"):
        interleaving.scores({"a": [1.0, 1.0], "b": [1.0]})
    assert interleaving.scores({}) == {}


def test_equal_times_go_to_the_earlier_candidate():
    first, second = tma(128, 256), tiled(64, 64)
    times = {first.name: 1.0, second.name: 1.0}
    assert tuner.tune([first, second], FakeTrial(times)).best == first
    assert tuner.tune([second, first], FakeTrial(times)).best == second


# ---------------------------------------------------------------------------
# the pick against its runner-up
# ---------------------------------------------------------------------------


def test_the_pick_s_lead_is_counted_round_by_round_and_kept_in_the_entry(cache_file):
    """A clear lead: the pick was the faster in every ranking round, by the
    true ratio; the cache entry keeps the same record beside the pick."""
    fast, close, slow = tma(128, 256), tiled(128, 128), tiled(64, 64)
    times = {fast.name: 1.00, close.name: 1.04, slow.name: 1.10}
    order = [slow, close, fast]
    result = tuner.tune(order, FakeTrial(times))
    rounds = len(interleaving.schedule(len(order)))
    assert result.best == fast
    assert result.lead == {
        "runner_up": close.name,
        "rounds_won": rounds,
        "rounds": rounds,
        "median_lead": 1.04,
    }
    choice = tuner.choose(order, key(), lambda: FakeTrial(times), volume=BIG)
    entry = tuning_cache.lookup(key())
    assert entry is not None and entry["lead"] == choice.lead == result.lead


def test_a_lead_inside_the_clock_s_scatter_shows_as_rounds_split_between_the_two():
    """Two forms 0.1% apart on a clock whose every call moves by up to 3%:
    the scores still name one of them, and the record shows a pick that
    another tuning could make the other way (each led in some rounds)."""
    first, second = tma(128, 256), attrs.evolve(tma(128, 256), group_m=16)
    jitter = random.Random(5)
    trial = DriftingTrial(
        {first.name: 1.000, second.name: 1.001}, lambda n: jitter.uniform(0.97, 1.03)
    )
    result = tuner.tune([first, second], trial)
    lead = result.lead
    assert lead is not None and lead["runner_up"] in {first.name, second.name} - {result.best.name}
    assert 0 < lead["rounds_won"] < lead["rounds"] == len(interleaving.schedule(2))
    assert 0.97 / 1.03 < lead["median_lead"] < 1.03 / 0.97


def test_head_to_head_counts_only_the_rounds_both_ran():
    rounds = {"a": [1.0, 2.0, 1.0, 1.0], "b": [1.1, 1.8, 1.3, 0.9]}
    assert interleaving.head_to_head(rounds, "a", "b") == {
        "runner_up": "b",
        "rounds_won": 2,  # 1.0 < 1.1 and 1.0 < 1.3
        "rounds": 4,
        "median_lead": 1.0,  # of 1.1, 0.9, 1.3 and 0.9
    }
    assert interleaving.head_to_head(rounds, "a", "c") is None
    assert tuner.tune(CANDIDATES, FakeTrial(TIMES)).lead is None  # one contender: no rounds
