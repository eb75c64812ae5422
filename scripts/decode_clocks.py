"""The clocks of the decode probe (``probe_decode_kernels.py``), one call at a time.

For a call (a no-argument function that launches it): ``clocks`` takes the
judge clock (gemmreg's own, ``device_trial.measure_ms``), ``do_bench`` and
``do_bench_cudagraph`` medians and the host's wall time per launch;
``profiled`` the device's own time per call from one ``torch.profiler``
profile of every call after a zeroing flush and after a reading one (dirty
and clean L2), cut into calls at each flush by ``call_times``. Apart from
the probe so that what is measured reads apart from which configs, at which
points; ``call_times`` needs no GPU and is tested on the CPU.
"""

from __future__ import annotations

import functools
import itertools
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from gemmreg_plugins.triton_tuned import device_trial


def call_times(
    events: Sequence[tuple[str, float, float]], flush: set[str]
) -> list[tuple[float, int]]:
    """Per call, its device time (us) and kernel count, from device events
    (name, start us, duration us) in which every call follows a flush (a run
    of events named in ``flush``); what precedes the first flush is no call."""
    calls: list[tuple[float, int]] = []
    flushing = False
    for name, _, duration in sorted(events, key=lambda e: e[1]):
        if name in flush and not flushing:
            calls.append((0.0, 0))
        elif name not in flush and calls:
            calls[-1] = (calls[-1][0] + duration, calls[-1][1] + 1)
        flushing = name in flush
    return calls


def clocks(run: Callable[[], None]) -> dict[str, Any]:
    import torch
    import triton.testing

    found: dict[str, Any] = {"bench_us": 1e3 * triton.testing.do_bench(run, 5, 20, return_mode="median")}  # fmt: skip
    found["judge_us"] = 1e3 * device_trial.measure_ms(run)  # gemmreg's clock, as the tuner ranks
    try:
        found["graph_us"] = 1e3 * triton.testing.do_bench_cudagraph(
            run, rep=10, return_mode="median"
        )
    except Exception as error:
        found["error"] = f"graph: {type(error).__name__}: {error}"
    torch.cuda.synchronize()
    spent = []
    for _ in range(30):
        began = time.perf_counter()
        run()
        spent.append(time.perf_counter() - began)
    torch.cuda.synchronize()
    found["host_us"] = 1e6 * statistics.median(spent)
    return found


def device_events(work: Callable[[], Any]) -> list[tuple[str, float, float]]:
    """(name, start us, duration us) of every device event ``work`` makes."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        work()
        torch.cuda.synchronize()
    return [
        (e.name, e.time_range.start, e.time_range.elapsed_us()) for e in prof.events()
        if e.device_type == DeviceType.CUDA and not getattr(e, "is_user_annotation", False)
    ]  # fmt: skip


@functools.cache
def flushes() -> tuple[list[Callable[[], Any]], frozenset[str]]:
    """A zeroing and a reading flush of 4x the L2 (gemmreg's), and the names
    of the device events they make, from a profile of them alone."""
    import torch

    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or 2**26
    buffer = torch.zeros(l2 // 2, dtype=torch.int64, device="cuda")
    sink = torch.zeros((), dtype=torch.int64, device="cuda")
    both: list[Callable[[], Any]] = [buffer.zero_, lambda: torch.sum(buffer, dim=0, out=sink)]
    names = {name for name, _, _ in device_events(lambda: [f() for f in both * 3])}
    return both, frozenset(names)


def profiled(runs: list[Callable[[], None]], calls: int) -> list[dict[str, Any]]:
    """Device time per call of each run, in one profile: ``calls`` calls after
    a zeroing flush, as many after a reading one."""
    both, names = flushes()

    def work() -> None:
        for run, flush, _ in itertools.product(runs, both, range(calls)):
            flush()
            run()

    per_call = call_times(device_events(work), set(names))
    if len(per_call) != len(runs) * 2 * calls:
        return [{"error": f"profile unreadable: {len(per_call)} calls, not {len(runs) * 2 * calls}"}] * len(runs)  # fmt: skip
    found = []
    for i in range(len(runs)):
        dirty, clean = (per_call[(2 * i + j) * calls : (2 * i + j + 1) * calls] for j in (0, 1))
        found.append({
            "device_us": statistics.median(t for t, _ in dirty),
            "clean_us": statistics.median(t for t, _ in clean),
            "kernels": statistics.median(c for _, c in dirty),
        })  # fmt: skip
    return found
