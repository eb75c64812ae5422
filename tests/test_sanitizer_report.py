"""The compute-sanitizer report parser, on outputs recorded on the H200
(tests/fixtures/sanitizer/, compute-sanitizer 2025.3.1) and on synthetic lines
for the kinds the probe did not trigger (marked as such)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gemmreg.checking.sanitizer_report import parse

FIXTURES = Path(__file__).parent / "fixtures" / "sanitizer"


def recorded(name: str, tool: str):
    return parse((FIXTURES / name).read_text(), tool)


def by_kind(report):
    return {(f.kind, f.severity, f.kernel): f for f in report.findings}


def test_memcheck_out_of_bounds_reads_and_the_api_errors_they_cause():
    report = recorded("memcheck.txt", "memcheck")
    found = by_kind(report)
    reads = found[("Invalid __global__ read", "error", "oob_read")]
    assert (reads.count, reads.records) == (15, 15)
    assert reads.first_line == "Invalid __global__ read of size 4 bytes"
    sync = found[("cudaErrorLaunchFailure on cudaDeviceSynchronize", "error", "")]
    last = found[("cudaErrorLaunchFailure on cudaGetLastError", "error", "")]
    assert sync.count == last.count == 1
    assert found[("target application returned an error", "note", "")].fails is False
    assert report.summary_errors == 17 == 15 + 2  # every error was printed and recognised
    assert report.complete and report.failed
    assert report.unparsed == ()
    # The probe printed to the same stream: its lines are the application's, not the tool's.
    assert report.application_lines > 0


def test_racecheck_one_error_and_one_warning_with_their_hazards_summed():
    report = recorded("racecheck.txt", "racecheck")
    found = by_kind(report)
    error = found[("shared-memory race (write/read)", "error", "no_second_barrier")]
    warning = found[("shared-memory race (write/read)", "warning", "no_second_barrier")]
    assert error.count == 46848  # 16 "[N hazards]" lines of the Error block
    assert warning.count == 10240 * 3 + 7680
    assert error.records == warning.records == 1
    assert report.summary_errors == 2
    assert report.summary_line == "RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)"
    assert report.failed
    assert "no_second_barrier" in report.describe()


@pytest.mark.parametrize(
    ("name", "tool"),
    [
        ("synccheck.txt", "synccheck"),
        ("initcheck.txt", "initcheck"),
        ("triton-memcheck.txt", "memcheck"),
        ("triton-racecheck.txt", "racecheck"),
    ],
)
def test_clean_logs_have_no_findings(name, tool):
    report = recorded(name, tool)
    assert report.findings == ()
    assert report.summary_errors == 0 and report.complete and not report.failed
    assert report.describe() == f"{tool}: clean"


@pytest.mark.parametrize("name", ["plain.txt", "help.txt", "version.txt"])
def test_text_that_is_no_report_parses_to_an_incomplete_report(name):
    report = recorded(name, "memcheck")
    assert not report.complete and not report.failed and report.findings == ()


def test_unknown_and_broken_lines_are_kept_never_fatal():
    text = "\n".join(
        [
            "========= COMPUTE-SANITIZER",
            "========= Something new the tool prints",
            "=========     with a detail line",
            "========= ",
            "=========     an indented line with no record before it",
            "\x00\xff binary noise",
            "========= Frobnication hazard of size 8 bytes",
            "=========     at my_kernel+0x10",
            "========= ",
            "========= Invalid __global__ read of size 4 bytes",  # cut off: no body
        ]
    )
    report = parse(text, "memcheck")
    assert "Something new the tool prints" in report.unparsed
    found = by_kind(report)
    assert found[("Frobnication hazard", "error", "my_kernel")].count == 1
    assert found[("Invalid __global__ read", "error", "")].count == 1
    assert not report.complete  # no summary: the process did not finish
    assert report.application_lines == 1


def test_the_summary_count_decides_when_printing_stopped_early():
    # Synthetic: past --print-limit the summary still counts every error.
    text = "\n".join(
        [
            "========= Invalid __shared__ write of size 4 bytes",
            "=========     at tiled+0x1a0",
            "========= ",
            "========= ERROR SUMMARY: 300 errors",
        ]
    )
    report = parse(text, "memcheck")
    assert report.summary_errors == 300 and report.failed
    assert by_kind(report)[("Invalid __shared__ write", "error", "tiled")].count == 1


def test_a_summary_alone_fails_even_with_nothing_recognised():
    report = parse("========= ERROR SUMMARY: 1 error\n", "memcheck")
    assert report.findings == () and report.failed


def test_synthetic_synccheck_initcheck_and_leak_lines():
    # Synthetic lines in the documented forms: the H200 probe triggered none of them.
    text = "\n".join(
        [
            "========= Barrier error detected. Divergent thread(s) in block",
            "=========     at early_exit+0x2f0",
            "=========     by thread (0,5,0) in block (3,0,0)",
            "========= ",
            "========= Barrier error detected. Divergent thread(s) in warp",
            "=========     at 0x00000130 in divergence.cu:61:threadDivergence(int*)",
            "========= ",
            "========= Uninitialized __global__ memory read of size 4 bytes",
            "=========     at void gemm<float>(float const*, float*)+0x90",
            "========= ",
            "========= Leaked 1024 bytes at 0x7f0000000000",
            "========= ",
            "========= ERROR SUMMARY: 4 errors",
        ]
    )
    found = by_kind(parse(text, "synccheck"))
    assert ("barrier error: divergent thread(s) in block", "error", "early_exit") in found
    assert (
        "barrier error: divergent thread(s) in warp",
        "error",
        "threadDivergence(int*)",
    ) in found
    uninit = (
        "Uninitialized __global__ memory read",
        "error",
        "void gemm<float>(float const*, float*)",
    )
    assert uninit in found
    assert ("leaked allocation", "error", "") in found


def test_racecheck_info_level_is_a_note():
    text = "\n".join(
        [
            "========= Info: Race reported between Read access at k+0x10",
            "=========     and Write access at k+0x20 [4 hazards]",
            "========= ",
            "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)",
        ]
    )
    report = parse(text, "racecheck")
    assert not report.failed
    assert by_kind(report)[("shared-memory race (read/write)", "note", "k")].count == 4
