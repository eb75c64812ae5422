"""triton_tuned: a Triton GEMM tuned per shape, meant to stand next to cuBLAS.

Five kernel paths: a tiled pointer kernel that runs everywhere, on Hopper
(CUDA capability >= 9) a persistent kernel that moves tiles through TMA
descriptors (both :mod:`.kernels`), and on Hopper for 16-bit operands (A
row-major) a warp-specialised persistent kernel written in Gluon
(:mod:`.gluon_ws`), and on CUDA for problems whose tiles cannot fill the
GPU (decode and prefill of a few hundred tokens) a split-K kernel, swap-AB
for M of 32 or less (:mod:`.split_k`, chosen by :mod:`.dispatch`), and on
CUDA for a few rows of A in fp16 or bf16 a GEMV kernel on the CUDA cores
(:mod:`.gemv`). fp8 (e4m3, scaled per tensor or per row and column) runs
through its own kernel, its partial sums promoted into fp32 (:mod:`.fp8`).
A grouped problem (an MoE layer's experts) runs in one
persistent launch of its own kernel, its config by rule (:mod:`.grouped`).
``prepare`` picks a config (and with it
the path) for the problem: from the on-disk cache (:mod:`.tuning_cache`), by
rule for problems too small to matter, or by benchmarking the candidates of
:mod:`.configs` on operands of the problem's shape, dtype and layout
(:mod:`.tuner`). All of that happens in ``prepare``, which the core reports
as cold start; ``launch`` only picks the tiled fallback when the operands it
is handed cannot go through TMA.

Precision is declared per backend, when the plugin registers (the hook runs
where the kernels run, and reads ``gemmreg.where().triton_target``): fp32 runs
as TF32 on NVIDIA (``input_precision='tf32'`` pinned), as IEEE fp32 on AMD
(pinned ``'ieee'``), and as IEEE fp32 under the CPU interpreter (NumPy).
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

import attrs
import gemmreg
from gemmreg_plugins import triton_seed
from gemmreg_plugins.triton_tuned import (
    configs,
    device_trial,
    fp8,
    grouped,
    launchers,
    paths_here,
    tuner,
    tuning_cache,
)

NAME = "triton_tuned"
LOG = logging.getLogger(__name__)
HERE = Path(__file__).resolve().parent
SOURCES = tuple(str(path) for path in sorted(HERE.glob("*.py")))
"""Every module of the plugin, found rather than listed, so that none can be
left out of what the tuning cache's key (:func:`source_hash`) and a run's
kernel sources hash: a kernel edited is a kernel tuned again."""

# ---------------------------------------------------------------------------
# What is declared, per backend
# ---------------------------------------------------------------------------

INPUT_PRECISION: dict[gemmreg.Backend, str] = {"cuda": "tf32", "rocm": "ieee", "cpu": "ieee"}
"""``input_precision`` for fp32 ``tl.dot``. NVIDIA: TF32 on the tensor cores,
declared as such. AMD: IEEE, pinned (whether Triton's AMD backend lowers 'tf32'
to xf32 depends on the chip; not claimed untested). The interpreter ignores it
and multiplies in fp32."""


FP8_PRECISION = {
    dtype: gemmreg.Precision(math="fp8", detail=fp8.PRECISION_DETAIL) for dtype in fp8.DTYPES
}
"""fp8 on every backend: the kernel's own math, run where the constraint lets it (CUDA
from sm89); the interpreter refuses fp8 and ROCm is refused with the reason."""


def precision_for(kind: gemmreg.Backend) -> dict[gemmreg.DType, gemmreg.Precision]:
    return {**_precision_16_32(kind), **FP8_PRECISION}


def _precision_16_32(kind: gemmreg.Backend) -> dict[gemmreg.DType, gemmreg.Precision]:
    if kind == "cuda":
        return {
            "fp32": gemmreg.Precision(
                math="tf32",
                detail="tl.dot input_precision='tf32' (wgmma on sm90), fp32 accumulate",
            ),
            "fp16": gemmreg.Precision(
                math="fp16",
                detail=(
                    "tl.dot, or Gluon's warpgroup_mma (wgmma on sm90), or fp32 FMAs "
                    "(the GEMV path), fp32 accumulate"
                ),
            ),
            "bf16": gemmreg.Precision(
                math="bf16",
                detail=(
                    "tl.dot, or Gluon's warpgroup_mma (wgmma on sm90), or fp32 FMAs "
                    "(the GEMV path), fp32 accumulate"
                ),
            ),
        }
    if kind == "rocm":
        return {
            "fp32": gemmreg.Precision(math="ieee_fp32", detail="tl.dot input_precision='ieee'"),
            "fp16": gemmreg.Precision(math="fp16", detail="tl.dot (MFMA), fp32 accumulate"),
            "bf16": gemmreg.Precision(math="bf16", detail="tl.dot (MFMA), fp32 accumulate"),
        }
    return {
        "fp32": gemmreg.Precision(math="ieee_fp32", detail="interpreter"),
        "fp16": gemmreg.Precision(math="fp16", detail="tl.dot (interpreter), fp32 accumulate"),
        "bf16": gemmreg.Precision(math="bf16", detail="tl.dot (interpreter), fp32 accumulate"),
    }


TF32_WHY = (
    "TF32 keeps 10 of fp32's 23 mantissa bits: each input is rounded (or truncated) "
    "to ~2^-11 (2^-10), so each product is off by up to ~2^-9 of |a||b| and the sum "
    "by up to that of |A|@|B|, plus fp32 accumulation; 4e-3 leaves 2x margin"
)


def tolerances_for(kind: gemmreg.Backend) -> dict[gemmreg.DType, gemmreg.Tolerance]:
    """The seed Triton plugins' tolerances (same inputs, fp32 accumulation, one
    rounding of C), except fp32 on NVIDIA, which runs as TF32 here."""
    tolerances: dict[gemmreg.DType, gemmreg.Tolerance] = dict(triton_seed.TOLERANCES)
    tolerances.update(gemmreg.standard_tolerances(FP8_PRECISION))
    if kind == "cuda":
        tolerances["fp32"] = gemmreg.Tolerance(rtol=4e-3, atol=1e-6, why=TF32_WHY)
    return tolerances


def _fp8_refusal(problem: gemmreg.Problem) -> str | None:
    return fp8.refusal(problem, gemmreg.where())


@functools.cache
def capabilities_for(kind: gemmreg.Backend) -> gemmreg.Capabilities:
    return gemmreg.Capabilities(
        dtypes={"fp32", "fp16", "bf16", *fp8.DTYPES},
        out_dtypes={"bf16", "fp16", "fp32"},  # fp8's C
        scalings={"tensor", "rowwise"},
        constraint=_fp8_refusal,
        backends={"cuda", "rocm", "cpu"},
        precision=precision_for(kind),
        layouts={"rowmajor", "transposedA", "transposedB", "padded"},
        tile=None,  # varies with the config chosen per shape
        triton=True,  # the core applies Triton's known limits (bf16 under the interpreter)
        grouped=True,  # an MoE layer's experts in one launch (:mod:`.grouped`)
    )


# ---------------------------------------------------------------------------
# prepare
# ---------------------------------------------------------------------------


@functools.cache
def source_hash() -> str:
    """Every source file of the plugin (``SOURCES``: the kernels, the
    candidate lists, the routes and precision chosen, how candidates are
    timed) and the lists as text, for the cache key: a choice made by another
    kernel or another way of choosing is made again. One list of files, so a
    new module cannot be left out of the key. Choices made with the unmeasured
    forms offered (``GEMMREG_TRITON_TUNED_UNMEASURED``) are kept apart from the
    others, so that one never reaches a run that did not ask for them."""
    unmeasured = f";UNMEASURED={tuning_cache.unmeasured_offered()}"
    return tuning_cache.source_hash(SOURCES, configs.describe_lists() + unmeasured)


def _device_key(problem: gemmreg.Problem, where: gemmreg.Environment) -> tuning_cache.CacheKey:
    import triton

    return tuning_cache.CacheKey(
        m=problem.m,
        n=problem.n,
        k=problem.k,
        dtype=problem.dtype,
        layout=problem.layout,
        device=where.device_name,
        capability=where.arch,
        triton=triton.__version__,
        source=source_hash(),
    )


def choose(problem: gemmreg.Problem, where: gemmreg.Environment) -> tuple[tuner.Choice, str, int]:
    """The config for ``problem`` on this GPU, its fp32 input precision, and the
    SM count (the persistent grid)."""
    import torch

    m, n, k = problem.m, problem.n, problem.k
    dtype = gemmreg.torch_dtype(problem.dtype)
    precision = INPUT_PRECISION[where.backend]
    num_sms = where.multiprocessors
    assert num_sms is not None  # only GPU backends tune
    candidates = paths_here.candidates_for(problem, where)
    forced = tuning_cache.forced_config()
    if forced is not None and any(c.path == forced.path for c in candidates):
        tiled = [c for c in candidates if c.path == "tiled"]
        choice = tuner.Choice(best=forced, fallback=configs.smallest(tiled), origin="forced")
        LOG.info("%s %s: %s (forced)", NAME, problem.label, forced.name)
        return choice, precision, num_sms
    only = tuning_cache.forced_path()

    def make_launch(config: configs.Config) -> launchers.Launcher:
        return launchers.launcher(
            config, m, n, k, precision, num_sms, fallback=tuner.fallback_of(candidates, {})
        )

    def make_trial() -> tuner.Trial:
        return device_trial.device_trial(m, n, k, dtype, problem.layout, make_launch)

    choice = tuner.choose(
        candidates,
        attrs.evolve(_device_key(problem, where), paths=only or "all"),
        make_trial,
        volume=configs.tuning_volume(m, n, k),
        tune_min_volume=configs.TUNE_MIN_VOLUME,
        only=only,
        benchmark=tuning_cache.benchmarking_allowed(),
    )
    if choice.origin == "tuned":
        torch.cuda.empty_cache()  # give back the trial's operands before the core allocates
    LOG.info("%s %s: %s (%s)", NAME, problem.label, choice.best.name, choice.origin)
    return choice, precision, num_sms


def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
    where = gemmreg.where()
    capabilities_for(where.triton_target).require(problem)
    m, n, k = problem.m, problem.n, problem.k
    if problem.dtype in fp8.DTYPES:  # scaled fp8, its config by rule (no tuner yet)
        return fp8.fp8_launcher(problem, where)
    if problem.groups:  # one launch for every member, its config by rule (no tuner yet)
        return grouped.grouped_launcher(problem, where, INPUT_PRECISION[where.triton_target])
    if where.triton_target == "cpu":  # interpreted: one fixed config, nothing to tune
        launch = launchers.tiled_launcher(configs.INTERPRETER, m, n, k, INPUT_PRECISION["cpu"])
        return gemmreg.variant(launch, configs.INTERPRETER.name)
    choice, precision, num_sms = choose(problem, where)
    runs_here = {
        "tiled": True,
        "persistent_tma": paths_here.tma_supported(where),
        "gluon_ws": paths_here.gluon_supported(where),
        "gluon_tf32": paths_here.gluon_supported(where),
        "split_k": True,
        "tma_split_k": paths_here.tma_supported(where),
        "gemv": True,
    }
    best = choice.best if runs_here[choice.best.path] else choice.fallback
    launch = launchers.launcher(best, m, n, k, precision, num_sms, fallback=choice.fallback)
    instead = launchers.taken_instead(best, choice.fallback)  # for operands TMA cannot take
    return gemmreg.variant(launch, best.name + (f" (else {instead.name})" if instead else ""))


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    kind = gemmreg.where().triton_target  # whose arithmetic runs here
    register(
        gemmreg.KernelSpec(
            name=NAME,
            summary=(
                "Triton GEMM tuned per shape (cached): tiled pointer kernel everywhere, "
                "persistent TMA and warp-specialised Gluon kernels on Hopper"
            ),
            prepare=prepare,
            capabilities=capabilities_for(kind),
            tolerances=tolerances_for(kind),
            sources=SOURCES,
        )
    )
