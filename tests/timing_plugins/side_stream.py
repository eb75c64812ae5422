"""side_stream_mm: the stream exploit. On a GPU, ``torch.mm`` runs on a
private side stream and the launch returns without joining it back to the
caller's stream, so events on the caller's stream time (almost) nothing. Its
values are right; only whole-device integrity checks can tell.

The side stream waits for the caller's stream first (inputs are ready: the
values pass), and is created in prepare (launch must not allocate). On the CPU,
where launches are synchronous, it is plain ``torch.mm``.
"""

from __future__ import annotations

import gemmreg
import torch

from timing_plugins import runs_on_cpu, torch_mm_spec


def _make_launch(problem: gemmreg.Problem) -> gemmreg.Launch:
    side = None if runs_on_cpu() else torch.cuda.Stream()

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        if side is None or not out.is_cuda:
            torch.mm(a, b, out=out)
            return
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            torch.mm(a, b, out=out)
        # Deliberately no torch.cuda.current_stream().wait_stream(side).

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(
        torch_mm_spec(
            "side_stream_mm",
            "torch.mm on a private stream, never joined back (the stream exploit)",
            _make_launch,
            backends={"cuda", "cpu"},
        )
    )
