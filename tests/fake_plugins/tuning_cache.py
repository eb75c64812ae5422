"""A kernel that "tunes" in its prepare the way triton_tuned does: the first
process to prepare it stores its choice under ``gemmreg.where().cache_dir``,
later ones read it. Used to show the profiled worker finds the timed choice."""

import json
import os

import gemmreg
import torch

from fake_plugins import fp32_spec

FILE = "fake_tuning_cache.json"


def launch(a, b, out):
    torch.mm(a, b, out=out)


def prepare(problem):
    path = gemmreg.where().cache_dir / FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"pid": os.getpid()}))
    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_tuning_cache", launch, prepare=prepare))
