"""How the split-K tuner (``tune.py``) checks and times one candidate: the
inputs, fp32 reference and bound of one (shape, dtype), and timing against
``torch.mm`` as gemmreg's clock samples (L2 flushed before each call, each
batch of calls queued behind a GPU spin)."""

from __future__ import annotations

import argparse
import time
from typing import Any

FLUSH_L2_TIMES = 4
"""The flush buffer is this many times L2, as gemmreg's clock has it: a
tiny problem's time is then its cold reads and its launch, as gemmreg's
end-to-end verdict sees it (a warm-L2 ranking picked configs that lost
there: evidence/2026-11-30-h200-two-gpu-sweeps/README.md)."""
LEAD_SPIN_CYCLES = 500_000
"""GPU clock cycles of the spin each batch of calls is queued behind, as gemmreg's
clock has it: the host is ahead before the first call (on an H200 the first call
after a synchronisation otherwise carried its whole launch path)."""
L2_STATES = ("clean", "dirty")
"""What the flush before each call leaves in L2, as ``gemmreg compare --l2``."""


class Bench:
    """Inputs, fp32 reference and bound for one (shape, dtype); times candidates."""

    def __init__(self, m: int, n: int, k: int, dtype: str, args: argparse.Namespace) -> None:
        import gemmreg
        import torch
        from gemmreg_splitk import plugin

        self.torch, self.where, self.plugin = torch, gemmreg.where(), plugin
        self.m, self.n, self.k, self.args = m, n, k, args
        device, tdtype = self.where.device, gemmreg.torch_dtype(dtype)  # type: ignore[arg-type]
        gen = torch.Generator(device="cpu").manual_seed(16)
        self.a = torch.randn(m, k, generator=gen).to(device=device, dtype=tdtype)
        self.b = torch.randn(k, n, generator=gen).to(device=device, dtype=tdtype)
        torch.backends.cuda.matmul.allow_tf32 = False  # the reference is true fp32
        af, bf = self.a.float(), self.b.float()
        self.ref = af @ bf
        tol = plugin.TOLERANCES[dtype]
        self.bound = tol.atol + tol.rtol * (af.abs() @ bf.abs())
        self.c = torch.empty(m, n, dtype=tdtype, device=device)
        self.gpu = not self.where.triton_interpreted and device.startswith("cuda")
        self.flush = None
        if self.gpu and not args.warm:  # gemmreg's flush: 4x L2, nothing of A, B, C survives
            l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 2**26
            self.flush = torch.empty(FLUSH_L2_TIMES * l2 // 8, dtype=torch.int64, device=device)
            self.sink = torch.empty((), dtype=torch.int64, device=device)

    def check(self, config: Any, atomic: bool) -> tuple[Any, str]:
        """The launch, or None and why not."""
        try:
            launch = self.plugin.build_launch(self.m, self.n, self.k, config, atomic, self.where)
            for call in (1, 2):
                self.c.fill_(float("nan"))
                launch(self.a, self.b, self.c)
                err = (self.c.float() - self.ref).abs()
                bad = int((~(err <= self.bound)).sum())
                if bad:
                    worst = float(err.nan_to_num(float("inf")).max())
                    return None, (f"wrong: call {call}: {bad} of {self.c.numel()} elements "
                                  f"outside atol + rtol*|A|@|B| (worst {worst:.3g})")  # fmt: skip
        except Exception as exc:  # a candidate that fails to compile or launch is reported
            return None, f"error: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        return launch, ""

    def _time(self, fn: Any, reps: int) -> float:
        torch = self.torch
        if not self.gpu:
            start = time.perf_counter()
            for _ in range(reps):
                fn()
            return (time.perf_counter() - start) * 1e3 / reps
        if self.flush is None:  # --warm: back-to-back calls, L2 warm (a throughput figure)
            begin = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            begin.record()
            for _ in range(reps):
                fn()
            end.record()
            end.synchronize()
            return begin.elapsed_time(end) / reps
        # As gemmreg's end-to-end samples are taken: L2 flushed before each call,
        # outside its pair of events; the median call.
        pairs = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(reps)
        ]
        torch.cuda._sleep(LEAD_SPIN_CYCLES)  # private torch API: the host gets ahead
        for begin, end in pairs:
            self._flush_l2()
            begin.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return _median([begin.elapsed_time(end) for begin, end in pairs])

    def _flush_l2(self) -> None:
        """Evict A, B and C: read the buffer (its sum into ``sink``), or zero it (``--l2 dirty``)."""
        if self.args.l2 == "dirty":
            self.flush.zero_()
        else:
            self.torch.sum(self.flush, dim=0, out=self.sink)

    def time(self, launch: Any) -> tuple[float, float]:
        """Median ms per call of the candidate and of torch.mm, interleaved."""
        reps, trials = (
            (1, 1) if not self.gpu and self.args.quick else (self.args.reps, self.args.trials)
        )
        ours: list[float] = []
        theirs: list[float] = []
        mine = lambda: launch(self.a, self.b, self.c)  # noqa: E731
        ref = lambda: self.torch.mm(self.a, self.b, out=self.c)  # noqa: E731
        self._time(mine, 3 if self.gpu else 1)  # warm
        for trial in range(trials):
            pair = [(mine, ours), (ref, theirs)]
            for fn, into in pair if trial % 2 == 0 else pair[::-1]:
                into.append(self._time(fn, reps))
        return _median(ours), _median(theirs)


def _median(values: list[float]) -> float:
    s = sorted(values)
    return s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2


_BENCHES: dict[tuple[int, int, int, str], Bench] = {}


def bench_for(m: int, n: int, k: int, dtype: str, args: argparse.Namespace) -> Bench:
    """One set of inputs per (shape, dtype), kept across phases (making them is not free)."""
    key = (m, n, k, dtype)
    if key not in _BENCHES:
        _BENCHES[key] = Bench(m, n, k, dtype, args)
    return _BENCHES[key]
