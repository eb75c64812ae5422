"""triton_tuned's TF32 Gluon kernel (``gluon_tf32.py``): C^T = B^T A^T with
B^T in ``wgmma``'s register operand, so a row-major B is never copied.

What it compiles to for an H200 (sm_90), with no GPU here: TF32 ``wgmma``
whose first operand is four registers and whose second is a shared-memory
descriptor, A and B through TMA, within shared memory, three warpgroups,
nothing spilled, no ``wgmma`` serialised by ptxas. Which problems get it (fp32 on
Hopper, B row-major) and which operands the launch hands it. Its arithmetic is
checked on a GPU only (Gluon has no interpreter): by the tuner on every
candidate's first call, and by ``check --full`` with the config named
(``GEMMREG_TRITON_TUNED_CONFIG``).
"""

from __future__ import annotations

import attrs
import gemmreg
import pytest
from gemmreg.testing import native_compile
from gemmreg_plugins.triton_tuned import configs, launchers, paths_here

SHARED_MEMORY = 227 * 1024
"""An H200 SM's shared memory for one CTA."""


def _gluon_here() -> None:
    import triton

    if tuple(int(p) for p in triton.__version__.split(".")[:2]) < paths_here.GLUON_TRITON:
        pytest.skip(f"the Gluon path is written for Triton >= {paths_here.GLUON_TRITON}")


SCRIPT = """
import json, os, re, subprocess, tempfile
from pathlib import Path
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource
from gemmreg.testing import ptxas_report
from gemmreg_plugins.triton_tuned import configs, gluon_tf32

cuobjdump = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
out = {}
for config in configs.CUDA_GLUON_TF32:
    a = torch.empty(1024, 1024, dtype=torch.float32)
    b = torch.empty(1024, 2048, dtype=torch.float32)
    descs = gluon_tf32.descriptors(a, b, config.block_m, config.block_n, config.block_k)
    signature = {name: f"tensordesc<fp32[{d.block_shape[0]}, {d.block_shape[1]}],{d.layout!r}>"
                 for name, d in zip(("a_desc", "b_desc"), descs)}
    signature.update(c_ptr="*fp32", m="i32", n="i32", k="i32", stride_cm="i32")
    constexprs = dict(GROUP_M=config.group_m, PROGRAMS=132, STAGES=config.num_stages,
                      CONFLICT_FREE=config.conflict_free)
    signature.update({name: "constexpr" for name in constexprs})
    compiled = triton.compile(
        GluonASTSource(fn=gluon_tf32.gemm_gluon_tf32, signature=signature,
                       constexprs=constexprs, attrs={(2,): [["tt.divisibility", 16]]}),
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": config.num_warps, "default_dot_input_precision": "tf32"},
    )
    ptx = compiled.asm["ptx"]
    cubin = Path(tempfile.mkdtemp()) / "k.cubin"
    cubin.write_bytes(compiled.asm["cubin"])
    usage = subprocess.run([str(cuobjdump), "--dump-resource-usage", str(cubin)],
                           capture_output=True, text=True, check=True).stdout
    # wgmma.mma_async...f32.tf32.tf32 {d...}, {a0, a1, a2, a3}, desc-b, ...: A in registers
    wgmma = re.findall(r"wgmma\\.mma_async\\.sync\\.aligned\\.(\\w+)\\.f32\\.tf32\\.tf32 "
                       r"\\{[^}]*\\}, *(\\{[^}]*\\}|%rd\\d+), *%rd\\d+", ptx)
    out[config.name] = {
        "shared": compiled.metadata.shared,
        "warps": compiled.metadata.num_warps,
        "wgmma": sorted({(shape, a.startswith("{") and a.count("%r") == 4) for shape, a in wgmma}),
        "other_wgmma": len(re.findall(r"wgmma\\.mma_async", ptx)) - len(wgmma),
        "tma_loads": len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.shared::\\w+\\.global", ptx)),
        "local": len(re.findall(r"\\bst\\.local|\\bld\\.local", ptx)),
        "stack": int(re.search(r"STACK:(\\d+)", usage).group(1)),
        "waits": sorted(set(re.findall(r"wgmma\\.wait_group\\.sync\\.aligned\\s+(\\d+)", ptx))),
        "ptxas": ptxas_report(ptx),
    }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def compiled() -> dict:
    _gluon_here()
    return native_compile(SCRIPT)


@pytest.mark.slow
def test_the_tf32_kernel_compiles_to_wgmma_with_b_transposed_in_registers(compiled):
    assert set(compiled) == {c.name for c in configs.CUDA_GLUON_TF32}
    for name, found in compiled.items():
        assert found["warps"] == 12, name  # two consumer warpgroups and the loader's
        assert 0 < found["shared"] <= SHARED_MEMORY, name
        # every wgmma TF32, 64 rows of C^T by the tile's 128 rows of C, its A from registers
        assert found["wgmma"] == [["m64n128k8", True]] and found["other_wgmma"] == 0, name
        assert found["tma_loads"] > 0, name
        assert found["local"] == found["stack"] == 0, name  # nothing spilled


@pytest.mark.slow
def test_ptxas_keeps_each_k_steps_wgmma_pipelined(compiled):
    """A ``wgmma`` reads its register operand (B^T) while in flight: with one
    group left in flight across a wait, those registers die in the compiler's
    eyes and ptxas serialises every ``wgmma`` (C7512), as the kernel's first
    form compiled; each step's group is waited for whole (wait_group 0), the
    next step's B^T loaded into registers of its own meanwhile."""
    for name, found in compiled.items():
        assert not found["ptxas"]["serialized"], (name, found["ptxas"])
        assert found["ptxas"]["spill_bytes"] == 0, name
        assert found["waits"] == ["0"], (name, found["waits"])


