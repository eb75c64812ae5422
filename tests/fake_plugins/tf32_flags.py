"""Kernels that log the TF32 switch they run under (gemmreg pins it per kernel).

``fake_tf32_logged`` declares TF32 math for fp32, ``fake_ieee_logged`` IEEE
fp32; both compute the right answer with torch.mm and append, on prepare and
on every call, ``name stage dtype allow_tf32 float32_matmul_precision pid`` to the
file named by :data:`TF32_LOG_ENV` (so a worker's observations come back), or
to :data:`SEEN` in this process. ``fake_tf32_turns_off`` declares TF32 and
turns the switch off in its prepare, ``fake_tf32_turns_off_later`` on its
third call (in the rounds): the core must blame each.
"""

import os

import gemmreg
import torch

from fake_plugins import fp32_spec

TF32_LOG_ENV = "GEMMREG_TEST_TF32_LOG"

SEEN: list[tuple[str, str, str, bool, str]] = []
"""(kernel, stage, dtype, allow_tf32, float32_matmul_precision), in this process."""

TF32 = {"fp32": gemmreg.Precision(math="tf32", detail="torch.mm, TF32 pinned by the core")}


DTYPES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}


def _log(name: str, stage: str, dtype: str) -> None:
    seen = (
        name,
        stage,
        dtype,
        bool(torch.backends.cuda.matmul.allow_tf32),
        torch.get_float32_matmul_precision(),
    )
    SEEN.append(seen)
    path = os.environ.get(TF32_LOG_ENV)
    if path:
        with open(path, "a") as log:
            log.write(" ".join(str(part) for part in (*seen, os.getpid())) + "\n")


def logged(name: str):
    def launch(a, b, out):
        _log(name, "launch", DTYPES[a.dtype])
        torch.mm(a, b, out=out)

    def prepare(problem):
        _log(name, "prepare", problem.dtype)
        return launch

    return prepare


def turns_off(problem):
    torch.backends.cuda.matmul.allow_tf32 = False
    return lambda a, b, out: torch.mm(a, b, out=out)


_calls = [0]


def turns_off_on_third_call(a, b, out):
    """Clean through prepare and the first call, then it turns TF32 off."""
    _calls[0] += 1
    if _calls[0] == 3:
        torch.backends.cuda.matmul.allow_tf32 = False
    torch.mm(a, b, out=out)


def tf32_spec(name: str, prepare) -> gemmreg.KernelSpec:
    return fp32_spec(
        name,
        None,
        prepare=prepare,
        capabilities=gemmreg.Capabilities(
            dtypes={"fp32"}, backends={"cpu", "cuda", "rocm"}, precision=TF32
        ),
        tolerances=gemmreg.standard_tolerances(TF32),
    )


TF32_LOGGED = tf32_spec("fake_tf32_logged", logged("fake_tf32_logged"))
IEEE_LOGGED = fp32_spec("fake_ieee_logged", None, prepare=logged("fake_ieee_logged"))
TF32_TURNS_OFF = tf32_spec("fake_tf32_turns_off", turns_off)
TF32_TURNS_OFF_LATER = tf32_spec(
    "fake_tf32_turns_off_later", lambda problem: turns_off_on_third_call
)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    for spec in (TF32_LOGGED, IEEE_LOGGED, TF32_TURNS_OFF, TF32_TURNS_OFF_LATER):
        register(spec)
