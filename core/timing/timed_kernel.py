"""One kernel as a timing process holds it: its placements of A, B and C,
how each round gives them new values and each sample poisons C, and the
checks of what its calls left there (the precheck, the postcheck of every
placement, the graph replay's). :mod:`gemmreg.timing.timing` runs the
protocol over these; the profiling process (:mod:`gemmreg.timing.profiling`)
prepares its kernels the same way."""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs
from gemmreg.checking.guarded_inputs import InputStorages
from gemmreg.checking.guarded_output import GuardedOutput
from gemmreg.checking.output_check import make_operands, verify
from gemmreg.contract import backend
from gemmreg.contract.launch_variant import launch_variant
from gemmreg.contract.records import KernelSpec, Launch, Problem
from gemmreg.discovery import judge_state, state_changes, torch_state
from gemmreg.timing import fresh_values
from gemmreg.timing.fresh_values import Operands
from gemmreg.workers.task_results import Comparison, KernelTiming

AS_LEFT = "as its last timed call left it (new A and B each round, C poisoned before each call)"
"""What the postcheck of the rounds compared, said beside a failure: a kernel
that skips its work leaves the poison, one that copies a kept result is stale."""
GRAPH_CHECK_ROUND = -1
"""The round index the graph replay's postcheck draws its new values for:
none of the rounds' (they count from 0), so a draw of its own."""


@attrs.define
class TimedKernel:
    name: str
    spec: KernelSpec
    result: KernelTiming = attrs.Factory(KernelTiming)
    operands: Operands | None = None
    before: Operands | None = None
    inputs: InputStorages | None = None
    """The prechecked operands, watched whole (their storages copied)."""
    watched: list[InputStorages] = attrs.Factory(list)
    """Where each placement's operands were made, in ``sets``' order."""
    guarded: GuardedOutput | None = None
    launch: Launch | None = None
    sets: list[tuple[Operands, GuardedOutput]] = attrs.Factory(list)
    """Every placement of the operands and C (gemmreg.timing.placements); the
    current one is ``operands`` and ``guarded``."""
    moved: list[fresh_values.Shifts] = attrs.Factory(list)
    """How far each placement's values have been rotated since the precheck
    (gemmreg.timing.fresh_values): its check compares against ``before``
    (the prechecked copies) rotated as far."""
    current: int = 0
    """The placement in use."""
    used: set[int] = attrs.Factory(lambda: {0})
    """The placements the rounds have handed to the kernel (the first is the
    prechecked one): the postcheck reads each of their Cs, and no other."""
    tf32: bool = False
    """Its calls run with TF32 allowed (:func:`torch_state.allows_tf32`)."""

    def pin(self) -> torch_state.TorchState:
        """Pin torch's switches as this kernel runs: before any of its calls."""
        return torch_state.pin(tf32=self.tf32)

    def call(self) -> None:
        assert self.operands is not None and self.guarded is not None
        assert self.launch is not None  # set by prepare, before any call
        a, b, *scales = self.operands
        self.launch(a, b, self.guarded.out, *scales)

    def place(self, extra: list[tuple[Operands, GuardedOutput]]) -> None:
        """Add further placements of the prechecked operands (the same values,
        :func:`gemmreg.timing.placements.more_placements`), each watched with
        the prechecked copies where its bytes are theirs, padding included
        (:meth:`InputStorages.watch`)."""
        assert self.operands is not None and self.guarded is not None
        assert self.inputs is not None  # taken with the first placement, at the precheck
        self.sets = [(self.operands, self.guarded), *extra]
        self.watched = [
            self.inputs,
            *(InputStorages.watch(ops, like=self.inputs) for ops, _ in extra),
        ]
        self.moved = [fresh_values.Shifts()] * len(self.sets)  # one draw: the same values
        self.result.placements = len(self.sets)

    def use_placement(self, index: int) -> None:
        """Rounds rotate the placements: round ``index`` uses this one."""
        if self.sets:
            self.operands, self.guarded = self.sets[index % len(self.sets)]
            self.current = index % len(self.sets)
            self.used.add(self.current)

    def fresh_values(self, seed: int, index: int) -> None:
        """New values in the current placement's A and B, before round ``index``
        of a process drawn with ``seed`` (gemmreg.timing.fresh_values says why)."""
        assert self.operands is not None and self.moved
        (m, k), n = self.operands[0].shape[-2:], self.operands[1].shape[-1]
        shifts = fresh_values.round_shifts(m, n, k, seed, index)
        fresh_values.move(self.operands, shifts)
        self.moved[self.current] = fresh_values.combined(self.moved[self.current], shifts, m, n, k)

    def poison(self) -> None:
        """C back to the sentinel before a timed sample (GuardedOutput.poison)."""
        assert self.guarded is not None
        self.guarded.poison()

    def verify_replay(self, replay: Callable[[], None], problem: Problem, seed: int) -> None:
        """The graph-replay regime's postcheck: new values in the captured
        placement, C poisoned, one replay; a graph that skips the GEMM (or copies
        a kept result) fails the kernel, as the postcheck of the rounds would."""
        self.fresh_values(seed, GRAPH_CHECK_ROUND)
        self.poison()
        replay()
        backend.synchronize()
        check = self.verify(problem)
        if not check.passed and self.result.status == "ok":
            self.result.status = "failed"
            self.result.reason = f"postcheck of a graph replay: {check.reason}"

    def verify(self, problem: Problem) -> Comparison:
        assert self.before and self.operands and self.guarded and self.inputs
        before = self.before
        if self.moved:  # the values the current placement holds now
            before = fresh_values.rotated(before, self.moved[self.current])
        inputs = self.watched[self.current] if self.watched else self.inputs
        return verify(self.spec, problem, before, inputs, self.guarded)

    def verify_every_placement(self, problem: Problem) -> Comparison | None:
        """The postcheck of every placement's C; the first that fails, else the last."""
        check = None
        for index in sorted(self.used):
            self.use_placement(index)
            check = self.verify(problem)
            if not check.passed:
                where = f"placement {index + 1} of {len(self.sets)}, {AS_LEFT}"
                check = attrs.evolve(check, reason=f"{where}: {check.reason}")
                break
        self.use_placement(0)
        return check


