"""triton_tuned's fp8 path on the CPU: the kernel's indexing and scales
under Triton's interpreter (which has no fp8: the same kernel on fp16
operands holding e4m3 values, every one exact in fp16) against a float64
reference within the declared fp8 tolerance; what is declared and refused,
and where; and every config the rule chooses compiled natively for an H200
(sm_90) on fp8 operands: within shared memory, on the tensor cores, nothing
spilled."""

from __future__ import annotations

import attrs
import gemmreg
import pytest
import torch
from gemmreg.checking.operands import make_operands
from gemmreg.testing import native_compile
from gemmreg_plugins import triton_tuned
from gemmreg_plugins.triton_tuned import fp8, fp8_tma

SPEC = gemmreg.KernelSpec(
    name="triton_tuned",
    summary="fp8 operands drawn as the core draws them",
    prepare=triton_tuned.prepare,
    capabilities=triton_tuned.capabilities_for("cuda"),
    tolerances=triton_tuned.tolerances_for("cuda"),
)
RTOL = triton_tuned.tolerances_for("cuda")["fp8e4m3"].rtol
ROUNDING = {"fp16": (2.0**-11, 2.0**-24), "fp32": (2.0**-24, 2.0**-149)}
"""C's own rounding, relative and (subnormal step) absolute: what the core adds
to the fp8 tolerance."""


@pytest.mark.parametrize("scaling", ["tensor", "rowwise"])
@pytest.mark.parametrize("out_dtype", ["fp16", "fp32"])
@pytest.mark.parametrize(
    ("m", "n", "k"),
    [(1, 1, 1), (48, 80, 32), (17, 33, 45), (5, 64, 100), (40, 3, 70), (1, 70, 130), (150, 40, 20)],
)
@pytest.mark.parametrize("layout", sorted(SPEC.capabilities.layouts))
def test_the_kernel_scales_every_row_and_column_within_the_fp8_tolerance(
    scaling, out_dtype, m, n, k, layout
):
    """The core's fp8 values (every binade a row or column of its own, the
    largest and subnormal ones included) and scales that are not powers of
    two and differ by row, through the kernel on fp16 carriers laid out as the
    core lays out each declared layout (NaN in ``padded``'s padding); K past
    ``BLOCK_K``'s multiples, a single row, column or depth, tails on every
    axis, and more row tiles than ``GROUP_M`` (the grouped order's last group
    short)."""
    problem = gemmreg.Problem(m=m, n=n, k=k, dtype="fp8e4m3", out_dtype="bf16", scaling=scaling)
    a8, b8, scale_a, scale_b = make_operands(SPEC, problem, 3, "cpu", "mixed")
    a, b = gemmreg.apply_layout(a8.to(torch.float16), b8.to(torch.float16), layout)
    assert torch.equal(a.to(a8.dtype), a8) and torch.equal(b.to(b8.dtype), b8)  # exact carriers
    out = torch.full((m, n), float("nan"), dtype=gemmreg.torch_dtype(out_dtype))
    fp8.run(fp8.INTERPRETED, scaling == "rowwise", a, b, out, scale_a, scale_b)
    sa, sb = scale_a.double(), scale_b.double()
    a64, b64 = a8.double() * sa, b8.double() * sb
    expected = a64 @ b64
    relative, step = ROUNDING[out_dtype]
    bound = RTOL * (a64.abs() @ b64.abs()) + relative * expected.abs() + step
    error = (out.double() - expected).abs()
    assert torch.isfinite(out).all() and (error <= bound).all(), (error / bound).max()


def test_a_kernel_that_dropped_the_scales_would_fail_this_check():
    """The check above is not loose: the same kernel handed unit scales misses."""
    problem = gemmreg.Problem(m=48, n=80, k=32, dtype="fp8e4m3", scaling="rowwise")
    a8, b8, scale_a, scale_b = make_operands(SPEC, problem, 3, "cpu", "mixed")
    out = torch.empty((48, 80), dtype=torch.float32)
    ones_a, ones_b = torch.ones_like(scale_a), torch.ones_like(scale_b)
    fp8.run(fp8.INTERPRETED, True, a8.half(), b8.half(), out, ones_a, ones_b)
    a64, b64 = a8.double() * scale_a.double(), b8.double() * scale_b.double()
    bound = RTOL * (a64.abs() @ b64.abs())
    assert ((out.double() - a64 @ b64).abs() > bound).any()


