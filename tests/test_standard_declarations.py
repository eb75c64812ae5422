"""What a plugin may leave to gemmreg: standard tolerances named from the math
it declares, honest defaults, and a Triton interpreter decided at import."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import gemmreg
import pytest
import torch
from conftest import REPO
from gemmreg.contract import backend
from gemmreg.contract.tolerance_bounds import LOOSE_RTOL


def precision(**math: str) -> dict:
    return {dtype: gemmreg.Precision(math=mode) for dtype, mode in math.items()}


def prepare(problem):  # a module-level prepare: its file is the default source
    raise NotImplementedError


def spec(**overrides) -> gemmreg.KernelSpec:
    declared = precision(fp32="ieee_fp32")
    fields = {
        "name": "k",
        "summary": "s",
        "prepare": prepare,
        "capabilities": gemmreg.Capabilities(precision=declared),
        "tolerances": gemmreg.standard_tolerances(declared),
    }
    return gemmreg.KernelSpec(**{**fields, **overrides})


# ---------------------------------------------------------------------------
# Standard tolerances
# ---------------------------------------------------------------------------


def test_the_standard_tolerance_follows_the_declared_math_not_the_dtype():
    ieee = gemmreg.standard_tolerances(precision(fp32="ieee_fp32", fp16="fp16"))
    tf32 = gemmreg.standard_tolerances(precision(fp32="tf32", fp16="fp16"))
    assert (ieee["fp32"].rtol, ieee["fp32"].atol) == (3e-5, 1e-6)
    assert (tf32["fp32"].rtol, tf32["fp32"].atol) == (4e-3, 1e-6)
    assert "TF32" in tf32["fp32"].why
    assert ieee["fp16"] == tf32["fp16"]
    assert (ieee["fp16"].rtol, ieee["fp16"].atol) == (2e-3, 1e-3)
    assert gemmreg.standard_tolerances(precision(bf16="bf16"))["bf16"].rtol == 1e-2


@pytest.mark.parametrize(("dtype", "math"), list(gemmreg.STANDARD_TOLERANCES))
def test_every_standard_passes_the_loose_tolerance_rule_and_says_where_it_comes_from(dtype, math):
    """A standard is declared like any tolerance: the loose-rtol rule still
    applies, and a loose standard passes it only through its ``why``."""
    declared = precision(**{dtype: math})
    tolerances = gemmreg.standard_tolerances(declared)
    spec(capabilities=gemmreg.Capabilities(precision=declared), tolerances=tolerances)
    standard = tolerances[dtype]
    assert standard.why.startswith("gemmreg's standard")
    if standard.rtol > LOOSE_RTOL[dtype]:
        unexplained = {dtype: gemmreg.Tolerance(rtol=standard.rtol, atol=standard.atol)}
        with pytest.raises(gemmreg.SpecError, match="is loose"):
            spec(capabilities=gemmreg.Capabilities(precision=declared), tolerances=unexplained)


def test_no_plugin_can_loosen_the_standard_table_for_the_plugins_after_it():
    """A plugin's import shares gemmreg with every other plugin's: writing
    into the public table (or into a copy taken from it) changes nothing."""
    ieee = ("fp32", "ieee_fp32")
    old = gemmreg.STANDARD_TOLERANCES[ieee]
    loose = gemmreg.Tolerance(rtol=0.5, atol=0.5, why=old.why)
    with pytest.raises(TypeError):
        gemmreg.STANDARD_TOLERANCES[ieee] = loose  # type: ignore[index]
    with pytest.raises(TypeError):
        del gemmreg.STANDARD_TOLERANCES[ieee]  # type: ignore[attr-defined]
    dict(gemmreg.STANDARD_TOLERANCES)[ieee] = loose
    declared = gemmreg.standard_tolerances(precision(fp32="ieee_fp32"))["fp32"]
    assert (declared.rtol, declared.atol) == (3e-5, 1e-6)
    assert gemmreg.STANDARD_TOLERANCES[ieee] is old


def test_math_with_no_standard_is_refused_with_the_way_out():
    with pytest.raises(gemmreg.SpecError, match=r"no standard for fp16 with fp16_acc16.*Tolerance"):
        gemmreg.standard_tolerances(precision(fp32="ieee_fp32", fp16="fp16_acc16"))
    with pytest.raises(gemmreg.SpecError, match=r"not a gemmreg\.Precision"):
        gemmreg.standard_tolerances({"fp32": "ieee_fp32"})  # type: ignore[dict-item]


# ---------------------------------------------------------------------------
# Defaults
# ---------------------------------------------------------------------------


def test_capabilities_default_to_the_dtypes_given_a_precision_and_every_backend():
    caps = gemmreg.Capabilities(precision=precision(fp32="ieee_fp32", fp16="fp16"))
    assert caps.dtypes == {"fp32", "fp16"}
    assert caps.backends == set(gemmreg.BACKENDS)
    assert caps.layouts == {"rowmajor"}  # strides must be declared
    narrower = gemmreg.Capabilities(dtypes={"fp32"}, precision=precision(fp32="ieee_fp32"))
    assert caps.unsupported(gemmreg.Problem(m=1, n=1, k=1, dtype="fp16")) is None
    assert "not declared" in narrower.unsupported(gemmreg.Problem(m=1, n=1, k=1, dtype="fp16"))


@pytest.mark.parametrize(
    ("declared", "words"),
    [
        ({}, "field 'precision': must state the math of at least one dtype"),
        (precision(fp8="fp16"), "field 'precision': unknown dtype 'fp8'"),
    ],
)
def test_a_precision_that_names_no_known_dtype_is_refused_there(declared, words):
    with pytest.raises(gemmreg.SpecError, match=words):
        gemmreg.Capabilities(precision=declared)


def test_sources_default_to_the_file_that_defines_prepare():
    assert spec().sources == (__file__,)
    assert spec(prepare=functools.partial(prepare)).sources == (__file__,)
    assert spec(prepare=print).sources == ()  # builtins have no file: nothing to hash
    assert spec(sources=("kernel.hip",)).sources == ("kernel.hip",)


def test_problem_mnk_is_the_kernel_argument_order():
    assert gemmreg.Problem(m=2, n=3, k=5).mnk == (2, 3, 5)


# ---------------------------------------------------------------------------
# Triton's interpreter, decided at import
# ---------------------------------------------------------------------------


def _fresh_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "GEMMREG_DEVICE")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "examples" / "gemmreg-minimal" / "src")])
    return env


def test_importing_gemmreg_sets_nothing_and_imports_no_torch():
    code = (
        "import os, sys, gemmreg; print(os.environ.get('TRITON_INTERPRET'), 'torch' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_fresh_env(), check=True
    )
    assert done.stdout.split() == ["None", "False"]


@pytest.mark.skipif(backend.gpu_likely(), reason="a GPU device node is here")
def test_a_plugin_imported_where_gemmreg_runs_kernels_decorates_for_the_interpreter():
    """A script ``run_fresh`` runs imports the module before anything
    discovers plugins: its module-level ``@triton.jit`` still sees the
    interpreter, because ``run_fresh`` decides it for the scripts it runs."""
    from gemmreg.testing import run_fresh

    code = "import json, gemmreg_minimal as m; print(json.dumps(type(m.matmul).__name__))"
    assert run_fresh(code, env=_fresh_env()) == "InterpretedFunction"


def test_the_early_guess_waits_for_torch_where_a_gpu_node_exists(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setattr(backend, "_interpreter_guessed", False)
    monkeypatch.setattr(backend, "gpu_likely", lambda: True)
    backend.settle_interpreter_early()
    assert "TRITON_INTERPRET" not in os.environ
    monkeypatch.setattr(backend, "gpu_likely", lambda: False)
    backend.settle_interpreter_early()
    assert os.environ["TRITON_INTERPRET"] == "1" and backend._interpreter_guessed


def test_a_wrong_guess_is_undone_and_said_when_torch_sees_a_gpu(monkeypatch):
    """No device node gemmreg knows of, yet torch sees a GPU: the kernels must
    not run interpreted, and those decorated already are named in the note."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(backend, "_interpreter_guessed", True)
    monkeypatch.delenv(backend.FORCE_ENV, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: "Fake GPU")
    monkeypatch.setitem(sys.modules, "triton", sys.modules.get("triton", object()))
    info = backend.current.__wrapped__()  # type: ignore[attr-defined]
    assert info.is_gpu and not info.triton_interpreter
    assert "TRITON_INTERPRET" not in os.environ
    assert info.note == backend.INTERPRETER_GUESSED_NOTE
