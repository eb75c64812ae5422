"""The deterministic mode gives bit-identical results from run to run.

Run in a fresh process, so that gemmreg decides the backend (and, with no
GPU, switches Triton's interpreter on) before triton is imported.
"""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import gemmreg
import torch
from gemmreg import Problem
from gemmreg_splitk.plugin import make_prepare

DEVICE = gemmreg.where().device

problem = Problem(m=20, n=24, k=700)
launch = make_prepare(atomic=False)(problem)
g = torch.Generator().manual_seed(5)
a = torch.randn(20, 700, generator=g).to(DEVICE)
b = torch.randn(700, 24, generator=g).to(DEVICE)
outs = []
for _ in range(3):
    out = torch.full((20, 24), float("nan"), device=DEVICE)
    launch(a, b, out)
    outs.append(out.cpu())
ref = a.double().cpu() @ b.double().cpu()
print(all(torch.equal(outs[0], o) for o in outs[1:]), float((outs[0].double() - ref).abs().max()))
"""


def test_deterministic_mode_is_bit_identical_across_runs():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True
    )
    identical, error = done.stdout.split()
    assert identical == "True"
    assert float(error) < 1e-3
