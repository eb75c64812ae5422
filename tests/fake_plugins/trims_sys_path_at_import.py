"""A plugin whose import drops site-packages from ``sys.path``: every plugin
imported after it could no longer import torch's neighbours."""

import sys

import torch

from fake_plugins import fp32_spec

sys.path[:] = [p for p in sys.path if "site-packages" not in p]

SPEC = fp32_spec("fake_trims_sys_path", lambda a, b, out: torch.mm(a, b, out=out))