def prepare(kernel: TimedKernel, problem: Problem, seed: int, device: str) -> bool:
    """Operands, prepare, first call, precheck; False when the kernel drops out.
    Raises state_changes.StateChanged when its prepare or first call changed
    torch's global state (the caller blames it and restores the state)."""
    judge_state.baseline()  # read now if not yet (the worker reads it before plugins load)
    kernel.tf32 = torch_state.allows_tf32(kernel.spec, problem)
    expected = kernel.pin()
    operands = make_operands(kernel.spec, problem, seed, device)
    kernel.inputs = InputStorages.take(operands)
    kernel.operands, kernel.before = operands, kernel.inputs.before
    kernel.guarded = GuardedOutput.allocate(problem, device)
    start = time.perf_counter()
    kernel.launch = kernel.spec.prepare(problem)
    kernel.result.prepare_s = time.perf_counter() - start
    kernel.result.variant = launch_variant(kernel.launch)
    state_changes.raise_on_changes(expected)
    start = time.perf_counter()
    kernel.call()
    backend.synchronize()
    kernel.result.first_call_s = time.perf_counter() - start
    state_changes.raise_on_changes(expected)
    # The precheck reads what the first call wrote into the poisoned, guarded
    # C: the same operands are then timed, with no second draw of inputs.
    kernel.result.precheck = check = kernel.verify(problem)
    if not check.passed:
        kernel.result.status = "failed"
        kernel.result.reason = f"precheck: {check.reason}"
        return False
    return True