BANKS = """
import json, os
import gemmreg
os.environ.pop("TRITON_INTERPRET", None)
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from gemmreg_plugins.triton_tuned import gluon_tf32

@gluon.jit
def probe(out, CONFLICT_FREE: gl.constexpr):
    # the consumer's register operand and its half of a B box, as the kernel has them
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 128, 8])
    b_t_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=1)
    box = gl.allocate_shared_memory(gl.float32, [32, 128], gl.NVMMASharedLayout(
        swizzle_byte_width=128, element_bitwidth=32, rank=2))
    if CONFLICT_FREE:
        view = box._reinterpret(gl.float32, [128, 32], gluon_tf32.conflict_free_b_t(32, 128))
    else:
        view = box.permute((1, 0))
    b_t = view.load(b_t_layout)
    gl.static_print("conflicts", gl.bank_conflicts(b_t.type, view.type))
    gl.store(out + gl.arange(0, 128, layout=gl.SliceLayout(1, b_t_layout)),
             gl.sum(b_t, axis=1))

for conflict_free in (False, True):
    triton.compile(GluonASTSource(fn=probe, signature={"out": "*fp32", "CONFLICT_FREE": "constexpr"},
                                  constexprs={"CONFLICT_FREE": conflict_free}),
                   target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
"""


@pytest.mark.slow
def test_the_conflict_free_view_reads_b_transposed_with_no_bank_conflicts(tmp_path):
    """Triton's own count (``gl.bank_conflicts``, excess accesses per load)
    for the consumer's B^T load: read in B's column order every load is a
    two-way conflict; through ``conflict_free_b_t`` none is."""
    _gluon_here()
    import subprocess
    import sys

    script = tmp_path / "banks.py"  # a file: Triton reads a jit function's source back
    script.write_text(BANKS)
    found = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300
    )
    counts = [line.split()[-1] for line in found.stdout.splitlines() if "conflicts" in line]
    assert counts == ["1", "0"], found.stdout + found.stderr


def test_the_conflict_free_rows_are_b_columns_in_the_order_the_view_reads():
    """``column_of`` is the order ``conflict_free_b_t`` reads B's columns in:
    a bijection on each 32-column block, rows l + 4g + 8h + 16s to columns
    l + 4h + 8s + 16g; and the view's bases are the NVMMA layout's with
    those column bits moved (offset bit -> [row, K row])."""
    _gluon_here()
    import torch
    from gemmreg_plugins.triton_tuned import gluon_tf32

    rows = torch.arange(256)
    columns = gluon_tf32.column_of.fn(rows)
    assert sorted(columns.tolist()) == list(range(256))
    assert (columns // 32 == rows // 32).all() and columns[:8].tolist() == [
        0,
        1,
        2,
        3,
        16,
        17,
        18,
        19,
    ]
    view = gluon_tf32.conflict_free_b_t(32, 128)  # called from Python: the layout itself
    # NVMMA, 128-byte swizzle, [32, 128] fp32: offset bit -> [K row, column]
    nvmma = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 4], [2, 8], [4, 16], [8, 0], [16, 0],
             [0, 32], [0, 64]]  # fmt: skip
    inverse = {int(c): r for r, c in zip(rows.tolist(), columns.tolist(), strict=True)}
    assert view.offset_bases == [[inverse[column], k] for k, column in nvmma]


