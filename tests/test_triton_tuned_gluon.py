"""triton_tuned's Gluon path (``gluon_ws``): when it is offered, what it hands
to the tiled fallback, and what its kernel compiles to for an H200 (sm_90)
with no GPU here (Triton's compiler and ptxas run on the CPU).

Its arithmetic is checked on the H200 only (Gluon has no interpreter): by the
tuner, on every candidate's first call and on 16 more calls of a winner, and
by ``gemmreg check triton_tuned --full`` with ``GEMMREG_TRITON_TUNED_PATH=gluon_ws``.
"""

from __future__ import annotations

import json

import attrs
import gemmreg
import pytest
import torch
from gemmreg.testing import native_compile
from gemmreg_plugins.triton_tuned import configs, launchers, paths_here
from gemmreg_plugins.triton_tuned.configs import Config

GLUON = list(configs.CUDA_GLUON_WS)


def test_the_gluon_configs_lead_the_16_bit_candidates_where_allowed():
    for dtype in ("fp16", "bf16"):
        found = configs.candidates("cuda", dtype, 4096, 4096, 4096, tma=True, gluon=True)
        assert found[: len(GLUON)] == GLUON
        assert found[len(GLUON) :] == configs.candidates("cuda", dtype, 4096, 4096, 4096, tma=True)
    for kind, dtype, tma in (
        ("cuda", "fp32", True),
        ("cuda", "fp16", False),
        ("rocm", "fp16", True),
    ):
        found = configs.candidates(kind, dtype, 4096, 4096, 4096, tma=tma, gluon=True)
        assert not any(c.path == "gluon_ws" for c in found), (kind, dtype, tma)
    # Boxes larger than the problem are dropped, as on the persistent path.
    small = configs.candidates("cuda", "fp16", 64, 4096, 4096, tma=True, gluon=True)
    assert not any(c.path == "gluon_ws" for c in small)


def test_a_gluon_config_survives_the_cache_and_one_the_kernel_cannot_run_does_not():
    for config in GLUON:
        assert Config.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    assert len({c.name for c in GLUON}) == len(GLUON)  # the name tells them apart
    for bad in ({"num_warps": 8}, {"block_m": 64}):
        with pytest.raises(ValueError, match="Gluon"):
            Config.from_dict({**GLUON[0].to_dict(), **bad})


def _has_gluon_hopper() -> bool:
    try:
        from triton.experimental.gluon.language.nvidia import hopper  # noqa: F401
    except ImportError:
        return False
    return True


def _hopper(**changes: object) -> gemmreg.Environment:
    here = gemmreg.where()
    fields = dict(
        backend="cuda", device="cuda", capability=(9, 0), arch="sm90", multiprocessors=132
    )
    return attrs.evolve(here, **{**fields, **changes})


def test_gluon_runs_on_hopper_only_with_the_triton_it_is_written_for(monkeypatch):
    import triton

    monkeypatch.setattr(triton, "__version__", "3.6.0")
    if not _has_gluon_hopper():
        pytest.skip("this Triton has no Gluon for Hopper")
    assert paths_here.gluon_supported(_hopper())
    assert not paths_here.gluon_supported(_hopper(capability=(10, 0), arch="sm100"))
    assert not paths_here.gluon_supported(_hopper(capability=(8, 0), arch="sm80"))
    assert not paths_here.gluon_supported(_hopper(backend="rocm", arch="gfx942"))
    monkeypatch.setattr(triton, "__version__", "3.5.1")
    assert not paths_here.gluon_supported(_hopper())


@pytest.mark.parametrize(
    "case",
    ["transposed A", "transposed B", "fp32", "misaligned C"],
)
def test_operands_the_gluon_kernel_cannot_take_go_to_the_fallback(case):
    m, n, k = 128, 256, 64
    dtype = torch.float32 if case == "fp32" else torch.float16
    a = torch.ones(k, m, dtype=dtype).T if case == "transposed A" else torch.ones(m, k, dtype=dtype)
    b = torch.ones(n, k, dtype=dtype).T if case == "transposed B" else torch.ones(k, n, dtype=dtype)
    out = torch.empty(m * n + 1, dtype=dtype)[1:].view(m, n) if case == "misaligned C" else None
    out = out if out is not None else torch.empty(m, n, dtype=dtype)
    calls = []
    launch = launchers.gluon_ws_launcher(GLUON[0], m, n, k, 132, lambda *ops: calls.append(ops))
    launch(a, b, out)
    assert len(calls) == 1 and calls[0][0] is a and calls[0][2] is out


SCRIPT = """
import json, os, re
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from gemmreg_plugins.triton_tuned import configs, gluon_ws

out = {}
for config in configs.CUDA_GLUON_WS:
    for dt in ("fp16", "bf16"):
        dtype = {"fp16": gl.float16, "bf16": gl.bfloat16}[dt]
        rows = config.block_m // 2
        boxes = {"a_desc": [rows, config.block_k], "b_desc": [config.block_k, config.block_n],
                 "c_desc": [rows, config.block_n]}
        signature = {
            name: f"tensordesc<{dt}[{box[0]}, {box[1]}],"
                  f"{gl.NVMMASharedLayout.get_default_for(box, dtype)!r}>"
            for name, box in boxes.items()
        }
        signature.update(m="i32", n="i32", k="i32")
        constexprs = dict(GROUP_M=config.group_m, PROGRAMS=132, STAGES=config.num_stages)
        signature.update({name: "constexpr" for name in constexprs})
        compiled = triton.compile(
            GluonASTSource(fn=gluon_ws.gemm_gluon_ws, signature=signature, constexprs=constexprs,
                           attrs={(i,): [["tt.divisibility", 16]] for i in (3, 4, 5)}),
            target=GPUTarget("cuda", 90, 32),
            options={"num_warps": config.num_warps},
        )
        ptx = compiled.asm["ptx"]
        out[f"{config.name} {dt}"] = {
            "shared": compiled.metadata.shared,
            "warps": compiled.metadata.num_warps,
            "setmaxnreg": sorted(set(re.findall(r"setmaxnreg\\.(inc|dec)\\.sync\\.aligned\\.u32\\s+(\\d+)", ptx))),
            "wgmma": len(re.findall(r"wgmma\\.mma_async", ptx)),
            "tma_loads": len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.shared::\\w+\\.global", ptx)),
            "tma_stores": len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.global\\.shared", ptx)),
            "local": len(re.findall(r"\\bst\\.local|\\bld\\.local", ptx)),
        }
out["regs"] = [gluon_ws.LOADER_REGS.value, gluon_ws.CONSUMER_REGS.value]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def compiled() -> dict:
    import triton

    if tuple(int(p) for p in triton.__version__.split(".")[:2]) < paths_here.GLUON_TRITON:
        pytest.skip(f"the Gluon path is written for Triton >= {paths_here.GLUON_TRITON}")
    return native_compile(SCRIPT)


def test_every_gluon_config_compiles_to_three_warpgroups_that_fit(compiled):
    loader, consumer = compiled.pop("regs")
    assert len(compiled) == 2 * len(GLUON)
    for name, found in compiled.items():
        assert found["warps"] == 12, name  # two consumer warpgroups and the loader's
        assert 0 < found["shared"] <= 227 * 1024, name
        # Registers move from the loader to the consumers.
        assert ["dec", str(loader)] in found["setmaxnreg"], name
        assert ["inc", str(consumer)] in found["setmaxnreg"], name  # JSON: lists
        assert found["wgmma"] > 0 and found["tma_loads"] > 0 and found["tma_stores"] > 0, name
        assert found["local"] == 0, name  # no accumulator spilled to local memory
