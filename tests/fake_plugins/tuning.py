"""A kernel that 'autotunes' in prepare: slow the first time, then cached on
disk under $GEMMREG_CACHE_DIR, the way a real tuned plugin should keep its choice."""

import os
import time
from pathlib import Path

import gemmreg
import torch

from fake_plugins import fp32_spec

TUNING_S = 0.5


def launch(a, b, out):
    torch.mm(a, b, out=out)


def prepare(problem):
    cache = Path(os.environ.get("GEMMREG_CACHE_DIR", Path.home() / ".cache" / "gemmreg"))
    choice = cache / f"fake_tuning-{problem.label}.txt"
    if not choice.exists():
        time.sleep(TUNING_S)  # the 'benchmark every config' step
        cache.mkdir(parents=True, exist_ok=True)
        choice.write_text("torch.mm")
    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_tuning", launch, prepare=prepare))
