"""What the timing and check commands return, to the command line that
prints them and to the Python API's caller (:mod:`gemmreg.api`): the core's
own records, wrapped with the run they belong to and the questions a
caller asks of them. Nothing here is judged anew: a verdict is the
comparison's :class:`~gemmreg.timing.timing_records.Verdict` (its word,
speedup, interval, confidence, explanation and the processes it rests on),
a kernel's figures and reasons its
:class:`~gemmreg.timing.timing_records.KernelSummary`, a case's result the
check's :class:`~gemmreg.checking.check_runner.CaseResult`, and a table the
one the command line prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from gemmreg.checking.check_runner import BAD_STATUSES, CaseResult
from gemmreg.discovery.registry_records import PluginIssue
from gemmreg.timing.timing_records import CompareReport, KernelSummary, Verdict

UNFAILED = ("timed", "skipped", "interrupted")
"""A kernel's statuses that are not a failure of the kernel."""


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value)


def failed(reports: Sequence[CompareReport]) -> bool:
    """A kernel that failed, crashed or hung, or a verdict that is INVALID."""
    return any(s.status not in UNFAILED for r in reports for s in r.summaries) or any(
        v.verdict == "invalid" for r in reports for v in r.verdicts
    )


@attrs.frozen(kw_only=True)
class Run:
    """A timing run: a report per point, the manifest (the environment it
    ran in), whether it is partial (interrupted, or its storage failed),
    and the folder it is saved in. :func:`gemmreg.load_run` reads one back."""

    reports: tuple[CompareReport, ...] = attrs.field(converter=_tuple)
    manifest: dict[str, Any] = attrs.field(factory=dict)
    partial: bool = False
    out: Path | None = None
    """The run's folder; None where it was not saved."""

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        """Every point's verdicts, point by point, each pair in the order named."""
        return tuple(v for report in self.reports for v in report.verdicts)

    @property
    def failed(self) -> bool:
        """A kernel failed, crashed or hung, or a verdict is INVALID (exit 1)."""
        return failed(self.reports)

    def failing(self, *conditions: str) -> tuple[Verdict, ...]:
        """The verdicts that fail a CI gate, as ``--fail-on`` names it:
        ``slower``, ``not-faster`` or ``invalid`` (several: any of them);
        ``run.failing("slower")`` is empty where no pair is SLOWER."""
        from gemmreg.commands import gates

        chosen = gates.parse(",".join(conditions)) if conditions else ()
        return tuple(verdict for _, verdict in gates.failing(self.reports, chosen))

    def table(self, format: str = "table") -> str:
        """The run as ``gemmreg report`` prints it, in one of its formats
        (``table``, ``markdown``, ``csv``, ``json``)."""
        from gemmreg.reporting import render_compare

        return render_compare.run_output(self.manifest, self.reports, self.partial, format)


def _one(found: Sequence[Any], what: str, known: Sequence[str]) -> Any:
    if not found:
        raise KeyError(f"no {what} (known: {', '.join(known) or 'none'})")
    return found[0]


@attrs.frozen(kw_only=True)
class CompareResult(Run):
    """``compare``'s run: one shape, a point per dtype (the Python API's
    compare: one), a verdict per pair of kernels at each. :attr:`report`,
    :attr:`summaries`, :meth:`kernel` and :meth:`verdict` answer for the
    first point; :attr:`reports` and :attr:`verdicts` hold every one."""

    @property
    def report(self) -> CompareReport:
        return self.reports[0]

    @property
    def summaries(self) -> tuple[KernelSummary, ...]:
        """Each kernel's figures (its center, range over processes, TFLOP/s)
        or, where it has none, its status and the reason."""
        return self.report.summaries

    def kernel(self, name: str) -> KernelSummary:
        """The summary of the kernel ``name``; KeyError if it was not compared."""
        known = [s.kernel for s in self.summaries]
        return _one([s for s in self.summaries if s.kernel == name], f"kernel {name!r}", known)

    def verdict(self, kernel: str, baseline: str | None = None) -> Verdict:
        """The verdict on ``kernel`` against ``baseline`` (by default the first
        kernel it was judged against: the first named); KeyError if none."""
        found = [
            v
            for v in self.verdicts
            if v.kernel == kernel and (baseline is None or v.baseline == baseline)
        ]
        pairs = [f"{v.kernel} vs {v.baseline}" for v in self.verdicts]
        return _one(found, f"verdict on {kernel!r} vs {baseline or 'any'}", pairs)

    @property
    def nothing_timed(self) -> str:
        """Why no kernel has figures, one reason per kernel (failures first),
        at each point where none has (named where there are several); ''
        where every point timed some kernel, or the run was interrupted."""
        if self.partial:
            return ""
        found = [(r, _why_untimed(r)) for r in self.reports]
        if len(found) == 1:
            return found[0][1]
        return "; ".join(f"at {r.problem.label}: {why}" for r, why in found if why)

    def table(self, format: str = "table") -> str:
        """The comparison as ``gemmreg compare`` prints it: one point's table
        and verdicts; at several dtypes, the run as ``gemmreg report`` prints it
        (each point's table, then every verdict, a line each)."""
        from gemmreg.reporting import render_compare

        if len(self.reports) > 1:
            return super().table(format)
        return render_compare.compare_table(self.report, format, self.manifest)


