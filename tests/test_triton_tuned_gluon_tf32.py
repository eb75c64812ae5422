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
    if paths_here.triton_version() < paths_here.GLUON_TRITON:
        pytest.skip(f"the Gluon path is written for Triton >= {paths_here.GLUON_TRITON}")


SCRIPT = """
import json, os, re, subprocess, tempfile
from pathlib import Path
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
import torch
import triton
from gemmreg.testing import compile_natively, ptxas_report
from gemmreg_plugins.triton_tuned import configs, gluon_tf32

cuobjdump = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
out = {}
for config in configs.CUDA_GLUON_TF32:
    a = torch.empty(1024, 1024, dtype=torch.float32)
    b = torch.empty(1024, 2048, dtype=torch.float32)
    descs = gluon_tf32.descriptors(a, b, config.block_m, config.block_n, config.block_k)
    types = {name: f"tensordesc<fp32[{d.block_shape[0]}, {d.block_shape[1]}],{d.layout!r}>"
             for name, d in zip(("a_desc", "b_desc"), descs)}
    constexprs = dict(GROUP_M=config.group_m, PROGRAMS=132, STAGES=config.num_stages,
                      VECTOR_STORE=config.vector_store)
    # C's pointer, N and C's row stride multiples of 16, as at the shapes it is
    # timed at: Triton specialises on that, and a vector store of C needs it
    compiled = compile_natively(
        gluon_tf32.gemm_gluon_tf32, {**types, "c_ptr": "*fp32"}, constexprs,
        aligned=("c_ptr", "n", "stride_cm"), num_warps=config.num_warps,
        default_dot_input_precision="tf32",
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
        "c_stores": sorted(set(re.findall(r"st\\.global(?:\\.\\w+)*?\\.(v4\\.b32|b32)", ptx))),
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
        # every wgmma TF32, 64 rows of C^T by the tile's rows of C, its A from registers
        config = configs.Config.from_name(name)
        assert found["wgmma"] == [[f"m64n{config.block_m}k8", True]], name
        assert found["other_wgmma"] == 0, name
        assert found["tma_loads"] > 0, name
        assert found["local"] == 0, name
        # nothing spilled; but Triton 3.9's ptxas spills the 256x128 tiles' C^T
        # stores (in two halves of its rows) 48 bytes a thread, outside the K loop
        halves_spill = (
            config.block_m == 256
            and not config.vector_store
            and paths_here.triton_version() >= (3, 9)
        )
        assert found["stack"] <= (48 if halves_spill else 0), name
        # C stored 4 bytes a thread as wgmma left it, or 16 with -vs
        assert found["c_stores"] == (["v4.b32"] if config.vector_store else ["b32"]), name


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


def test_fp32_gets_the_tf32_kernel_on_hopper_first_and_by_default(monkeypatch):
    found = configs.candidates("cuda", "fp32", 4096, 4096, 4096, tma=True, gluon=True, num_sms=132)
    assert found[: len(configs.CUDA_GLUON_TF32)] == list(configs.CUDA_GLUON_TF32)
    # every form by default, the 256x128 ones first and the 4-stage vector store
    # before all (an untuned run's: the H100 timed it ahead at 4096^3); each 256x128
    # store both ways, the 128x256 tiles with the plain store alone
    offered = [c for c in configs.CUDA_GLUON_TF32 if not configs.unmeasured(c)]
    assert offered == list(configs.CUDA_GLUON_TF32)
    first = offered[0]
    assert (first.block_m, first.block_n, first.num_stages) == (256, 128, 4) and first.vector_store
    assert [(c.block_m, c.block_n) for c in offered[:4]] == [(256, 128)] * 4
    wide = [(c.num_stages, c.vector_store) for c in offered if c.block_m == 256]
    assert sorted(wide) == [(3, False), (3, True), (4, False), (4, True)]
    assert not any(c.vector_store for c in offered if c.block_m == 128)
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
    config = configs.Config.from_name("gluon_tf32:128x256x32-s4-w4")
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
    assert kwargs["VECTOR_STORE"] is False
    launch(a, torch.empty(1024, 256).T, out)  # B K-major: the persistent kernel's, not this
    launch(a.T.contiguous().T, b, out)  # A column-major
    launch(a.half(), b.half(), out.half())  # 16-bit: the gluon_ws path's
    assert fallen == ["tiled", "tiled", "tiled"] and len(launched) == 1
