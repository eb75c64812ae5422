"""triton_tuned's candidates at the 20 points of
``examples/shapes/llm-projections.yaml`` on an H200's 132 SMs, in bf16 and
fp32, pinned: every config the tuner is handed (the split-K, TMA split-K and
GEMV candidates the dispatch fits to the problem, then the tile lists), in
order, as :attr:`Config.name` spells it.

The dispatch is a pure function of the shape, dtype and SM count, and what
it hands the tuner is what the tuning cache's entries and the evidence's
runs were chosen from: a change to it must be meant, not a side effect of
tidying its code. Run this module as a script to write the lists again
from the code as it stands (then say in the commit why they changed).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from gemmreg_plugins.triton_tuned import configs

REPO = Path(__file__).resolve().parents[1]
PINNED = REPO / "tests" / "fixtures" / "triton_tuned_llm_candidates.json"
LLM_SHAPES = REPO / "examples" / "shapes" / "llm-projections.yaml"
H200_SMS = 132
DTYPES = ("bf16", "fp32")


def llm_points() -> list[tuple[int, int, int]]:
    shapes = yaml.safe_load(LLM_SHAPES.read_text())["shapes"]
    return [(s["m"], s["n"], s["k"]) for s in shapes]


def candidate_names(dtype: str, m: int, n: int, k: int) -> list[str]:
    """What the tuner gets on an H200 with TMA and Gluon."""
    found = configs.candidates("cuda", dtype, m, n, k, tma=True, gluon=True, num_sms=H200_SMS)
    return [config.name for config in found]


def current() -> dict[str, dict[str, list[str]]]:
    return {
        dtype: {f"{m}x{n}x{k}": candidate_names(dtype, m, n, k) for m, n, k in llm_points()}
        for dtype in DTYPES
    }


@pytest.fixture(scope="module")
def pinned() -> dict[str, dict[str, list[str]]]:
    return json.loads(PINNED.read_text())


def test_the_pinned_lists_cover_the_twenty_points_in_both_dtypes(pinned):
    points = [f"{m}x{n}x{k}" for m, n, k in llm_points()]
    assert len(points) == 20
    assert {dtype: list(by_point) for dtype, by_point in pinned.items()} == {
        dtype: points for dtype in DTYPES
    }
    # Every split path is among them, so each is pinned somewhere.
    names = [name for by_point in pinned.values() for found in by_point.values() for name in found]
    assert {configs.Config.from_name(name).path for name in names} >= {
        "split_k",
        "tma_split_k",
        "gemv",
    }


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, n, k", llm_points(), ids=lambda v: str(v))
def test_the_candidates_are_the_pinned_ones(pinned, dtype, m, n, k):
    assert candidate_names(dtype, m, n, k) == pinned[dtype][f"{m}x{n}x{k}"]


if __name__ == "__main__":
    PINNED.write_text(json.dumps(current(), indent=1) + "\n")
    print(f"wrote {PINNED.relative_to(REPO)}")
