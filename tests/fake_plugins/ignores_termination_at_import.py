"""A plugin whose import makes gemmreg ignore SIGTERM and SIGHUP."""

import signal

import torch

from fake_plugins import fp32_spec

signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)

SPEC = fp32_spec("fake_ignores_termination", lambda a, b, out: torch.mm(a, b, out=out))
