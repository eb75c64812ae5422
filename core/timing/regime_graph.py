"""The graph-replay regime: warm, launch-free CUDA-graph replays of each
kernel's call, in rotating rounds after the primary ones, judged across
processes as they are. It takes launch cost out of the figure; beside the
end-to-end median it labels a kernel launch-bound.

A replay's calls are not poisoned one by one (that would be work inside its
interval), so once the rounds are over each captured graph's replay is
checked apart (``TimedKernel.verify_replay``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, TypeVar

from gemmreg.timing import regimes, rounds
from gemmreg.timing.clocks import Call, Graph
from gemmreg.timing.round_loops import RoundKernel, enter, per_call_ms
from gemmreg.timing.rounds import Round
from gemmreg.timing.timing_options import Policy

if TYPE_CHECKING:
    from gemmreg.contract.records import Problem
    from gemmreg.timing.timed_kernel import TimedKernel
    from gemmreg.timing.timing_records import KernelSummary

REGIME = "graph replay"
GRAPH_MAX_CALL_MS = 2.0
"""Graph replays are taken only when every kernel's call is shorter than this.
The regime exists to take launch cost (a few us) out of the figure; past 2 ms
that cost is under 0.5% of a call, inside the default margin, while replaying
a 370 ms kernel ten rounds long cost a sweep point 30 s on the H200."""
LAUNCH_BOUND_RATIO = 0.5
"""A kernel whose launch-free (graph) time is under this fraction of its
per-launch time is labelled launch-bound: launch overhead dominates the figure..."""
LAUNCH_BOUND_MAX_MS = 0.05
"""...provided the per-launch time is this short. Graph replays run with a warm
L2; for a longer kernel the gap to its graph time is L2 warmth, not launch
overhead (a few microseconds), and the label would mislead."""
ROUNDS = 10
"""Rounds of replays a timing process takes (each kernel one slot of the
policy's ``slot_s`` a round), whatever rounds the primary regime takes:
``--repeats`` and the stopping rule are the primary's (``Policy.stop``)."""
ORDER_SEED_SHIFT = 7
"""Added to the process's order seed: the replays' rotation is not the rounds'."""

K = TypeVar("K", bound=RoundKernel)


def graph_rounds(
    kernels: Sequence[K],
    policy: Policy,
    seed: int,
    check: Callable[[K, Call], None] | None = None,
    count: int = ROUNDS,
) -> list[Round]:
    """``count`` rounds of warm CUDA-graph replays, rotating; none when a call
    is long (``GRAPH_MAX_CALL_MS``). After them ``check(kernel, replay)`` is
    handed each captured graph's replay."""
    if any(per_call_ms(k) > GRAPH_MAX_CALL_MS for k in kernels):
        return []
    graphs: dict[str, Graph] = {}
    for kernel in kernels:
        enter(kernel)  # a capture records the library call its switches chose
        try:
            graphs[kernel.name] = Graph(kernel.call, Graph.calls_for(per_call_ms(kernel)))
        except Exception as error:  # some launchers cannot be captured; say so
            kernel.result.regime_errors[REGIME] = f"{type(error).__name__}: {error}"
    names = list(graphs)
    by_name = {k.name: k for k in kernels}
    taken = []
    for index in range(count if len(names) else 0):
        order = rounds.round_orders(names, index + 1, seed + ORDER_SEED_SHIFT)[index]
        slot_ms, wall, samples = {}, {}, {}
        for name in order:
            enter(by_name[name])
            graph = graphs[name]
            replay_ms = max(graph.per_call_ms(1) * graph.calls, 1e-3)
            replays = max(1, round(policy.slot_s * 1e3 / replay_ms))
            t0 = time.perf_counter()
            slot_ms[name] = graph.per_call_ms(replays)
            wall[name], samples[name] = time.perf_counter() - t0, replays * graph.calls
        taken.append(Round(order=tuple(order), slot_ms=slot_ms, slot_wall_s=wall, samples=samples))
    for name in names:
        if check is not None:
            enter(by_name[name])
            check(by_name[name], graphs[name].graph.replay)
    return taken


@regimes.register
class GraphReplay(regimes.TimingRegime):
    name: ClassVar[str] = REGIME
    rank: ClassVar[int] = 10
    column: ClassVar[str] = "graph_ms"
    header: ClassVar[str] = "graph ms"
    measuring: ClassVar[str] = "graph replays"
    saved_as: ClassVar[str] = "graph_ms"

    def measure(
        self, kernels: Sequence[TimedKernel], policy: Policy, seed: int, problem: Problem
    ) -> list[Round]:
        return graph_rounds(
            kernels, policy, seed, lambda k, replay: k.verify_replay(replay, problem, seed)
        )

    def summary_fields(self, center_ms: float, figure: float | None) -> Mapping[str, object]:
        """``launch_bound``: a short call whose replays take well under its time."""
        return {
            "launch_bound": figure is not None
            and center_ms < LAUNCH_BOUND_MAX_MS
            and figure < LAUNCH_BOUND_RATIO * center_ms
        }

    def notes(self, summary: KernelSummary) -> list[str]:
        return ["launch-bound"] if summary.launch_bound else []

    def legend(self) -> list[str]:
        return [
            "graph ms: per call under warm CUDA-graph replay",
            f"(not taken when a call lasts over {GRAPH_MAX_CALL_MS:g} ms: launch cost is noise there);",
            f"launch-bound: a median under {LAUNCH_BOUND_MAX_MS:g} ms whose graph ms is under "
            f"{LAUNCH_BOUND_RATIO:.0%} of it;",
        ]
