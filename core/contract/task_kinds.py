"""The kinds of work gemmreg hands a worker process, and the names it records them by.

One vocabulary, used by the worker's dispatcher, by every place that builds a
task, and by the results and their renderers. The strings are the ones saved
runs and checks already hold (a case's ``"kind"`` in ``check.json`` is
``values``, ``refusal`` or ``sanitize``), so every file saved before still reads.
A check kind is a registered unit (:mod:`gemmreg.checking.check_kinds`): its
name is its module's, and those named here are the built-in kinds' names.
"""

from __future__ import annotations

from typing import Final, Literal

TaskKind = Literal["values", "refusal", "case", "cold", "rounds", "profile"]
"""What a worker is asked to do: check one case's values, check that the kernel
refuses a problem it does not declare, run one case of any other registered
check kind, time a cold start, time rounds of every kernel of a comparison, or
take the kernels' device profiles."""
CaseKind = str
"""What a check case verified: the name of its check kind
(:mod:`gemmreg.checking.check_kinds`): ``values``, ``refusal``, ``sanitize``
(its values under a sanitizer: a ``values`` task, run under the tool), or one
registered besides them."""

VALUES: Final = "values"
REFUSAL: Final = "refusal"
SANITIZE: Final = "sanitize"
CASE: Final = "case"
COLD: Final = "cold"
ROUNDS: Final = "rounds"
PROFILE: Final = "profile"

TASK_KINDS: Final[tuple[TaskKind, ...]] = (VALUES, REFUSAL, CASE, COLD, ROUNDS, PROFILE)
BUILT_IN_CASE_KINDS: Final[tuple[CaseKind, ...]] = (VALUES, REFUSAL, SANITIZE)
"""The check kinds gemmreg ships, whose names every saved check holds."""
