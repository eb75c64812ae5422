"""The real trial on a GPU: what ``tuner.tune`` calls to build, check and time
a candidate (the tests drive ``tune`` with fakes instead).

A candidate's C is checked on a spread of rows against a float64 reference
made once per problem; timing is gemmreg's own clock (:func:`gemmreg.sample_ms`:
L2 flushed clean before each sample, every sample of a batch queued before
the GPU runs it), one short measurement per round of the tuner's
interleaved rounds. Not ``triton.testing.do_bench``: its events are
recorded as the host launches each call, so at a decode GEMM of 10-40 us
its figure holds the host's launch path (tens of us for a Triton launch),
and the tuner ranked launch paths there, not kernels; gemmreg's verdicts
leave the launch path out, and the tuner now ranks what they time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import gemmreg
from gemmreg_plugins.triton_tuned.configs import Config

if TYPE_CHECKING:
    import torch
    from gemmreg_plugins.triton_tuned.launchers import Launcher
    from gemmreg_plugins.triton_tuned.tuner import Run

VERIFY_ROWS = 256
"""Rows of C checked after each candidate's first call (spread over M, the
last included): enough to catch a miscompiled tile, cheap at any M."""
VERIFY_RTOL = 1e-2
"""Of |A|@|B|: above every dtype's honest rounding (TF32 ~2e-3, bf16 C ~4e-3),
far below what a wrong tile gives."""
BENCH_REP_MS = 20
"""One round's measurement of one candidate, in milliseconds of its calls
(the tuner runs one per candidate per round): short, so that a round of
twenty candidates passes before the clocks move far. The candidate's first
call, its compile and check, has warmed it up already."""
PROBE_SAMPLES = 3
"""Samples that size a measurement: how many calls fit ``BENCH_REP_MS``."""
MIN_SAMPLES = 5
MAX_SAMPLES = 200
"""A measurement's samples, at least and at most (a 10 us call's 20 ms
would be 2000 samples, each behind an 80 us flush)."""


@attrs.frozen(kw_only=True)
class DeviceTrial:
    """Operands of one problem's shape, dtype and layout on the GPU, and the
    three functions :func:`tune` needs."""

    a: Any
    b: Any
    out: Any
    make_launch: Callable[[Config], Launcher]
    reference: dict[str, Any] = attrs.field(factory=dict)
    """Rows checked, and their float64 reference and bound, made on first use."""

    def build(self, config: Config) -> Run:
        launch = self.make_launch(config)
        a, b, out = self.a, self.b, self.out
        out.fill_(float("nan"))  # a tile left unwritten shows as NaN in verify

        def run() -> None:
            launch(a, b, out)

        return run

    def verify(self) -> str | None:
        import torch

        if self.out.is_cuda:
            torch.cuda.synchronize()  # a launch's asynchronous error surfaces here, in its try
        if not bool(torch.isfinite(self.out).all()):
            return "non-finite values in C (an unwritten tile?)"
        if "ref" not in self.reference:  # the same for every candidate: computed once
            m = self.a.shape[0]
            spread = torch.linspace(0, m - 1, min(m, VERIFY_ROWS), device=self.a.device)
            last = torch.tensor([m - 1], device=self.a.device)
            rows = torch.unique(torch.cat([spread.long(), last]))
            a_rows, b = self.a[rows].double(), self.b.double()
            self.reference["rows"] = rows
            self.reference["ref"] = a_rows @ b
            self.reference["bound"] = VERIFY_RTOL * (a_rows.abs() @ b.abs()) + 1e-6
        got = self.out[self.reference["rows"]].double()
        bad = int(((got - self.reference["ref"]).abs() > self.reference["bound"]).sum())
        if bad:
            return f"{bad} of {got.numel()} checked elements off by > {VERIFY_RTOL:g} of |A|@|B|"
        return None

    def binary(self, config: Config) -> str | None:
        """A digest of the binary ``config`` compiled to (call it after the
        candidate's first call: this one finds it compiled), or None where
        Triton's launch does not hand back a kernel with its machine code.
        Under Triton 3.6 ``ws`` compiles to nothing on Hopper: two configs,
        one binary (``evidence/2026-12-02-h200-tuner-order-bias/same-binary.txt``)."""
        import hashlib

        kernel = self.make_launch(config)(self.a, self.b, self.out)
        asm = getattr(kernel, "asm", None)
        code = (
            next((asm[kind] for kind in ("cubin", "hsaco") if kind in asm), None) if asm else None
        )
        if isinstance(code, str):
            code = code.encode()
        if not isinstance(code, bytes) or not code:
            return None
        return hashlib.sha256(code).hexdigest()

    def benchmark(self, run: Run) -> float:
        return measure_ms(run)

    def clock_note(self) -> str:
        return gemmreg.clock_note()


def measure_ms(run: Run) -> float:
    """Median milliseconds of ``run`` on gemmreg's clock, over as many samples
    as fit ``BENCH_REP_MS`` (within ``MIN_SAMPLES`` .. ``MAX_SAMPLES``)."""
    import statistics

    probe = statistics.median(gemmreg.sample_ms(run, PROBE_SAMPLES))
    count = int(BENCH_REP_MS / max(probe, 1e-3))
    return float(
        statistics.median(gemmreg.sample_ms(run, max(MIN_SAMPLES, min(MAX_SAMPLES, count))))
    )


def device_trial(
    m: int,
    n: int,
    k: int,
    dtype: torch.dtype,
    layout: str,
    make_launch: Callable[[Config], Launcher],
    device: str = "cuda",
) -> DeviceTrial:
    """Random normal operands (never zeros: those run faster than real data on
    power-limited GPUs), laid out as the core will lay them out."""
    import torch

    generator = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(m, k, device=device, generator=generator).to(dtype)
    b = torch.randn(k, n, device=device, generator=generator).to(dtype)
    a, b = gemmreg.apply_layout(a, b, layout)
    out = torch.empty(m, n, device=device, dtype=dtype)
    return DeviceTrial(a=a, b=b, out=out, make_launch=make_launch)
