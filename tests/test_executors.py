"""One executor interface (:mod:`gemmreg.fanout.executors`) behind ``bench``,
``compare`` and ``check``: the built-in one is chosen once from ``--ray`` and
``--devices``, and an executor of one's own, handed to a command, gets all of
its work (a point, a comparison, a shard) and its results are the command's.

The throwaway executor here runs each unit in turn in fresh workers of its
own, through the same pieces the built-in ones use, and names itself in
every result, so the command's answer shows whose work it is."""

from __future__ import annotations

import attrs
import pytest
from conftest import REPO
from gemmreg.checking import check_runner
from gemmreg.commands import bench_command, check_command, compare_command, launching
from gemmreg.commands.launching import Launch
from gemmreg.commands.requests import BenchRequest, CheckRequest, CompareRequest, TimingAsked
from gemmreg.contract import backend
from gemmreg.fanout import executors, sweeping
from gemmreg.fanout.executors import Checked, CheckJob, Compared, CompareJob, SweepJob
from gemmreg.instruments import environment
from gemmreg.reporting import run_folder, runs
from gemmreg.timing.points import points
from gemmreg.workers.devices import Device
from offline_cli import forbid_work

NAME = "one-at-a-time"
RECORDED = (
    REPO / "evidence" / "2026-11-30-h200-verdict-calibration" / "run-a" / "g0" / "knownbench-1"
)


@attrs.define
class OneAtATime:
    """Every unit in turn, each in fresh workers (no pool kept); what it ran
    listed in ``ran``."""

    ran: list[str] = attrs.field(factory=list)

    @property
    def gpus(self) -> tuple[Device, ...]:
        return ()

    def sweep(self, job: SweepJob) -> sweeping.Sweep:
        manifest = environment.manifest(job.kernels, seed=job.timing.seed, **job.fields)
        reports = []
        for index, problem in enumerate(job.problems, 1):
            self.ran.append(f"point {problem.shape}")
            report = sweeping.time_point(job.kernels, problem, job.timing, job.info, job.progress)
            reports.append(attrs.evolve(report, device_name=NAME))
            sweeping.save(job.out, manifest, reports, index < len(job.problems))
        return sweeping.Sweep(reports=tuple(reports), partial=False, manifest=manifest)

    def compare(self, job: CompareJob) -> Compared:
        self.ran.append(f"compare {job.problem.shape}")
        manifest, reports, _ = runs.load_run(RECORDED)
        return reports[0], manifest

    def check(self, job: CheckJob) -> Checked:
        results = []

        def record(result: check_runner.CaseResult) -> None:
            result = attrs.evolve(result, device_name=NAME)
            results.append(result)
            if job.on_result is not None:
                job.on_result(result)

        for kernel in job.kernels:
            self.ran.append(f"shard {kernel.name}")
            check_runner.check_kernel(kernel, job.cases, job.gpu, record, job.task_timeout)
        return Checked(results, {"executor": NAME})


def test_the_built_in_executor_is_chosen_from_ray_and_devices():
    gpus = [Device(0, "NVIDIA H200"), Device(1, "NVIDIA H200")]
    assert executors.built_in(None, None) == executors.Local()
    assert executors.built_in(None, gpus) == executors.Devices(tuple(gpus))
    assert executors.built_in(None, gpus).gpus == tuple(gpus)
    assert executors.built_in("local", None) == executors.Ray("local")
    assert executors.Local().gpus == executors.Ray("local").gpus == ()


def test_an_executor_of_ones_own_is_used_in_place_of_the_built_in_and_starts_nothing_ahead():
    mine = OneAtATime()
    launch = Launch(executor=mine, devices="0,1")
    assert launching.executor_for(launch, backend.current()) is mine
    assert launching.start_ahead(["torch_ref"], TimingAsked(), True, launch) is None
    assert launching.start_ahead(["torch_ref"], TimingAsked(), True, Launch(ray="local")) is None


def test_a_compare_goes_to_the_executor_and_its_answer_is_the_commands(monkeypatch):
    """No worker may start: the comparison is the executor's alone."""
    forbid_work(monkeypatch)
    mine = OneAtATime()
    request = CompareRequest(kernels=("torch_ref", "triton_baseline"), shape=(8, 16, 8))
    with run_folder.released():
        result = compare_command.compare(request, launch=Launch(executor=mine))
    _, recorded, _ = runs.load_run(RECORDED)
    assert mine.ran == ["compare 8x16x8"]
    assert result.reports == (recorded[0],)


@pytest.mark.slow
def test_a_bench_point_and_a_check_shard_run_on_an_executor_of_ones_own(tmp_path):
    """On the CPU, Triton interpreted: the executor's point is the run saved,
    its shard's cases the check's."""
    mine = OneAtATime()
    launch = Launch(executor=mine)
    timing = TimingAsked(processes=2, repeats=3, warmup=1)
    chosen = points([(8, 8, 8)], [], ["fp32"], ["rowmajor"])
    bench = BenchRequest(
        kernels=("torch_ref", "triton_baseline"),
        points=tuple(chosen),
        timing=timing,
        out=tmp_path / "run",
    )
    check = CheckRequest(plugins=("triton_baseline",), dtypes=("fp32",), layouts=("rowmajor",))
    with run_folder.released():
        timed = bench_command.bench(bench, launch=launch)
        checked = check_command.check(check, launch=launch)
    assert mine.ran == ["point 8x8x8", "shard triton_baseline"]
    # The point: timed by the executor, saved as a run that loads back.
    assert not timed.partial and [r.device_name for r in timed.reports] == [NAME]
    assert {s.status for s in timed.reports[0].summaries} == {"timed"}
    _, saved, partial = runs.load_run(tmp_path / "run")
    assert not partial and [r.device_name for r in saved] == [NAME]
    # The shard: every case the executor ran is the check's, passing.
    ran = [c for c in checked.cases if c.status != "skip"]
    assert ran and {c.device_name for c in ran} == {NAME}
    assert {c.status for c in ran} == {"pass"} and checked.passed
    assert checked.manifest == {"executor": NAME}
