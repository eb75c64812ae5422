"""Read compute-sanitizer's text report into records.

The grammar, as recorded from compute-sanitizer 2025.3.1 on an H200 (the
fixtures in ``tests/fixtures/sanitizer/``; ``README.md`` there spells it out):

- Every line the tool writes starts with its prefix, ``=========`` by default.
  Lines without it are the application's own output (they only appear when no
  ``--log-file`` is given): kept, counted, never parsed.
- A *record* starts at a prefixed line with no indentation (its headline) and
  continues over indented prefixed lines (``=========     at KERNEL+0x420``);
  an empty prefixed line ends it.
- Headlines: ``Invalid __global__ read of size 4 bytes`` (memcheck),
  ``Error: Race reported between Write access at K+0x530`` followed by
  ``and Read access at K+0x550 [2560 hazards]`` lines (racecheck; ``Warning:``
  for the milder class), ``Barrier error detected. ...`` (synccheck),
  ``Uninitialized __global__ memory read of size 4 bytes`` (initcheck),
  ``Program hit cudaErrorLaunchFailure (error 719) due to "..." on CUDA API call
  to cudaDeviceSynchronize.`` (a failed CUDA API call, any tool),
  ``Leaked N bytes at 0x...`` (memcheck with ``--leak-check full``).
- ``Target application returned an error``: the process exited non-zero (a
  note: the worker's own outcome says why).
- Summaries: ``ERROR SUMMARY: 17 errors`` (memcheck, synccheck, initcheck) and
  ``RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)``; ``LEAK
  SUMMARY: ...``. The summary counts every error, also those past
  ``--print-limit`` that were not printed.

Anything else is kept verbatim in ``unparsed`` and never raises: a headline of
an unknown kind that names a kernel still becomes a finding (severity error),
and the summary's count decides the verdict whatever was recognised.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

import attrs

PREFIX = "========="
Severity = Literal["error", "warning", "note"]

_SIZE = re.compile(r"\s+of size \d+ bytes?$")
_MEMORY_ACCESS = re.compile(
    r"^(Invalid|Uninitialized) (__\w+__ )?(memory )?(read|write|atomic|access)\b.*$"
)
_RACE = re.compile(
    r"^(Error|Warning|Info): Race reported between (\w+) access at (?P<kernel>.+?)\+0x[0-9a-fA-F]+"
)
_RACE_PARTNER = re.compile(
    r"^and (\w+) access at (?P<kernel>.+?)\+0x[0-9a-fA-F]+(?: \[(?P<hazards>\d+) hazards?\])?"
)
_API_ERROR = re.compile(
    r"^Program hit (?P<error>\w+) \(error (?P<code>\d+)\).*?(?:to (?P<call>\w+))?\.?$"
)
_AT_KERNEL = re.compile(r"^at (?P<kernel>.+?)\+0x[0-9a-fA-F]+(?: in .*)?$")
_AT_OLD_STYLE = re.compile(r"^at 0x[0-9a-fA-F]+ in (?:[^:]*:\d+:)?(?P<kernel>.+)$")
_ERROR_SUMMARY = re.compile(r"^ERROR SUMMARY: (?P<errors>\d+) errors?")
_RACE_SUMMARY = re.compile(
    r"^RACECHECK SUMMARY: (?P<hazards>\d+) hazards? displayed "
    r"\((?P<errors>\d+) errors?, (?P<warnings>\d+) warnings?\)"
)
_LEAK = re.compile(r"^Leaked \d+ bytes? at 0x[0-9a-fA-F]+")


@attrs.frozen(kw_only=True)
class SanitizerFinding:
    """One kind of hazard in one kernel, with how often it was reported."""

    tool: str
    kind: str
    """e.g. ``Invalid __global__ read``, ``shared-memory race (write/read)``,
    ``cudaErrorLaunchFailure on cudaDeviceSynchronize``."""
    severity: Severity
    kernel: str
    """As the tool prints it (not demangled); empty for API errors and leaks."""
    count: int
    """Reports of this kind (memcheck, initcheck, synccheck, API errors), or
    hazards summed over the ``[N hazards]`` lines (racecheck)."""
    records: int
    """How many printed records were merged into this finding."""
    first_line: str

    @property
    def fails(self) -> bool:
        return self.severity != "note"

    def describe(self) -> str:
        where = f" in {self.kernel}" if self.kernel else ""
        unit = "hazard" if self.tool == "racecheck" and "race" in self.kind else "report"
        plural = "s" if self.count != 1 else ""
        return f"{self.severity}: {self.kind}{where}, {self.count} {unit}{plural}"


@attrs.frozen(kw_only=True)
class SanitizerReport:
    tool: str
    findings: tuple[SanitizerFinding, ...] = ()
    summary_errors: int | None = None
    """The ERROR SUMMARY count, or for racecheck the errors + warnings displayed;
    None when the log has no summary (the process was killed, or it is no log)."""
    summary_line: str = ""
    application_lines: int = 0
    unparsed: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return self.summary_errors is not None

    @property
    def failed(self) -> bool:
        """A hazard or an error was reported (recognised or only counted)."""
        return any(f.fails for f in self.findings) or bool(self.summary_errors)

    def describe(self) -> str:
        """One line for a table: what was found, or that nothing was."""
        failing = [f for f in self.findings if f.fails]
        if not failing and not self.summary_errors:
            return f"{self.tool}: clean" if self.complete else f"{self.tool}: no summary in the log"
        shown = "; ".join(f.describe() for f in failing[:3])
        more = f"; +{len(failing) - 3} more" if len(failing) > 3 else ""
        total = self.summary_line or "no summary line"
        return f"{self.tool}: {total}" + (f" ({shown}{more})" if shown else "")


@attrs.define
class _Tally:
    first: str
    count: int = 0
    records: int = 0


@attrs.define
class _Record:
    headline: str
    body: list[str] = attrs.field(factory=list)


def _records(lines: Iterable[str], prefix: str) -> tuple[list[_Record], int]:
    """Split a log into records; returns (records, count of application lines)."""
    records: list[_Record] = []
    current: _Record | None = None
    application = 0
    for raw in lines:
        line = raw.rstrip("\n")
        if not line.startswith(prefix):
            if line.strip():
                application += 1
            continue
        text = line[len(prefix) :]
        if not text.strip():
            current = None
        elif text.startswith(" ") and text[1:2].isspace() and current is not None:
            current.body.append(text.strip())
        else:
            current = _Record(headline=text.strip())
            records.append(current)
    return records, application


def _kernel_of(record: _Record) -> str:
    for line in record.body:
        for pattern in (_AT_KERNEL, _AT_OLD_STYLE):
            match = pattern.match(line)
            if match:
                return match.group("kernel").strip()
    return ""


def parse(text: str, tool: str, prefix: str = PREFIX) -> SanitizerReport:
    """Parse one process's compute-sanitizer log. Never raises on odd input."""
    records, application = _records(text.splitlines(), prefix)
    merged: dict[tuple[str, Severity, str], _Tally] = {}
    unparsed: list[str] = []
    summary_errors: int | None = None
    summary_line = ""

    def add(kind: str, severity: Severity, kernel: str, count: int, line: str) -> None:
        tally = merged.setdefault((kind, severity, kernel), _Tally(first=line))
        tally.count += count
        tally.records += 1

    for record in records:
        head = record.headline
        if head == "COMPUTE-SANITIZER":
            continue
        if match := _ERROR_SUMMARY.match(head):
            summary_errors = (summary_errors or 0) + int(match.group("errors"))
            summary_line = head
            continue
        if match := _RACE_SUMMARY.match(head):
            displayed = int(match.group("errors")) + int(match.group("warnings"))
            summary_errors = (summary_errors or 0) + displayed
            summary_line = head
            continue
        if head.startswith("LEAK SUMMARY"):
            unparsed.append(head)  # the leaks themselves are records of their own
            continue
        if head == "Target application returned an error":
            add("target application returned an error", "note", "", 1, head)
            continue
        if match := _RACE.match(head):
            level = match.group(1).lower()
            severity: Severity = "error" if level == "error" else "warning"
            if level == "info":
                severity = "note"
            partners = [_RACE_PARTNER.match(line) for line in record.body]
            hazards = sum(int(p.group("hazards") or 0) for p in partners if p)
            second = next((p.group(1).lower() for p in partners if p), "?")
            kind = f"shared-memory race ({match.group(2).lower()}/{second})"
            add(kind, severity, match.group("kernel").strip(), hazards or 1, head)
            continue
        if match := _API_ERROR.match(head):
            call = match.group("call")
            kind = match.group("error") + (f" on {call}" if call else "")
            add(kind, "error", "", 1, head)
            continue
        if _LEAK.match(head):
            add("leaked allocation", "error", "", 1, head)
            continue
        if head.startswith("Barrier error detected"):
            detail = head.removeprefix("Barrier error detected").strip(" .")
            kind = "barrier error" + (f": {detail[:1].lower()}{detail[1:]}" if detail else "")
            add(kind, "error", _kernel_of(record), 1, head)
            continue
        if _MEMORY_ACCESS.match(head):
            add(_SIZE.sub("", head), "error", _kernel_of(record), 1, head)
            continue
        kernel = _kernel_of(record)
        if kernel or head.lower().startswith(("error", "internal")):
            # A kind this parser does not know, but a report all the same.
            add(_SIZE.sub("", head), "error", kernel, 1, head)
        else:
            unparsed.append(head)

    findings = tuple(
        SanitizerFinding(
            tool=tool,
            kind=kind,
            severity=severity,
            kernel=kernel,
            count=tally.count,
            records=tally.records,
            first_line=tally.first,
        )
        for (kind, severity, kernel), tally in merged.items()
    )
    return SanitizerReport(
        tool=tool,
        findings=findings,
        summary_errors=summary_errors,
        summary_line=summary_line,
        application_lines=application,
        unparsed=tuple(unparsed),
    )


Attribution = Literal["case", "group", "none"]


@attrs.frozen(kw_only=True)
class SanitizerVerdict:
    """What one tool said about one case, and where its raw log is."""

    tool: str
    report: SanitizerReport | None = None
    """None for gemmreg's own smempoison (its evidence is the values)."""
    raw_log: str = ""
    attribution: Attribution = "none"
    """``case``: the log is this case's alone; ``group``: the log covers the
    plugin's whole subset in one process and reported nothing; ``none``: no log."""
    note: str = ""

    @property
    def failed(self) -> bool:
        return self.report is not None and self.report.failed

    def describe(self) -> str:
        text = self.report.describe() if self.report is not None else f"{self.tool}: {self.note}"
        if self.attribution == "group":
            text += " (shared process)"
        return text + (f" -> raw: {self.raw_log}" if self.raw_log else "")
