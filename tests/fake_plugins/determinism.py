"""A check kind gemmreg does not ship, and a kernel only it catches.

``Determinism`` calls the kernel twice on the same inputs and compares the two
outputs bit for bit. It is not registered here: a test registers it in its
own process, and the worker processes find it by the reference its tasks
carry (:class:`gemmreg.workers.tasks.CaseTask`). ``fake_drifts`` is right to
within any tolerance, but its every other call moves one element by one ulp:
the values check passes it, the determinism check does not."""

from __future__ import annotations

from typing import ClassVar

import gemmreg
import torch
from gemmreg.checking import check_kinds
from gemmreg.checking.check_kinds import CaseResult
from gemmreg.contract.records import KernelSpec
from gemmreg.workers.task_results import CaseAnswer, TaskResult
from gemmreg.workers.tasks import CaseTask, CheckTask

from fake_plugins import fp32_spec

CALLS = 2


class Determinism(check_kinds.CheckKind):
    name: ClassVar[str] = "determinism"

    def run(self, spec: KernelSpec, task: CheckTask) -> TaskResult:
        from gemmreg.checking.guarded_output import GuardedOutput
        from gemmreg.checking.output_check import make_operands
        from gemmreg.contract import backend

        assert isinstance(task, CaseTask)
        device = backend.current().device
        launch = spec.prepare(task.problem)
        a, b = make_operands(spec, task.problem, task.seed, device, task.values)
        outputs = []
        for _ in range(CALLS):
            out = GuardedOutput.allocate(task.problem, device).out
            launch(a, b, out)
            backend.synchronize()
            bits = out.clone().view(torch.uint8)  # each element's bytes, in a row
            outputs.append(bits.reshape(-1, out.element_size()))
        first, second = outputs
        differ = int((first != second).any(dim=1).sum())
        total = len(first)
        reason = f"{differ} of {total} elements differ between two calls" if differ else ""
        return CaseAnswer(passed=not differ, reason=reason, comparison={"total": total})

    def detail(self, result: CaseResult) -> str:
        if result.status == "pass":
            total = (result.comparison or {}).get("total", "?")
            return f"{CALLS} calls on the same inputs, {total} elements bit-identical"
        return super().detail(result)


_calls = 0


def drifting(a, b, out):
    global _calls
    torch.mm(a, b, out=out)
    _calls += 1
    if _calls % 2:
        out[0, 0] = torch.nextafter(out[0, 0], out[0, 0] + 1)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_drifts", drifting))
