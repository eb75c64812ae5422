"""``--devices``: work spread over the GPUs of one host, on pretend GPUs.

GEMMREG_FAKE_DEVICES (:mod:`gemmreg.workers.devices`) names GPUs that do not
exist; each worker is still pinned to one by its environment, and the
plugins of tests/fake_plugins/pinned.py log, from inside the worker, the GPU
they were pinned to. So the sharding, the pinning, the merging and the
rendering run for real here, on the CPU."""

from __future__ import annotations

import csv
import json
import os

import attrs
import pytest
from conftest import only_extra_plugins, run_gemmreg
from gemmreg.checking import check_runner, check_shards
from gemmreg.checking.matrix import Case
from gemmreg.contract.options import UsageError
from gemmreg.contract.records import Problem
from gemmreg.discovery.registry import discover
from gemmreg.workers import devices
from gemmreg.workers.device_choice import parse_devices

H200, A100 = "NVIDIA H200", "NVIDIA A100-SXM4-80GB"
PIN_LOG_ENV = "GEMMREG_TEST_PIN_LOG"


def test_devices_parses_all_and_indices_and_refuses_the_rest():
    assert parse_devices("all") == "all"
    assert parse_devices(" 1,0 ") == (1, 0)
    for bad, words in [("", "takes 'all'"), ("0,,1", "takes 'all'"), ("-1", "takes 'all'")]:
        with pytest.raises(UsageError, match=words):
            parse_devices(bad)
    with pytest.raises(UsageError, match="twice"):
        parse_devices("0,0")


def test_fake_devices_resolve_and_group_by_model(monkeypatch):
    monkeypatch.setenv(devices.FAKE_DEVICES_ENV, f"{H200},{A100},{H200}")
    found = devices.available_devices(gpu=False)
    assert [(d.index, d.name) for d in found] == [(0, H200), (1, A100), (2, H200)]
    assert devices.resolve((2, 0), found) == [found[2], found[0]]
    assert devices.groups(found) == {H200: [found[0], found[2]], A100: [found[1]]}
    with pytest.raises(UsageError, match="no device 3 here"):
        devices.resolve((3,), found)


def test_a_pinned_worker_sees_one_gpu_inside_the_users_own_choice():
    device = devices.Device(1, H200)
    plain = devices.pin_device_env({"PATH": "/bin"}, device)
    assert plain["CUDA_VISIBLE_DEVICES"] == plain["HIP_VISIBLE_DEVICES"] == "1"
    assert plain[devices.PINNED_ENV] == "1" and plain["PATH"] == "/bin"
    # The user restricted gemmreg to GPUs 4 and 6: torch's device 1 is GPU 6.
    inside = devices.pin_device_env({"CUDA_VISIBLE_DEVICES": "4,6"}, device)
    assert inside["CUDA_VISIBLE_DEVICES"] == inside["HIP_VISIBLE_DEVICES"] == "6"


def _pin_log(path):
    """(kernel, shape) -> the set of (pinned index, CUDA_VISIBLE_DEVICES) seen."""
    seen: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for line in path.read_text().splitlines():
        kernel, shape, pinned, visible = line.split()
        seen.setdefault((kernel, shape), set()).add((pinned, visible))
    return seen


def _without_device(result):
    return attrs.evolve(result, device_index=None, device_name="")