def _why_untimed(report: CompareReport) -> str:
    """Why no kernel of ``report`` has figures ('' where one has)."""
    if any(s.status == "timed" for s in report.summaries):
        return ""
    summaries = sorted(report.summaries, key=lambda s: s.status == "skipped")
    return "; ".join(
        f"{s.kernel}: {s.status}: {s.reason.strip().splitlines()[0]}" for s in summaries
    )


@attrs.frozen(kw_only=True)
class BenchResult(Run):
    """``bench``'s run: a report per point of the sweep, saved after each."""

    not_saved: str = ""
    """Why the storage refused a save, which ended the sweep ('' when it
    did not): the reports are every finished point's, the folder keeps the
    run as last saved."""

    def point(
        self, shape: str, dtype: str | None = None, layout: str | None = None
    ) -> CompareReport:
        """The report of the point ``shape`` (``MxNxK``), of ``dtype`` and
        ``layout`` where several points share the shape; KeyError if none."""
        found = [
            r
            for r in self.reports
            if r.problem.shape == shape
            and dtype in (None, r.problem.dtype)
            and layout in (None, r.problem.layout)
        ]
        labels = [r.problem.label for r in self.reports]
        return _one(found, f"point {shape} {dtype or ''} {layout or ''}".strip(), labels)

    def table(self, format: str = "table") -> str:
        """The sweep at a glance, as ``gemmreg bench`` prints it: a line per
        point and kernel (``json``: the run as saved)."""
        from gemmreg.reporting import formats, render_sweep

        if formats.get(format).writes == "records":
            return super().table(format)
        return render_sweep.sweep_table(self.reports, format)


@attrs.frozen(kw_only=True)
class CheckResult:
    """``check``'s cases: one result per kernel, case and kind, as they finished."""

    cases: tuple[CaseResult, ...] = attrs.field(converter=_tuple)
    partial: bool = False
    """Interrupted: the cases are those that finished."""
    out: Path | None = None
    kernels: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    """The kernels checked, in their order."""
    unavailable: dict[str, str] = attrs.field(factory=dict)
    """Kernel -> why it cannot run here (its cases are skipped with that reason)."""
    issues: tuple[PluginIssue, ...] = attrs.field(default=(), converter=_tuple)
    """Plugins that did not load (a plugin blocked on purpose included)."""
    manifest: dict[str, Any] = attrs.field(factory=dict)
    """The environment it ran in; taken only where the check is saved."""
    sanitized: bool = False
    """A sanitizer pass followed the matrix."""

    @property
    def failures(self) -> tuple[CaseResult, ...]:
        """The cases that failed, errored, crashed their worker or hung."""
        return tuple(r for r in self.cases if r.status in BAD_STATUSES)

    @property
    def counts(self) -> dict[str, int]:
        """Cases by status (``pass``, ``fail``, ``skip``, ...)."""
        counted: dict[str, int] = {}
        for result in self.cases:
            counted[result.status] = counted.get(result.status, 0) + 1
        return counted

    @property
    def nothing_ran(self) -> str:
        """Why no case ran ('' where one did): no plugin, or every case skipped."""
        from gemmreg.checking import check_kinds

        def counts(result: CaseResult) -> bool:  # a refusal alone exercised nothing
            return check_kinds.get(result.kind).counts_as_run

        if any(r.status != "skip" and counts(r) for r in self.cases):
            return ""
        if not self.kernels:
            return "no plugin loaded (see gemmreg list)"
        reasons = dict.fromkeys(f"{r.kernel}: {r.reason}" for r in self.cases if counts(r))
        shown = "; ".join(list(reasons)[:3]) + ("; ..." if len(reasons) > 3 else "")
        return f"every case was skipped ({shown})"

    @property
    def passed(self) -> bool:
        """Every case that ran passed, some case ran, and none was cut short."""
        return not (self.partial or self.failures or self.nothing_ran)

    def table(self, format: str = "table", every_case: bool = False) -> str:
        """The check as ``gemmreg check`` prints it (``every_case``: ``-v``)."""
        from gemmreg.reporting import render

        return render.check_output(self.cases, format, self.partial, every_case=every_case)
