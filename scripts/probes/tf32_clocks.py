"""The clocks and power the TF32 Gluon kernel and cuBLAS's TF32 kernel run at.

Why: at Nsight Compute's locked clocks the Gluon kernel takes as many cycles
as cuBLAS's at 8192^3 and fewer at 4096^3, yet gemmreg's verdicts at the
card's own clocks put it behind
(``evidence/2026-12-05-h100-tf32-cycles-and-clocks``). If the card, at its
power limit, clocks one kernel lower than the other, this shows it: each
kernel is called back to back for ``--seconds``, in turns (``--turns``,
the first kernel alternating), while a thread reads the SM clock, the board
power and the throttle reasons through NVML every ``--every`` seconds; per
turn, the medians and each call's time (CUDA events over the turn).

On a GPU machine (gemmreg installed; nvidia-ml-py, which the GPU images carry)::

    GEMMREG_TRITON_TUNED_TUNE=0 GEMMREG_TRITON_TUNED_CONFIG=gluon_tf32:256x128x32-s4-w4-vs \\
      python scripts/probes/tf32_clocks.py --size 8192 --out "$OUT/clocks.json"
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def sampled(call: Callable[[], Any], seconds: float, every: float, handle: Any) -> dict[str, Any]:
    """``call`` back to back for ``seconds``, NVML read every ``every`` seconds meanwhile."""
    import pynvml
    import torch
    from gemmreg.instruments.gpu_record import reasons_call

    reasons = reasons_call(pynvml, "Current")
    samples: list[tuple[int, float, int]] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            samples.append(
                (
                    pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
                    pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
                    reasons(handle),
                )
            )
            time.sleep(every)

    reader = threading.Thread(target=read)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    calls = 0
    reader.start()
    start.record()
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        for _ in range(10):
            call()
        calls += 10
        torch.cuda.synchronize()
    end.record()
    torch.cuda.synchronize()
    done.set()
    reader.join()
    steady = samples[len(samples) // 4 :]  # the first quarter: clocks still settling
    return {
        "calls": calls,
        "ms_per_call": start.elapsed_time(end) / calls,
        "sm_mhz_median": statistics.median(s[0] for s in steady),
        "power_w_median": statistics.median(s[1] for s in steady),
        "throttle_reasons": sorted({hex(s[2]) for s in steady}),
        "samples": len(steady),
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--size", type=int, default=8192)
    p.add_argument("--seconds", type=float, default=4.0)
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--every", type=float, default=0.05)
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)

    from tf32_ncu import tf32_square  # beside this script

    size = args.size
    launch, a, b, out = tf32_square(size)
    import pynvml
    import torch

    kernels = {
        "triton_tuned": lambda: launch(a, b, out),
        "torch.mm": lambda: torch.mm(a, b, out=out),
    }
    for call in kernels.values():  # compiled and warm
        call()
    torch.cuda.synchronize()
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    turns = []
    for turn in range(args.turns):
        # ABBA: which kernel goes first alternates, so that the card's heat,
        # which builds over the turns, weighs on both alike
        order = list(kernels.items())
        for name, call in order if turn % 2 == 0 else order[::-1]:
            found = {
                "turn": turn,
                "kernel": name,
                **sampled(call, args.seconds, args.every, handle),
            }
            turns.append(found)
            print(
                f"turn {turn} {name:13} {found['ms_per_call']:.4f} ms/call  "
                f"SM {found['sm_mhz_median']:.0f} MHz  {found['power_w_median']:.0f} W  "
                f"throttle {','.join(found['throttle_reasons'])}",
                flush=True,
            )
    result = {
        "device": torch.cuda.get_device_name(),
        "size": size,
        "variant": getattr(launch, "gemmreg_variant", None) or repr(launch),
        "power_limit_w": pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0,
        "turns": turns,
    }
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
