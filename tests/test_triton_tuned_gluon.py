"""triton_tuned's Gluon path (``gluon_ws``): when it is offered (which configs,
at which of Llama 3 8B's projections), what it hands to the kernel and what
to the tiled fallback. What its kernel compiles to for an H200 (sm_90), with
no GPU here: ``test_triton_tuned_gluon_native.py``.

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
from gemmreg_plugins.triton_tuned import configs, dispatch, launchers, paths_here, tuning_cache
from gemmreg_plugins.triton_tuned.configs import Config
from gemmreg_plugins.triton_tuned.launch_config import SPLIT_PATHS
from test_triton_tuned_split_k import H200_SMS, llm_points

GLUON = list(configs.CUDA_GLUON_WS)
GLUON_128 = list(configs.CUDA_GLUON_WS_128X128)
NARROW_POINTS = {(128, 14336, 4096), (2048, 1024, 4096)}
"""The LLM points whose 128x256 tiles leave SMs idle and whose 128x128 tiles
nearly fill them: 112 and 128 of 132."""


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
    for config in GLUON + GLUON_128:
        assert Config.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    names = {c.name for c in GLUON + GLUON_128}
    assert len(names) == len(GLUON) + len(GLUON_128)  # the name tells them apart
    assert all(Config.from_name(name) in GLUON + GLUON_128 for name in names)
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


def _where_tma_runs(monkeypatch, unmeasured: bool = True, **changes: object) -> gemmreg.Environment:
    """A Hopper GPU where TMA runs; ``unmeasured``: the forms no GPU has run
    yet are asked for (``GEMMREG_TRITON_TUNED_UNMEASURED=1``)."""
    import triton

    if not _has_gluon_hopper():
        pytest.skip("this Triton has no Gluon for Hopper")
    monkeypatch.setattr(paths_here, "tma_supported", lambda where: True)
    # Which problems get which configs does not depend on the Triton here: an
    # older one (no Gluon API the kernel is written in) is told it is the oldest that has it.
    monkeypatch.setattr(triton, "__version__", ".".join(map(str, paths_here.GLUON_TRITON)))
    if unmeasured:
        monkeypatch.setenv(tuning_cache.UNMEASURED_ENV, "1")
    else:
        monkeypatch.delenv(tuning_cache.UNMEASURED_ENV, raising=False)
    return _hopper(**changes)


@pytest.mark.parametrize("m, n, k", llm_points(), ids=lambda v: str(v))
def test_the_forms_no_gpu_has_run_are_offered_only_when_asked_for(monkeypatch, m, n, k):
    """By default the tuner sees the Gluon kernel on a transposed-view B only
    where its 128x256 tiles fill the GPU (where it was timed), and no 128x128
    Gluon tile; a row-major B keeps the 128x256 Gluon tiles it had."""
    where = _where_tma_runs(monkeypatch, unmeasured=False)
    weight = gemmreg.Problem(m=m, n=n, k=k, dtype="bf16", layout="transposedB")
    fills = dispatch.family(m, n, k, H200_SMS) == "tiles"
    on_weight = [c for c in paths_here.candidates_for(weight, where) if c.path == "gluon_ws"]
    assert on_weight == (GLUON if fills else [])
    row_major = paths_here.candidates_for(attrs.evolve(weight, layout="rowmajor"), where)
    gluon = [c for c in row_major if c.path == "gluon_ws"]
    assert gluon == (GLUON if m >= 128 else [])
    assert not any(c in configs.UNMEASURED for c in row_major)


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("m, n, k", llm_points(), ids=lambda v: str(v))
def test_llm_projections_get_gluon_where_its_tiles_fit(monkeypatch, m, n, k, dtype):
    """B is a transposed view of the weight at every point (layout
    transposedB): the 128x256 tiles wherever 128 rows fit M, the 128x128
    ones exactly where the wide tiles leave SMs idle and these fill them."""
    where = _where_tma_runs(monkeypatch)
    problem = gemmreg.Problem(m=m, n=n, k=k, dtype=dtype, layout="transposedB")
    found = paths_here.candidates_for(problem, where)
    gluon = [c for c in found if c.path == "gluon_ws"]
    expected = (GLUON if m >= 128 else []) + (GLUON_128 if (m, n, k) in NARROW_POINTS else [])
    assert gluon == expected
    # After the split paths' (the first is what an untuned run takes), ahead of the rest.
    split = [c for c in found if c.path in SPLIT_PATHS]
    assert found[: len(split)] == split and found[len(split) : len(split) + len(gluon)] == gluon
    # The same list for a row-major B: the kernel takes both.
    assert paths_here.candidates_for(attrs.evolve(problem, layout="rowmajor"), where) == found


@pytest.mark.parametrize("m, n, k", sorted(NARROW_POINTS))
def test_no_gluon_for_fp32_a_transposed_a_or_a_gpu_other_than_hopper(monkeypatch, m, n, k):
    for dtype, layout, changes in (
        ("fp32", "transposedB", {}),
        ("bf16", "transposedA", {}),
        ("bf16", "transposedB", {"capability": (10, 0), "arch": "sm100"}),
        ("bf16", "transposedB", {"capability": (8, 0), "arch": "sm80"}),
    ):
        where = _where_tma_runs(monkeypatch, **changes)
        problem = gemmreg.Problem(m=m, n=n, k=k, dtype=dtype, layout=layout)
        found = paths_here.candidates_for(problem, where)
        assert found and not any(c.path == "gluon_ws" for c in found), (dtype, layout, changes)


def test_the_128x128_tiles_need_the_sms_nearly_filled():
    # 128x4096x4096: 32 tiles of 128x128, a quarter of 132 SMs; 0.89 of 36, 0.78 of 41.
    for sms, offered in ((H200_SMS, False), (36, True), (41, False)):
        found = configs.candidates(
            "cuda", "bf16", 128, 4096, 4096, tma=True, gluon=True, num_sms=sms
        )
        assert any(c in GLUON_128 for c in found) == offered, sms
    # A problem whose wide tiles fill the GPU keeps the candidates it had.
    wide = configs.candidates("cuda", "bf16", 8192, 1024, 4096, tma=True, gluon=True)
    assert configs.candidates(
        "cuda", "bf16", 8192, 1024, 4096, tma=True, gluon=True, num_sms=H200_SMS
    ) == wide and not any(c in GLUON_128 for c in wide)


def _weight(n: int, k: int, dtype: torch.dtype = torch.float16) -> torch.Tensor:
    """B = W^T, a transposed view of a row-major N x K weight."""
    return torch.arange(n * k, dtype=torch.float32).to(dtype).view(n, k).T


@pytest.mark.parametrize(
    "case",
    ["transposed A", "fp32", "misaligned C", "weight rows not 16-byte aligned"],
)
def test_operands_the_gluon_kernel_cannot_take_go_to_the_fallback(case):
    m, n, k = 128, 256, 64
    dtype = torch.float32 if case == "fp32" else torch.float16
    a = torch.ones(k, m, dtype=dtype).T if case == "transposed A" else torch.ones(m, k, dtype=dtype)
    b = torch.ones(k, n, dtype=dtype)
    if case == "weight rows not 16-byte aligned":  # the weight's rows 60 elements apart
        k = 60
        a, b = torch.ones(m, k, dtype=dtype), _weight(n, k)
    out = torch.empty(m * n + 1, dtype=dtype)[1:].view(m, n) if case == "misaligned C" else None
    out = out if out is not None else torch.empty(m, n, dtype=dtype)
    calls = []
    launch = launchers.gluon_ws_launcher(GLUON[0], m, n, k, 132, lambda *ops: calls.append(ops))
    launch(a, b, out)
    assert len(calls) == 1 and calls[0][0] is a and calls[0][2] is out


@pytest.mark.parametrize("config", [GLUON[0], GLUON_128[-1]], ids=lambda c: c.name)
@pytest.mark.parametrize("layout", ["rowmajor", "transposedB"])
def test_the_kernel_gets_b_in_the_boxes_its_layout_needs(monkeypatch, config, layout):
    """A transposed B goes to the kernel, described through the N x K weight
    it views in BLOCK_N x BLOCK_K boxes, with ``B_TRANSPOSED``; a row-major
    one in BLOCK_K x BLOCK_N boxes of B itself. A and C in half-tile boxes."""
    gluon_ws = pytest.importorskip(
        "gemmreg_plugins.triton_tuned.gluon_ws",
        reason="this Triton lacks the Gluon API the kernel is written in",
        exc_type=ImportError,
    )

    m, n, k = 256, 512, 256
    bm, bn, bk = config.block_m, config.block_n, config.block_k
    a = torch.ones(m, k, dtype=torch.bfloat16)
    weight = _weight(n, k, torch.bfloat16).T  # N x K, row-major
    b = weight.T if layout == "transposedB" else weight.T.contiguous()
    out = torch.empty(m, n, dtype=torch.bfloat16)
    seen: dict = {}

    class Kernel:
        def __getitem__(self, grid):
            return lambda *args, **kwargs: seen.update(grid=grid, args=args, kwargs=kwargs)

    monkeypatch.setattr(gluon_ws, "gemm_gluon_ws", Kernel())
    launch = launchers.gluon_ws_launcher(config, m, n, k, H200_SMS, lambda *ops: 1 / 0)
    launch(a, b, out)
    a_desc, b_desc, c_desc = seen["args"][:3]
    transposed = layout == "transposedB"
    assert seen["kwargs"]["B_TRANSPOSED"] is transposed
    assert seen["kwargs"]["STAGES"] == config.num_stages and seen["kwargs"]["num_warps"] == 4
    assert seen["grid"] == ((m // bm) * (n // bn),)  # fewer tiles than SMs: one each
    assert list(a_desc.block_shape) == [bm // 2, bk] and a_desc.base is a
    assert list(c_desc.block_shape) == [bm // 2, bn] and c_desc.base is out
    if transposed:  # the weight itself, N x K, K contiguous
        assert list(b_desc.block_shape) == [bn, bk]
        assert b_desc.base.data_ptr() == weight.data_ptr() and b_desc.base.stride() == (k, 1)
        assert list(b_desc.shape) == [n, k]
    else:
        assert list(b_desc.block_shape) == [bk, bn] and b_desc.base is b
    assert b_desc.layout == gluon_ws.gl.NVMMASharedLayout.get_default_for(
        list(b_desc.block_shape), gluon_ws.gl.bfloat16
    )


def test_the_gluon_probe_launches_the_kernel_with_its_current_arguments(monkeypatch):
    """scripts/probes/gluon_probe.py calls the kernel and its descriptors
    itself, with no fallback: each variant this kernel has (no ping-pong
    form) must bind to the kernel's own parameters, B row-major in
    BLOCK_K x BLOCK_N boxes. Imported only (its run is the GPU's)."""
    import importlib.util
    from pathlib import Path

    gluon_ws = pytest.importorskip(
        "gemmreg_plugins.triton_tuned.gluon_ws",
        reason="this Triton lacks the Gluon API the kernel is written in",
        exc_type=ImportError,
    )
    path = Path(__file__).resolve().parents[1] / "scripts/probes/gluon_probe.py"
    spec = importlib.util.spec_from_file_location("gluon_probe", path)
    assert spec is not None and spec.loader is not None
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    variants = probe.variants_here()
    assert variants and not any(v[5] for v in variants)  # the cooperative forms
    kernel_parameters = gluon_ws.gemm_gluon_ws.signature
    seen: dict = {}

    class Kernel:
        def __getitem__(self, grid):
            return lambda *args, **kwargs: seen.update(grid=grid, args=args, kwargs=kwargs)

    monkeypatch.setattr(gluon_ws, "gemm_gluon_ws", Kernel())
    m, n, k = 512, 512, 128
    a, b = torch.ones(m, k, dtype=torch.bfloat16), torch.ones(k, n, dtype=torch.bfloat16)
    out = torch.empty(m, n, dtype=torch.bfloat16)
    for bm, bn, bk, stages, group_m, _ in variants:
        seen.clear()
        probe.gluon_launch((bm, bn, bk, stages, group_m, False), m, n, k, H200_SMS)(a, b, out)
        launch_options = {"num_warps"}  # Triton's, beside the kernel's own
        kwargs = {key: v for key, v in seen["kwargs"].items() if key not in launch_options}
        bound = kernel_parameters.bind(*seen["args"], **kwargs).arguments
        assert bound["B_TRANSPOSED"] is False and bound["STAGES"] == stages
        assert (bound["m"], bound["n"], bound["k"], bound["GROUP_M"]) == (m, n, k, group_m)
        assert list(bound["a_desc"].block_shape) == [bm // 2, bk]
        assert list(bound["b_desc"].block_shape) == [bk, bn] and bound["b_desc"].base is b
        assert list(bound["c_desc"].block_shape) == [bm // 2, bn]


def test_a_named_config_runs_untuned_wherever_its_path_is_offered(monkeypatch):
    """``GEMMREG_TRITON_TUNED_CONFIG`` lets ``check`` run a form the tuner
    would offer at a few shapes only (the 128x128 Gluon tiles) over the whole
    matrix: taken as named where its path is offered, nothing timed; the usual
    choice where it is not (fp32 has no Gluon path); a bad name is an error
    that names the variable."""
    import gemmreg_plugins.triton_tuned as plugin
    from gemmreg_plugins.triton_tuned import device_trial

    where = _where_tma_runs(monkeypatch)

    def no_trial(*args: object, **kwargs: object) -> None:
        raise AssertionError("a named config is never timed")

    monkeypatch.setattr(device_trial, "device_trial", no_trial)
    monkeypatch.setenv(tuning_cache.TUNE_ENV, "0")
    named = GLUON_128[0]
    monkeypatch.setenv(tuning_cache.CONFIG_ENV, named.name)
    small = gemmreg.Problem(m=200, n=136, k=72, dtype="bf16", layout="rowmajor")
    assert named not in paths_here.candidates_for(small, where)  # the tuner would never offer it
    choice, _, sms = plugin.choose(small, where)
    assert (choice.best, choice.origin, sms) == (named, "forced", H200_SMS)
    assert choice.fallback.path == "tiled"
    fp32 = attrs.evolve(small, dtype="fp32")
    assert plugin.choose(fp32, where)[0].origin != "forced"
    monkeypatch.setenv(tuning_cache.CONFIG_ENV, "gluon_ws:big")
    with pytest.raises(ValueError, match=tuning_cache.CONFIG_ENV):
        plugin.choose(small, where)


@pytest.mark.parametrize("b_t", [False, True], ids=["B row-major", "B transposed"])
def test_a_launch_describes_its_operands_in_layouts_made_once(b_t):
    """The host-side descriptors carry Gluon's default layout for each box
    and dtype, made on the first launch and shared by every later one (each
    took about 5 us of Python a launch, three a launch)."""
    if paths_here.triton_version() < paths_here.GLUON_TRITON:
        pytest.skip(f"the Gluon path is written for Triton >= {paths_here.GLUON_TRITON}")
    from gemmreg_plugins.triton_tuned import gluon_ws
    from triton.experimental.gluon import language as gl

    m, n, k = 256, 384, 192
    a = torch.empty(m, k, dtype=torch.bfloat16)
    b = (
        torch.empty(n, k, dtype=torch.bfloat16).T
        if b_t
        else torch.empty(k, n, dtype=torch.bfloat16)
    )
    c = torch.empty(m, n, dtype=torch.bfloat16)
    first = gluon_ws.descriptors(a, b, c, 128, 128, 64, b_t)
    again = gluon_ws.descriptors(a, b, c, 128, 128, 64, b_t)
    for made, reused in zip(first, again, strict=True):
        assert made.layout == gl.NVMMASharedLayout.get_default_for(made.block_shape, gl.bfloat16)
        assert reused.layout is made.layout
    assert [d.block_shape for d in first] == [[64, 64], [128, 64] if b_t else [64, 128], [64, 128]]