def test_fp8_is_declared_with_its_outputs_scalings_math_and_tolerance():
    caps = triton_tuned.capabilities_for("cuda")
    assert "fp8e4m3" in caps.dtypes and "fp8e5m2" not in caps.dtypes
    assert caps.out_dtypes == {"bf16", "fp16", "fp32"} and caps.scalings == {"tensor", "rowwise"}
    assert caps.precision["fp8e4m3"].math == "fp8"
    assert gemmreg.standard_tolerances(caps.precision)["fp8e4m3"].rtol == RTOL


def test_fp8_is_refused_with_its_reason_where_it_cannot_run():
    here = gemmreg.where()
    problem = gemmreg.Problem(m=64, n=64, k=64, dtype="fp8e4m3")
    hopper = attrs.evolve(here, backend="cuda", capability=(9, 0))
    assert fp8.refusal(problem, hopper) is None
    assert "Ada (sm89)" in fp8.refusal(problem, attrs.evolve(hopper, capability=(8, 0)))
    assert "fnuz" in fp8.refusal(problem, attrs.evolve(hopper, backend="rocm", capability=None))
    for unpromoted in [(8, 9), (10, 0), (12, 0)]:  # Triton promotes fp8 sums on sm90 only
        reason = fp8.refusal(problem, attrs.evolve(hopper, capability=unpromoted))
        assert reason and "Hopper (sm90) only" in reason, (unpromoted, reason)
    assert (
        fp8.refusal(attrs.evolve(problem, dtype="fp16"), attrs.evolve(hopper, capability=(8, 0)))
        is None
    )


def test_the_cpu_check_skips_fp8_with_the_interpreters_reason(tmp_path):
    import csv
    import subprocess
    import sys

    argv = [sys.executable, "-m", "gemmreg", "check", "triton_tuned", "--dtype", "fp8e4m3"]
    done = subprocess.run([*argv, "--format", "csv"], capture_output=True, text=True, cwd=tmp_path, timeout=600)  # fmt: skip
    # every case skipped: nothing ran, which check counts as a failure (exit 1), saying why
    assert (
        done.returncode == 1 and "fp8 is not supported by Triton's CPU interpreter" in done.stderr
    )
    rows = list(csv.DictReader(done.stdout.splitlines()))
    fp8_rows = [row for row in rows if row["dtype"].startswith("fp8e4m3")]
    assert fp8_rows and all(row["status"] == "skip" for row in rows)
    assert all("CPU interpreter" in row["detail"] for row in fp8_rows), fp8_rows[0]


def test_the_config_follows_m_and_the_gluon_kernel_takes_many_rows():
    def form(c: fp8.Fp8Config) -> tuple:
        return (c.block_m, c.block_n, c.block_k, c.num_warps, c.num_stages, c.gluon)

    for m, n in [(1, 4096), (16, 14336), (64, 1024), (128, 4096), (128, 1024)]:
        assert form(fp8.config_for(m, n, gluon=True)) == (64, 64, 128, 4, 4, False)
    # 128 rows of a wide N: 128 x 128 tiles, fewer of them, on the Gluon kernel where it runs
    assert form(fp8.config_for(128, 14336, gluon=True)) == (128, 128, 128, 4, 5, True)
    assert form(fp8.config_for(128, 14336)) == (128, 128, 128, 8, 4, False)
    for m, n in [(129, 4096), (2048, 1024), (8192, 8192)]:  # many rows
        assert form(fp8.config_for(m, n, gluon=True)) == (128, 128, 128, 4, 5, True)
        assert form(fp8.config_for(m, n)) == (128, 128, 128, 8, 4, False)  # no Gluon here


