"""triton_tuned's fp8 TMA kernel (``Fp8Config.tma``: ``fp8_tma.py``,
``fp8_tma_kernel.py``), K cut into ranges or the tile in pieces.

Under Triton's interpreter (no fp8 there: fp16 operands holding the core's
e4m3 values, every one exact) the kernel scales every row and column within
the fp8 tolerance, with K cut and whole, the tile in pieces past N, either
scaling, C in fp16 and fp32, the K ranges' counters left at 0; ``fp8.run``
gives it only the operands TMA and fp8 ``wgmma`` take, the rest going to
the Triton kernel at the rule's config. Compiled for an H200 (sm_90) here
on e4m3 operands: within shared memory, e4m3 on ``wgmma`` with its partial
sums promoted (fp32 adds), through TMA, nothing spilled.
"""

from __future__ import annotations

import gemmreg
import pytest
import torch
from gemmreg.checking.operands import make_operands
from gemmreg.testing import native_compile
from gemmreg_plugins.triton_tuned import fp8, fp8_tma, split_k
from test_triton_tuned import interpreter_refuses_byte_aligned_strides
from test_triton_tuned_fp8 import ROUNDING, RTOL, SPEC

pytestmark = [
    pytest.mark.filterwarnings("ignore:Conversion of an array with ndim:DeprecationWarning"),
    pytest.mark.skipif(
        interpreter_refuses_byte_aligned_strides(),
        reason="this Triton's interpreter checks TMA strides in elements, not bytes",
    ),
]
SPLIT = fp8.Fp8Config(block_m=16, block_n=32, block_k=16, num_warps=4, num_stages=2, tma=True, split_k=3)  # fmt: skip
PIECES = fp8.Fp8Config(block_m=16, block_n=64, block_k=16, num_warps=4, num_stages=2, tma=True, pieces=3)  # fmt: skip
WHOLE = fp8.Fp8Config(block_m=16, block_n=32, block_k=16, num_warps=4, num_stages=2, tma=True)


@pytest.mark.parametrize("scaling", ["tensor", "rowwise"])
@pytest.mark.parametrize("out_dtype", ["fp16", "fp32"])
@pytest.mark.parametrize(
    ("config", "shape"),
    [
        (SPLIT, (40, 48, 72)),  # 5 K blocks in 3 ranges, a row tail
        (SPLIT, (20, 40, 24)),  # 2 K blocks: 2 ranges, a K tail, a column tail
        (WHOLE, (33, 72, 40)),  # K whole, tails on every axis
        (PIECES, (20, 232, 40)),  # 112 columns a tile: the last tile's half and quarter past N
        (PIECES, (17, 112, 16)),  # one tile exactly, one K block
    ],
    ids=lambda v: getattr(v, "name", str(v)),
)
def test_the_tma_kernel_scales_every_row_and_column_within_the_fp8_tolerance(
    scaling, out_dtype, config, shape
):
    m, n, k = shape
    problem = gemmreg.Problem(m=m, n=n, k=k, dtype="fp8e4m3", out_dtype="bf16", scaling=scaling)
    a8, b8, scale_a, scale_b = make_operands(SPEC, problem, 5, "cpu", "mixed")
    a, b = gemmreg.apply_layout(a8.to(torch.float16), b8.to(torch.float16), "transposedB")
    out = torch.full((m, n), float("nan"), dtype=gemmreg.torch_dtype(out_dtype))
    fp8_tma.run_tma_kernel(config, scaling == "rowwise", a, b, out, scale_a, scale_b)
    a64, b64 = a8.double() * scale_a.double(), b8.double() * scale_b.double()
    expected = a64 @ b64
    relative, step = ROUNDING[out_dtype]
    bound = RTOL * (a64.abs() @ b64.abs()) + relative * expected.abs() + step
    error = (out.double() - expected).abs()
    assert torch.isfinite(out).all() and (error <= bound).all(), (error / bound).max()
    assert all(int(found.counters.abs().sum()) == 0 for found in split_k.cached().values())


def test_unit_scales_would_miss_this_check():
    """The bound above is not loose: the TMA kernel handed unit scales misses."""
    problem = gemmreg.Problem(m=40, n=48, k=72, dtype="fp8e4m3", scaling="rowwise")
    a8, b8, scale_a, scale_b = make_operands(SPEC, problem, 5, "cpu", "mixed")
    a, b = gemmreg.apply_layout(a8.half(), b8.half(), "transposedB")
    out = torch.empty((40, 48), dtype=torch.float32)
    fp8_tma.run_tma_kernel(
        SPLIT, True, a, b, out, torch.ones_like(scale_a), torch.ones_like(scale_b)
    )
    a64, b64 = a8.double() * scale_a.double(), b8.double() * scale_b.double()
    assert ((out.double() - a64 @ b64).abs() > RTOL * (a64.abs() @ b64.abs())).any()