def test_fp32_gets_the_tf32_kernel_on_hopper_first_and_by_default(monkeypatch):
    found = configs.candidates("cuda", "fp32", 4096, 4096, 4096, tma=True, gluon=True, num_sms=132)
    assert found[: len(configs.CUDA_GLUON_TF32)] == list(configs.CUDA_GLUON_TF32)
    offered = [c for c in configs.CUDA_GLUON_TF32 if not configs.unmeasured(c)]
    assert offered and not any(c.conflict_free for c in offered)
    assert {c.path for c in configs.CUDA_GLUON_TF32} == {"gluon_tf32"}
    # beside the K-major copy of B, which the tuner weighs against it
    assert any(c.path == "persistent_tma" and c.transpose_b for c in found)
    # Where the tuner looks: row-major B only (a K-major one needs no swap), asked for or not
    hopper = attrs.evolve(
        gemmreg.where(), backend="cuda", device="cuda", capability=(9, 0), arch="sm90",
        multiprocessors=132,
    )  # fmt: skip
    monkeypatch.setattr(paths_here, "tma_supported", lambda where: True)
    monkeypatch.setattr(paths_here, "gluon_supported", lambda where: True)
    square = gemmreg.Problem(m=4096, n=4096, k=4096, dtype="fp32", layout="rowmajor")
    for asked, expected in (("", offered), ("1", list(configs.CUDA_GLUON_TF32))):
        monkeypatch.setenv("GEMMREG_TRITON_TUNED_UNMEASURED", asked)
        found = [c for c in paths_here.candidates_for(square, hopper) if c.path == "gluon_tf32"]
        assert found == expected, asked
    weight = attrs.evolve(square, layout="transposedB")
    assert not any(c.path == "gluon_tf32" for c in paths_here.candidates_for(weight, hopper))
    without = configs.candidates("cuda", "fp32", 4096, 4096, 4096, tma=True, num_sms=132)
    assert not any(c.path == "gluon_tf32" for c in without)
    # 16-bit problems keep their own Gluon tiles, never these
    half = configs.candidates("cuda", "bf16", 4096, 4096, 4096, tma=True, gluon=True, num_sms=132)
    assert not set(half) & set(configs.CUDA_GLUON_TF32)


def test_the_launch_hands_the_kernel_row_major_fp32_alone_with_tf32_pinned(monkeypatch):
    _gluon_here()
    import torch
    from gemmreg_plugins.triton_tuned import gluon_tf32

    launched: list[tuple] = []

    class Recording:
        def __getitem__(self, grid):
            return lambda *args, **kwargs: launched.append((grid, args, kwargs))

    monkeypatch.setattr(gluon_tf32, "gemm_gluon_tf32", Recording())
    fallen: list[str] = []
    config = configs.CUDA_GLUON_TF32[0]
    launch = launchers.gluon_tf32_launcher(
        config, 512, 1024, 256, 132, lambda a, b, out: fallen.append("tiled")
    )
    a, b = torch.empty(512, 256), torch.empty(256, 1024)
    out = torch.empty(512, 1024)
    launch(a, b, out)
    ((grid, args, kwargs),) = launched
    assert grid == (16,)  # 4 x 4 tiles of 128 x 256, one program each
    assert [d.block_shape for d in args[:2]] == [[128, 32], [32, 128]]  # A; half of B's tile
    assert args[2] is out and args[3:] == (512, 1024, 256, 1024)
    assert kwargs["default_dot_input_precision"] == "tf32" and kwargs["STAGES"] == 4
    launch(a, torch.empty(1024, 256).T, out)  # B K-major: the persistent kernel's, not this
    launch(a.T.contiguous().T, b, out)  # A column-major
    launch(a.half(), b.half(), out.half())  # 16-bit: the gluon_ws path's
    assert fallen == ["tiled", "tiled", "tiled"] and len(launched) == 1
