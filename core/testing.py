"""The correctness matrix as a pytest plugin, for plugin authors.

Installed with gemmreg (a ``pytest11`` entry point), so it is active wherever
gemmreg is. One line of test code gives a plugin its whole matrix::

    # tests/test_my_gemm.py
    from gemmreg.testing import matrix

    test_my_gemm = matrix("my_gemm")

Each case is one test, with ids like ``my_gemm-fp16-transposedB-17x19x23``.
Cases outside the plugin's declared capabilities are skipped with the reason;
one extra test checks that the plugin refuses a problem it does not declare.
A plugin that failed to load is one failing test, ``my_gemm-not-loaded``,
with the reason it did not load (an import error, a refused declaration).

Before packaging, pass the spec itself: ``matrix(SPEC)``, where ``SPEC`` is a
module-level ``gemmreg.KernelSpec`` (:mod:`gemmreg.discovery.spec_reference` says how
the worker processes find it).

Options: ``--gemmreg-level=quick|full`` (default quick) picks the matrix.
``--gemmreg-sanitize[=TOOLS]`` adds the sanitizer pass of ``gemmreg check
--sanitize``: one more test per case of the small sanitize subset and tool,
with ids like ``my_gemm-fp16-rowmajor-65x67x69-racecheck``, skipped with the
reason where the tool cannot run (the CPU, ROCm, no compute-sanitizer).
The kernels run in gemmreg's worker processes, all cases of one plugin in one
batch on first use, so a crash or hang fails its own case, never the session.

Speed as a test: ``assert verdict("my_gemm", "vendor_gemm", shape="4096x4096x4096",
dtype="bf16").not_slower`` times the pair as ``gemmreg compare`` does and
returns the typed verdict; skipped, with the reason, where no verdict can be
taken (no GPU here, a kernel that cannot run the problem, unlike execution).

A Triton plugin's tests can also check what only native code has (a
pipelined loop, an atomic's memory order) on a machine without a GPU:
:func:`native_compile` runs a script in a fresh Python with Triton's
interpreter off, where :func:`compile_natively` compiles a jit function for
a ``GPUTarget`` as a launch would specialise it and :func:`ptxas_report`
says what ptxas made of its PTX (a serialised ``wgmma``, spills).
:func:`run_fresh` runs any script in a fresh Python and returns the JSON its
last line prints (a kernel the interpreter crashes on then takes down that
process, not the test session).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from gemmreg.commands import testing_kernels
from gemmreg.commands.native_compiling import compile_natively, native_compile, run_fresh
from gemmreg.commands.ptxas_reports import PtxasReport, ptxas_report
from gemmreg.commands.testing_params import MatrixParam
from gemmreg.commands.testing_verdicts import verdict
from gemmreg.contract.task_kinds import SANITIZE

if TYPE_CHECKING:
    from gemmreg.checking.check_runner import CaseResult
    from gemmreg.contract.records import KernelSpec

__all__ = [
    "PtxasReport",
    "compile_natively",
    "matrix",
    "native_compile",
    "ptxas_report",
    "run_fresh",
    "verdict",
]

MARKER = "gemmreg_matrix"
CASE_FIXTURE = "gemmreg_case"


def matrix(
    *kernels: str | KernelSpec,
    dtypes: Sequence[str] | None = None,
    layouts: Sequence[str] | None = None,
) -> Callable[[MatrixParam, Runner], None]:
    """A test function that runs the correctness matrix over the given kernels.

    :param kernels: Installed gemmreg kernels by name (as in ``gemmreg list``),
        or ``gemmreg.KernelSpec`` objects held at module level, not yet packaged.
    :param dtypes: Restrict to these dtypes (default: all).
    :param layouts: Restrict to these layouts (default: all).
    :returns: A pytest test function; assign it to a ``test_*`` name.
    """
    from gemmreg.discovery.spec_reference import reference_to

    if not kernels:
        raise ValueError("matrix() needs at least one plugin name")
    caller = sys._getframe(1).f_globals
    specs = [reference_to(k, caller) for k in kernels if not isinstance(k, str)]
    names = tuple(k if isinstance(k, str) else k.name for k in kernels)

    @pytest.mark.gemmreg_matrix(names=names, dtypes=dtypes, layouts=layouts, specs=specs)
    def test_gemmreg_matrix(gemmreg_case: MatrixParam, gemmreg_runner: Runner) -> None:
        gemmreg_runner.check(gemmreg_case)

    return test_gemmreg_matrix


# ---------------------------------------------------------------------------
# pytest hooks
# ---------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    from gemmreg.checking import sanitizer_tools

    group = parser.getgroup("gemmreg")
    group.addoption(
        "--gemmreg-level",
        choices=("quick", "full"),
        default="quick",
        help="which gemmreg correctness matrix to run (default: quick)",
    )
    group.addoption(
        "--gemmreg-sanitize",
        nargs="?",
        const="all",
        default=None,
        metavar="TOOLS",
        help=f"also run the sanitizer pass of {sanitizer_tools.in_words(sanitizer_tools.TOOLS)} "
        f"({sanitizer_tools.default_tools_in_words()}), as gemmreg check --sanitize does",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(names, dtypes, layouts): generated gemmreg matrix test"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None or CASE_FIXTURE not in metafunc.fixturenames:
        return
    from gemmreg.checking import matrix as matrix_module
    from gemmreg.checking import sanitizer_tools
    from gemmreg.commands import testing_params
    from gemmreg.contract import backend
    from gemmreg.contract.records import DTYPES, LAYOUTS

    config = metafunc.config
    kernels = testing_kernels.MatrixKernels(config, marker.kwargs.get("specs", ()))
    names = marker.kwargs["names"]
    dtypes = marker.kwargs.get("dtypes") or DTYPES
    layouts = marker.kwargs.get("layouts") or LAYOUTS
    gpu = backend.current().is_gpu
    cases = matrix_module.build(config.getoption("gemmreg_level"), gpu, dtypes, layouts)
    params = testing_params.case_params(kernels.get, names, cases, gpu)
    tools = config.getoption("gemmreg_sanitize")
    if tools is not None:
        try:
            chosen = sanitizer_tools.parse_tools(tools)
        except sanitizer_tools.UnknownToolError as error:
            raise pytest.UsageError(f"--gemmreg-sanitize: {error}") from None
        subset = matrix_module.sanitize_cases(dtypes, layouts)
        params += testing_params.sanitize_params(kernels.get, names, subset, chosen, gpu)
    metafunc.parametrize(CASE_FIXTURE, params, ids=[p.id for p in params])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Remember which cases were selected, so each plugin's batch runs only those."""
    selected: dict[str, list[MatrixParam]] = {}
    for item in items:
        callspec = getattr(item, "callspec", None)
        param = callspec.params.get(CASE_FIXTURE) if callspec is not None else None
        if isinstance(param, MatrixParam) and not (param.skip_reason or param.load_error):
            selected.setdefault(_batch(param), []).append(param)
    config.stash[_SELECTED] = selected