def test_a_deep_k_into_a_narrow_n_takes_the_tma_kernel_up_to_128_rows():
    """Llama 3 8B's down projection (N 4096, K 14336): the TMA kernel's 64 x 64
    tiles whole up to 64 rows, 128 x 64 in two ranges of K at 128; not at K
    4096, not past 128 rows, not where no TMA kernel runs."""
    for m in (1, 16, 64):
        assert fp8.config_for(m, 4096, gluon=True, k=14336).name == "tma:64x64x128-s6-w4-g8-k1"
    assert fp8.config_for(128, 4096, gluon=True, k=14336).name == "tma:128x64x128-s6-w8-g8-k2"
    assert fp8.config_for(128, 1024, gluon=True, k=8192).tma
    for m, n, k in [(16, 4096, 4096), (128, 14336, 4096), (129, 4096, 14336), (16, 8192, 14336)]:
        assert not fp8.config_for(m, n, gluon=True, k=k).tma, (m, n, k)
    assert not fp8.config_for(16, 4096, k=14336).tma  # no Hopper TMA kernels here
    assert {fp8.config_for(m, 4096, gluon=True, k=14336) for m in (16, 128)} <= set(
        fp8_tma.TMA_PROBED
    )


def test_the_gluon_kernel_takes_row_major_a_and_a_transposed_weight_only():
    def e4m3(*shape: int) -> torch.Tensor:
        return torch.zeros(*shape, dtype=torch.float8_e4m3fn)

    a, weight, out = e4m3(256, 64), e4m3(96, 64), torch.empty(256, 96, dtype=torch.bfloat16)
    assert fp8.tma_takes(a, weight.T, out)
    assert not fp8.tma_takes(a, e4m3(64, 96), out)  # B row-major: fp8 wgmma reads K-major
    assert not fp8.tma_takes(e4m3(64, 256).T, weight.T, out)  # A transposed
    assert not fp8.tma_takes(e4m3(256, 72)[:, :68], e4m3(96, 68).T, out)  # rows not 16-byte
    carriers = a.to(torch.float16), weight.to(torch.float16).T  # the CPU tests' carriers
    assert not fp8.tma_takes(*carriers, out)


def test_a_gluon_config_runs_the_triton_kernel_where_the_gluon_kernel_cannot(monkeypatch):
    """B row-major: the Triton kernel of :mod:`.fp8_kernel` at the rule's own
    config for it (8 warps, the config the H200 timed; on the Gluon ring's 4
    its two fp32 sums of a 128 x 128 tile take all 255 registers a thread),
    and the right product."""
    config = fp8.config_for(300, 40, gluon=True)
    assert config.gluon
    launched: list[dict] = []
    real = fp8.fp8_kernel()

    class Recording:
        def __getitem__(self, grid):
            def launch(*args, **kwargs):
                launched.append(kwargs)
                return real[grid](*args, **kwargs)

            return launch

    monkeypatch.setattr(fp8, "fp8_kernel", Recording)
    a = torch.randint(-3, 4, (300, 24)).to(torch.float16)
    b = torch.randint(-3, 4, (24, 40)).to(torch.float16)
    out = torch.empty(300, 40, dtype=torch.float32)
    one = torch.ones(1, 1, dtype=torch.float32)  # a per-tensor scale, as the core shapes it
    fp8.run(config, False, a, b, out, one, one, 132)
    assert torch.equal(out, (a.float() @ b.float()))
    (kwargs,) = launched
    triton_config = fp8.config_for(300, 40)
    assert not triton_config.gluon
    assert (kwargs["BLOCK_M"], kwargs["BLOCK_N"], kwargs["num_warps"], kwargs["num_stages"]) == (
        triton_config.block_m,
        triton_config.block_n,
        triton_config.num_warps,
        triton_config.num_stages,
    )
    assert kwargs["num_warps"] != config.num_warps


