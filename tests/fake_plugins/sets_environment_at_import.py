"""A plugin whose import blocks another plugin in the environment workers inherit."""

import os

import torch

from fake_plugins import fp32_spec

os.environ["GEMMREG_BLOCK_PLUGINS"] = "triton_baseline,fake_plugins.good"

SPEC = fp32_spec("fake_sets_environment", lambda a, b, out: torch.mm(a, b, out=out))