def _batch(param: MatrixParam) -> str:
    """Cases run in one batch per kernel, and per kernel and tool when sanitized."""
    return f"{param.kernel}/{param.tool}" if param.kind == SANITIZE else param.kernel


_SELECTED = pytest.StashKey[dict]()


class Runner:
    """Runs each plugin's selected cases in worker processes, once, on first use."""

    def __init__(self, config: pytest.Config, log_dir: Path):
        self.config = config
        self.log_dir = log_dir
        self.results: dict[tuple[str, str], CaseResult] = {}
        self.ran: set[str] = set()

    def _run_sanitized(self, batch: str, kernel: str, tool: str) -> None:
        from gemmreg.checking import sanitizer_pass
        from gemmreg.contract import backend

        params = self.config.stash.get(_SELECTED, {}).get(batch, [])

        def record(result: CaseResult) -> None:
            self.results[(kernel, result.id)] = result

        sanitizer_pass.run_pass(
            [testing_kernels.kernel(self.config, kernel)],
            [p.case for p in params],
            [tool],
            backend.current().kind,
            self.log_dir,
            on_result=record,
        )
        self.ran.add(batch)

    def _run(self, kernel: str) -> None:
        from gemmreg.checking import check_runner
        from gemmreg.contract import backend
        from gemmreg.workers import isolation

        params = self.config.stash.get(_SELECTED, {}).get(kernel, [])
        planned = [(p.kind, p.case) for p in params]

        def settle(index: int, outcome: isolation.TaskOutcome) -> None:
            param = params[index]
            cause = check_runner.cause_of(kernel, planned, outcome)
            result = check_runner.result_from_outcome(
                kernel, param.kind, param.case, outcome, cause
            )
            self.results[(kernel, param.id)] = result

        tasks = [check_runner.task_for(kernel, p.kind, p.case) for p in params]
        isolation.run_tasks(
            tasks,
            task_timeout=check_runner.task_limits(planned, backend.current().is_gpu, None),
            on_outcome=settle,
            skip_after_timeout=True,
            skip_after_lost_workers=check_runner.LOST_WORKERS_IN_A_ROW,
        )
        self.ran.add(kernel)

    def check(self, param: MatrixParam) -> None:
        from gemmreg.discovery.spec_reference import environment

        if param.load_error:
            pytest.fail(param.load_error, pytrace=False)
        if param.skip_reason:
            pytest.skip(param.skip_reason)
        batch = _batch(param)
        if batch not in self.ran:
            with environment(testing_kernels.specs(self.config).worker_environment(param.kernel)):
                if param.kind == SANITIZE:
                    self._run_sanitized(batch, param.kernel, param.tool)
                else:
                    self._run(param.kernel)
        result = self.results.get((param.kernel, param.id))
        if result is None:
            pytest.fail(f"{param.id} was not run (was it deselected after collection?)")
        if result.status == "skip":
            pytest.skip(result.reason)
        if result.status != "pass":
            from gemmreg.reporting.render import case_detail

            detail = result.reason if result.kind == SANITIZE else case_detail(result)
            if result.sanitizer is not None and result.sanitizer.raw_log:
                detail += f" (raw log: {result.sanitizer.raw_log})"
            pytest.fail(f"{result.status.upper()}: {detail}", pytrace=False)


@pytest.fixture(scope="session")
def gemmreg_runner(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Runner:
    return Runner(request.config, tmp_path_factory.mktemp("gemmreg-sanitizer"))