def test_run_gives_the_tma_kernel_only_what_tma_and_fp8_wgmma_take(monkeypatch):
    """fp16 carriers and a row-major B both go to the Triton kernel at the
    rule's config (neither is e4m3 in a transposed weight)."""
    taken = []
    monkeypatch.setattr(fp8_tma, "run_tma_kernel", lambda *args: taken.append(args))
    a = torch.randint(-3, 4, (40, 24)).to(torch.float16)
    b = torch.randint(-3, 4, (24, 48)).to(torch.float16)
    out = torch.empty(40, 48, dtype=torch.float32)
    one = torch.ones(1, 1, dtype=torch.float32)
    fp8.run(SPLIT, False, a, b, out, one, one, 132)
    assert taken == [] and torch.equal(out, a.float() @ b.float())
    e4m3 = torch.zeros(40, 32).to(torch.float8_e4m3fn)
    weight = torch.zeros(48, 32).to(torch.float8_e4m3fn)
    fp8.run(SPLIT, False, e4m3, weight.T, torch.empty(40, 48, dtype=torch.bfloat16), one, one)
    assert len(taken) == 1


def test_splits_and_pieces_belong_to_the_tma_kernel_one_at_a_time():
    assert SPLIT.name == "tma:16x32x16-s2-w4-g8-k3" and PIECES.name.endswith("-k1-p3")
    assert PIECES.columns == 112
    for wrong in (
        dict(split_k=2),  # the Triton kernel's
        dict(tma=True, split_k=2, pieces=3),
        dict(tma=True, gluon=True),
        dict(tma=True, pieces=4),
    ):
        with pytest.raises(ValueError):
            fp8.Fp8Config(block_m=64, block_n=64, block_k=128, num_warps=4, num_stages=4, **wrong)


SCRIPT = """
import json, re, os, subprocess, tempfile
from pathlib import Path
import gemmreg
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
import triton
from gemmreg.testing import compile_natively
from gemmreg_plugins.triton_tuned import fp8_tma
from gemmreg_plugins.triton_tuned.fp8_tma_kernel import gemm_fp8_tma as fn

cuobjdump = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
out = {}
for c in fp8_tma.TMA_PROBED:
    widths = [c.block_n >> piece for piece in range(c.pieces)]
    constexprs = dict(BLOCK_M=c.block_m, BLOCK_N=c.block_n, BLOCK_K=c.block_k, PIECES=c.pieces,
                      COLUMNS=c.columns, SPLIT_K=c.split_k, ROWWISE=True, PROMOTE_EVERY=c.block_k)
    types = {"a_desc": f"tensordesc<fp8e4nv[{c.block_m}, {c.block_k}]>",
             "sa_ptr": "*fp32", "sb_ptr": "*fp32", "ws_ptr": "*fp32", "count_ptr": "*i32"}
    for names, dtype, boxes in ((("b_desc", "b_half", "b_quarter"), "fp8e4nv",
                                 [(w, c.block_k) for w in widths]),
                                (("c_desc", "c_half", "c_quarter"), "bf16",
                                 [(c.block_m, w) for w in widths])):
        for name, box in zip(names, boxes):
            types[name] = f"tensordesc<{dtype}[{box[0]}, {box[1]}]>"
        constexprs.update({name: None for name in names[len(boxes):]})  # the pieces unused
    if c.split_k == 1:
        constexprs.update(ws_ptr=None, count_ptr=None)
    compiled = compile_natively(
        fn, types, constexprs, num_warps=c.num_warps, num_stages=c.num_stages
    )
    ptx = compiled.asm["ptx"]
    cubin = Path(tempfile.mkdtemp()) / "k.cubin"
    cubin.write_bytes(compiled.asm["cubin"])
    usage = subprocess.run([str(cuobjdump), "--dump-resource-usage", str(cubin)],
                           capture_output=True, text=True, check=True).stdout
    out[c.name] = {
        "shared": compiled.metadata.shared,
        "accumulator": c.block_m * c.columns // (32 * c.num_warps),
        "wgmma": len(re.findall(r"wgmma\\.mma_async[^;]*e4m3\\.e4m3", ptx)),
        "fp32_adds": len(re.findall(r"\\badd(?:\\.rn)?\\.f32", ptx)),
        "loads": len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.shared::\\w+\\.global", ptx)),
        "stores": len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.global\\.shared", ptx)),
        "stack": int(re.search(r"STACK:(\\d+)", usage).group(1)),
    }
print(json.dumps(out))
"""

SHARED_MEMORY = 227 * 1024
"""An H200 block's shared memory (232448 bytes)."""


@pytest.mark.slow
def test_every_probed_tma_config_compiles_for_an_h200_on_fp8_wgmma_promoted():
    """Each config the config probe times fits in shared memory, loads A and
    every piece of the weight through TMA and stores C through it, multiplies
    e4m3 by e4m3 on ``wgmma`` with its partial sums promoted (an fp32 add per
    accumulator element of a thread, at least) and spills nothing (no stack)."""
    compiled = native_compile(SCRIPT)
    assert len(compiled) == len(fp8_tma.TMA_PROBED) > 0, compiled
    for name, found in compiled.items():
        assert 0 < found["shared"] <= SHARED_MEMORY, (name, found)
        assert found["loads"] >= 2 and found["stores"] >= 1, (name, found)
        assert found["wgmma"] > 0 and found["stack"] == 0, (name, found)
        assert found["fp32_adds"] >= found["accumulator"], (name, found)
