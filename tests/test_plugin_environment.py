"""What plugins are told instead of finding out: where their kernels run
(``gemmreg.where()``) and the limits of Triton the core applies for them."""

from __future__ import annotations

from pathlib import Path

import attrs
import gemmreg
import pytest
from gemmreg.contract import backend, known_limits
from gemmreg.discovery import availability
from gemmreg.discovery.registry import discover


def test_where_reports_what_the_core_decided_and_what_this_process_was_given(monkeypatch, tmp_path):
    monkeypatch.setenv("GEMMREG_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("GEMMREG_SANITIZING", "racecheck")
    here = gemmreg.where()
    decided = backend.current()
    assert (here.backend, here.device, here.device_name) == (
        decided.kind,
        decided.device,
        decided.device_name,
    )
    assert here.triton_interpreted == decided.triton_interpreter
    assert (here.cache_dir, here.sanitizer) == (tmp_path, "racecheck")
    if not decided.is_gpu:
        assert here.triton_target == "cpu" and here.capability is None
        assert here.multiprocessors is None and here.arch == ""
    monkeypatch.delenv("GEMMREG_CACHE_DIR")
    monkeypatch.delenv("GEMMREG_SANITIZING")
    assert gemmreg.where().sanitizer is None
    assert gemmreg.where().cache_dir == Path.home() / ".cache" / "gemmreg"
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        here.backend = "cuda"  # type: ignore[misc]


def test_a_gpu_host_running_triton_interpreted_declares_cpu_arithmetic():
    here = gemmreg.where()
    interpreted = attrs.evolve(here, backend="cuda", device="cuda", triton_interpreted=True)
    assert interpreted.is_gpu and interpreted.triton_target == "cpu"
    native = attrs.evolve(interpreted, triton_interpreted=False)
    assert native.triton_target == "cuda"


def triton_caps(**extra) -> gemmreg.Capabilities:
    return gemmreg.Capabilities(
        dtypes={"fp32", "bf16"},
        backends={"cpu", "cuda", "rocm"},
        precision={
            "fp32": gemmreg.Precision(math="ieee_fp32"),
            "bf16": gemmreg.Precision(math="bf16"),
        },
        **extra,
    )


def test_triton_limits_are_applied_by_the_core_to_kernels_that_opt_in(monkeypatch):
    bf16 = gemmreg.Problem(m=4, n=4, k=4, dtype="bf16")
    fp32 = gemmreg.Problem(m=4, n=4, k=4)
    interpreted = backend.current().triton_interpreter
    caps = triton_caps(triton=True)
    assert caps.unsupported(bf16) == (known_limits.TRITON_INTERPRETER_BF16 if interpreted else None)
    assert caps.unsupported(fp32) is None
    assert triton_caps().unsupported(bf16) is None  # not Triton: not Triton's limits
    spec = gemmreg.KernelSpec(
        name="opted_in",
        summary="a Triton kernel",
        prepare=lambda problem: None,
        capabilities=caps,
        tolerances={
            "fp32": gemmreg.Tolerance(rtol=3e-5),
            "bf16": gemmreg.Tolerance(rtol=1e-2, atol=1e-2),
        },
    )
    assert availability.unavailable_reason(spec) is None
    monkeypatch.setattr(known_limits.importlib.util, "find_spec", lambda name: None)
    assert availability.unavailable_reason(spec) == known_limits.TRITON_MISSING
    with pytest.raises(gemmreg.SpecError, match="field 'triton'"):
        triton_caps(triton="yes")


@pytest.mark.parametrize(
    ("triton", "numpy", "clash"),
    [("3.6.0", "2.4.1", True), ("3.6.0", "2.3.5", False), ("3.7.1", "2.4.6", False)],
)
def test_the_interpreters_numpy_clash_is_a_reason_not_a_pin(monkeypatch, triton, numpy, clash):
    """NumPy is not pinned for everyone over a bug only Triton's interpreter
    has: under the interpreter, the clash makes every opted-in Triton kernel
    unavailable with the way out."""
    gemmreg.where()  # the backend decided (it imports torch) before versions are faked
    versions = {"triton": triton, "numpy": numpy}
    monkeypatch.setattr(known_limits, "_installed", versions.get)
    reason = known_limits.interpreter_numpy_clash()
    assert (reason is not None) == clash
    if clash:
        assert "numpy<2.4" in reason and f"Triton {triton[:3]}" in reason
        assert gemmreg.where().triton_interpreted  # this machine runs the interpreter
        assert known_limits.triton_unavailable() == reason


def test_every_triton_plugin_opts_into_the_core_limits():
    registry = discover(env={})
    triton_kernels = {
        "triton_baseline",
        "triton_grouped",
        "triton_tuned",
        "splitk",
        "splitk_atomic",
        "minimal_triton",
    }
    assert triton_kernels <= set(registry.kernels)
    for name in triton_kernels:
        caps = registry.get(name).spec.capabilities
        assert caps.triton, name
        # the core applies the interpreter's limits: a plugin's own constraint
        # (triton_tuned's: fp8's hardware) never refuses for the interpreter's sake
        for dtype in ("fp32", "fp16", "bf16"):
            problem = gemmreg.Problem(m=64, n=64, k=64, dtype=dtype)
            assert caps.constraint is None or caps.constraint(problem) is None, (name, dtype)
    assert not registry.get("torch_ref").spec.capabilities.triton