SCRIPT = """
import json, re, os, subprocess, tempfile
from pathlib import Path
import gemmreg
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
import triton
from gemmreg.testing import compile_natively
from gemmreg_plugins.triton_tuned import fp8, fp8_kernel

cuobjdump = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
fn = fp8_kernel.fp8_kernel()
# the strides of 1 the JIT specialises at launch: A row-major, B a transposed view of a
# row-major weight (what torch._scaled_mm takes) or row-major, C row-major
unit = {"transposedB": ("stride_ak", "stride_bk", "stride_cn"),
        "rowmajor": ("stride_ak", "stride_bn", "stride_cn")}
shapes = [(1, 4096), (16, 14336), (64, 1024), (128, 14336), (8192, 8192)]
# the kernel's own runs, then the control: the largest tile left to Triton's sm_90
# default (PROMOTE_EVERY None: never promoted), where no fp32 add may be counted
runs = [(m, n, layout, rowwise, "block_k") for m, n in shapes for layout in unit
        for rowwise in (False, True)] + [(8192, 8192, "transposedB", True, None)]
out = {}
for m, n, layout, rowwise, promote in runs:
    c = fp8.config_for(m, n)
    constexprs = dict(BLOCK_M=c.block_m, BLOCK_N=c.block_n, BLOCK_K=c.block_k,
                      GROUP_M=c.group_m, ROWWISE=rowwise,
                      PROMOTE_EVERY=c.block_k if promote else None)
    constexprs.update({name: 1 for name in unit[layout]})
    types = {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "c_ptr": "*bf16",
             "sa_ptr": "*fp32", "sb_ptr": "*fp32"}
    compiled = compile_natively(
        fn, types, constexprs,
        aligned=[n for n in fn.arg_names if n not in ("m", "stride_sa", "stride_sb")],
        num_warps=c.num_warps, num_stages=c.num_stages,
    )
    ptx = compiled.asm["ptx"]
    cubin = Path(tempfile.mkdtemp()) / "k.cubin"
    cubin.write_bytes(compiled.asm["cubin"])
    usage = subprocess.run([str(cuobjdump), "--dump-resource-usage", str(cubin)],
                           capture_output=True, text=True, check=True).stdout
    name = f"{m}x{n} {layout} rowwise={rowwise}" + ("" if promote else " unpromoted")
    out[name] = {
        "shared": compiled.metadata.shared,
        "block_m": c.block_m,
        "accumulator": c.block_m * c.block_n // (32 * c.num_warps),
        "promoted": bool(promote),
        "wgmma": len(re.findall(r"wgmma\\.mma_async[^;]*e4m3\\.e4m3", ptx)),
        "mma": len(re.findall(r"\\bmma\\.sync", ptx)),
        "fp32_adds": len(re.findall(r"\\badd(?:\\.rn)?\\.f32", ptx)),
        "copies": len(re.findall(r"cp\\.async\\.c[ga]\\.shared\\.global", ptx)),
        "stack": int(re.search(r"STACK:(\\d+)", usage).group(1)),
    }
print(json.dumps(out))
"""

SHARED_MEMORY = 227 * 1024
"""An H200 block's shared memory (232448 bytes)."""


@pytest.mark.slow
def test_every_config_the_rule_chooses_compiles_for_an_h200_on_fp8_tensor_cores():
    """Each config fits in shared memory, loads through ``cp.async``, multiplies
    on the tensor cores (e4m3 by e4m3 on ``wgmma`` from 64 rows up; below,
    ``mma.sync`` on fp16, to which Triton widens e4m3 exactly) and spills
    nothing (no stack: ptxas's spills, which the PTX does not show), with
    either scaling, B either way round. On ``wgmma`` the partial sums are
    promoted: each K block's ``wgmma`` results are added into the fp32
    accumulator, at least one fp32 add per accumulator element of a thread,
    where Triton's sm_90 default (the control) adds none."""
    compiled = native_compile(SCRIPT)
    assert len(compiled) == 21, compiled
    for name, found in compiled.items():
        assert 0 < found["shared"] <= SHARED_MEMORY, (name, found)
        assert found["copies"] > 0 and found["stack"] == 0, (name, found)
        tensor_cores = found["wgmma"] if found["block_m"] >= 64 else found["mma"]
        assert tensor_cores > 0, (name, found)
        if found["wgmma"] and found["promoted"]:
            assert found["fp32_adds"] >= found["accumulator"], (name, found)
    control = compiled["8192x8192 transposedB rowwise=True unpromoted"]
    assert control["wgmma"] > 0 and control["fp32_adds"] == 0, control
