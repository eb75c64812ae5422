"""A plugin whose import moves gemmreg to another working directory (where a
relative ``--out`` would then be written)."""

import os
import tempfile

import torch

from fake_plugins import fp32_spec

os.chdir(tempfile.gettempdir())

SPEC = fp32_spec("fake_changes_directory", lambda a, b, out: torch.mm(a, b, out=out))