@pytest.mark.slow
def test_a_sharded_check_pins_each_plugin_and_gives_the_same_results(tmp_path, monkeypatch):
    log = tmp_path / "pins.log"
    monkeypatch.setenv(PIN_LOG_ENV, str(log))
    monkeypatch.setenv(devices.FAKE_DEVICES_ENV, f"{H200},{H200}")
    cases = [Case(problem=Problem(m=5, n=7, k=3)), Case(problem=Problem(m=9, n=4, k=6))]
    with only_extra_plugins(["fake_plugins.pinned", "fake_plugins.good"]):
        kernels = discover().select(["fake_pinned_a", "fake_pinned_b", "fake_good"])
        arrived = []
        sharded = check_shards.check_on_devices(
            kernels, cases, False, devices.available_devices(False), on_result=arrived.append
        )
        monkeypatch.delenv(PIN_LOG_ENV)
        alone = check_runner.run_check(kernels, cases, gpu=False)
    # The same answers, merged in the order of the kernels, whatever GPU ran them.
    assert [_without_device(r) for r in sharded] == alone
    assert sorted(map(id, arrived)) == sorted(map(id, sharded))
    ran = [r for r in sharded if r.status != "skip"]
    assert all(r.device_name == H200 for r in ran)
    assert {r.status for r in ran if r.kind == "values"} == {"pass"}
    assert {r.device_index for r in ran} == {0, 1}  # both GPUs worked
    # Inside each worker, the GPU its results name: pinned, and only that one.
    seen = _pin_log(log)
    for r in ran:
        if r.kind == "values" and r.kernel.startswith("fake_pinned"):
            shape = f"{r.problem.m}x{r.problem.n}x{r.problem.k}"
            index = str(r.device_index)
            assert seen[(r.kernel, shape)] == {(index, index)}


