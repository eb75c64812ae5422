"""The kinds of work gemmreg hands a worker process, and the names it records them by.

One vocabulary, used by the worker's dispatcher, by every place that builds a
task, and by the results and their renderers. The strings are the ones saved
runs and checks already hold (a case's ``"kind"`` in ``check.json`` is
``values``, ``refusal`` or ``sanitize``), so every file saved before still reads.
"""

from __future__ import annotations

from typing import Final, Literal

TaskKind = Literal["values", "refusal", "cold", "rounds", "profile"]
"""What a worker is asked to do: check one case's values, check that the kernel
refuses a problem it does not declare, time a cold start, time rounds of every
kernel of a comparison, or take the kernels' device profiles."""
CaseKind = Literal["values", "refusal", "sanitize"]
"""What a check case verified: its values, a refusal, or its values under a
sanitizer (a ``values`` task, run under the tool)."""

VALUES: Final = "values"
REFUSAL: Final = "refusal"
SANITIZE: Final = "sanitize"
COLD: Final = "cold"
ROUNDS: Final = "rounds"
PROFILE: Final = "profile"

TASK_KINDS: Final[tuple[TaskKind, ...]] = (VALUES, REFUSAL, COLD, ROUNDS, PROFILE)
CASE_KINDS: Final[tuple[CaseKind, ...]] = (VALUES, REFUSAL, SANITIZE)