@pytest.mark.slow
def test_a_sweep_over_two_models_times_every_point_on_each(tmp_path, fake_plugins):
    fake_plugins("pinned")
    log, out = tmp_path / "pins.log", tmp_path / "run"
    env = {
        devices.FAKE_DEVICES_ENV: f"{H200},{A100},{H200}",
        PIN_LOG_ENV: str(log),
        "GEMMREG_PLUGINS": "none",
    }
    shapes = tmp_path / "shapes.csv"
    shapes.write_text("m,n,k,weight\n6,6,6,3\n10,10,10,1\n")
    args = ["--shapes", str(shapes), "--repeats", "3", "--warmup", "1", "--processes", "2"]
    done = run_gemmreg(
        "bench",
        "fake_pinned_a",
        "fake_pinned_b",
        *args,
        "--devices",
        "all",
        "--format",
        "markdown",
        "--out",
        str(out),
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads((out / "run.json").read_text())
    assert data["partial"] is False
    assert data["manifest"]["devices"] == [
        {"index": 0, "name": H200},
        {"index": 1, "name": A100},
        {"index": 2, "name": H200},
    ]
    placed = [(r["device_name"], r["device_index"], r["problem"]["m"]) for r in data["reports"]]
    # Every point on each model (the H200 sweep first, as the models appear),
    # each H200 point on one of the two H200s, the A100's on its only one.
    assert [(name, m) for name, _, m in placed] == [(H200, 6), (H200, 10), (A100, 6), (A100, 10)]
    # The shapes file's weights reach each point's report, on every model,
    # and the progress meter counts each point once per model.
    assert [r["weight"] for r in data["reports"]] == [3, 1, 3, 1]
    assert "progress: 4/4 points" in done.stderr
    assert all(index in ((0, 2) if name == H200 else (1,)) for name, index, _ in placed)
    # The workers of a point were pinned to the GPU its report names.
    seen = _pin_log(log)
    for _, index, m in placed:
        assert (str(index), str(index)) in seen[("fake_pinned_a", f"{m}x{m}x{m}")]
    # A verdict pairs two kernels of one point, so of one model; one section per model.
    for report in data["reports"]:
        assert {v["kernel"] for v in report["verdicts"]} == {"fake_pinned_b"}
    assert done.stdout.index(f"### On {H200} (2 points)") < done.stdout.index(
        f"### On {A100} (2 points)"
    )
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert {(row["device_name"], row["m"]) for row in rows} == {
        (model, m) for model in (H200, A100) for m in ("6", "10")
    }
    report = run_gemmreg("report", str(out))
    assert report.returncode == 0, report.stderr
    assert f"on {A100} (gpu1)" in report.stdout


def test_devices_out_of_range_is_refused_before_any_work(tmp_path):
    done = run_gemmreg(
        "check", "torch_ref", "--devices", "0,5", env={devices.FAKE_DEVICES_ENV: H200}
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "gemmreg: error: --devices: no device 5 here (devices: 0)"
    ]


@pytest.mark.slow
def test_compare_spreads_its_processes_over_gpus_of_one_model(tmp_path, fake_plugins):
    fake_plugins("pinned")
    log = tmp_path / "pins.log"
    env = {devices.FAKE_DEVICES_ENV: f"{H200},{H200}", PIN_LOG_ENV: str(log)}
    args = ["--shape", "7x5x3", "--repeats", "3", "--warmup", "1", "--processes", "3"]
    pair = ["fake_pinned_a", "fake_pinned_b"]
    done = run_gemmreg("compare", *pair, *args, "--devices", "0,1", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "verdict: fake_pinned_b vs fake_pinned_a:" in done.stdout
    # Processes 0 and 2 on GPU 0, process 1 on GPU 1 (cold starts on GPU 0).
    assert _pin_log(log)[("fake_pinned_a", "7x5x3")] == {("0", "0"), ("1", "1")}
    mixed = run_gemmreg(
        "compare", *pair, "--devices", "all", env={devices.FAKE_DEVICES_ENV: f"{H200},{A100}"}
    )
    assert mixed.returncode == 2
    assert "GPUs of one model only" in mixed.stderr


@pytest.mark.slow
def test_the_sanitizer_pass_is_sharded_and_pinned_as_the_check_is(tmp_path, monkeypatch):
    """``check --sanitize --devices``: each kernel's sanitized workers (under
    the stand-in compute-sanitizer, tests/fake_sanitizer/) pinned to one GPU,
    the GPU its results name, and the same answers as the unpinned pass."""
    from gemmreg.checking import sanitizer_pass
    from test_sanitizer import FAKE

    log = tmp_path / "pins.log"
    calls = tmp_path / "calls.txt"
    monkeypatch.setenv(PIN_LOG_ENV, str(log))
    monkeypatch.setenv("GEMMREG_FAKE_SANITIZER_CALLS", str(calls))
    monkeypatch.setenv("PATH", f"{FAKE.parent}{os.pathsep}{os.environ['PATH']}")  # found there
    monkeypatch.setenv(devices.FAKE_DEVICES_ENV, f"{H200},{A100}")
    cases = [Case(problem=Problem(m=5, n=7, k=3)), Case(problem=Problem(m=9, n=4, k=6))]
    with only_extra_plugins(["fake_plugins.pinned"]):
        kernels = discover().select(["fake_pinned_a", "fake_pinned_b"])
        arrived = []
        sharded = sanitizer_pass.run_pass(
            kernels,
            cases,
            ("racecheck",),
            "cuda",
            tmp_path / "logs",
            on_result=arrived.append,
            executable=FAKE,
            chosen=devices.available_devices(False),
        )
        monkeypatch.delenv(PIN_LOG_ENV)
        alone = sanitizer_pass.run_pass(
            kernels, cases, ("racecheck",), "cuda", tmp_path / "logs", executable=FAKE
        )
    assert [_without_device(r) for r in sharded] == alone  # in the order of the kernels
    assert sorted(map(id, arrived)) == sorted(map(id, sharded))
    assert [r.kernel for r in sharded] == ["fake_pinned_a"] * 2 + ["fake_pinned_b"] * 2
    assert {(r.kind, r.tool, r.status) for r in sharded} == {("sanitize", "racecheck", "pass")}
    assert {(r.device_index, r.device_name) for r in sharded} <= {(0, H200), (1, A100)}
    # One sanitized process per kernel (four with the unpinned pass), each
    # pinned inside to the GPU its results name, and only that one.
    assert len(calls.read_text().splitlines()) == 4
    seen = _pin_log(log)
    for r in sharded:
        index = str(r.device_index)
        assert seen[(r.kernel, f"{r.problem.m}x{r.problem.n}x{r.problem.k}")] == {(index, index)}


def test_sanitize_on_ray_is_refused_in_one_line_before_any_work(monkeypatch, capsys):
    from gemmreg.fanout import ray_cluster
    from offline_cli import forbid_work, run_main

    forbid_work(monkeypatch)
    outcome = run_main(["check", "torch_ref", "--sanitize", "racecheck", "--ray", "local"], capsys)
    outcome.assert_refused()
    assert outcome.err.strip().splitlines() == [f"gemmreg: error: {ray_cluster.NO_SANITIZER}"]
