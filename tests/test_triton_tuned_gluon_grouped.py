"""triton_tuned's grouped path warp-specialised in Gluon (``GroupedConfig.gluon``,
:mod:`gemmreg_plugins.triton_tuned.gluon_grouped`), on the CPU: when the rule
takes it, which weights one descriptor may read as a stack, that other
operands go to the TMA form, and what it compiles to for an H200 (sm_90).

Its arithmetic is checked on a GPU only (Gluon has no interpreter): by the
config probe against the ``torch.mm`` loop and by ``gemmreg check
triton_tuned --grouped`` with ``GEMMREG_TRITON_TUNED_UNMEASURED=1``, which
makes it the rule where members fill 128-row tiles (the matrix's wide
grouping)."""

from __future__ import annotations

import attrs
import gemmreg
import pytest
import torch
from gemmreg.testing import native_compile
from gemmreg_plugins.triton_tuned import grouped, grouped_tma, paths_here
from gluon_census import CENSUS

PREFILL = (0, 17, 300, 1024, 2048, 4096, 512, 195)
"""``examples/shapes/moe-experts.yaml``'s prefill routing."""
DECODE = (0, 1, 3, 0, 9, 2, 12, 5)


def _hopper(**changes: object) -> gemmreg.Environment:
    fields = dict(
        backend="cuda",
        device="cpu",  # the tile table's tensor; nothing launches
        capability=(9, 0),
        arch="sm90",
        multiprocessors=132,
        triton_interpreted=False,
    )
    return attrs.evolve(gemmreg.where(), **{**fields, **changes})


def test_the_rule_takes_the_gluon_form_only_where_offered_and_members_fill_128_rows():
    wide = grouped.config_for(PREFILL, 14336, "bf16", tma=True, gluon=True)
    assert wide.name == "128x256x64-w4-s3-tma-gluon"
    narrow = grouped.config_for((130, 0, 65, 1, 200), 48, "fp16", tma=True, gluon=True)
    assert narrow.name == "128x128x64-w4-s4-tma-gluon"
    assert not grouped.config_for(DECODE, 14336, "bf16", tma=True, gluon=True).gluon
    assert not grouped.config_for(PREFILL, 14336, "bf16", tma=True).gluon  # not offered
    assert not grouped.config_for(PREFILL, 14336, "bf16", gluon=True).gluon  # no TMA here
    assert not grouped.config_for(PREFILL, 14336, "fp32", tma=True, gluon=True).gluon


@pytest.mark.parametrize(
    "change",
    [
        dict(block_m=64),
        dict(num_warps=8),
        dict(epilogue_parts=2),
        dict(shared=True),
        dict(tma=False),
    ],
    ids=["64-rows", "8-warps", "split-store", "shared", "pointer"],
)
def test_a_gluon_config_the_kernel_cannot_take_is_refused(change):
    config = grouped.config_for(PREFILL, 14336, "bf16", tma=True, gluon=True)
    with pytest.raises(ValueError, match="Gluon form"):
        attrs.evolve(config, **change)


def test_the_gluon_form_is_offered_on_hopper_only_when_unmeasured_forms_are_asked_for(
    monkeypatch,
):
    problem = gemmreg.grouped_problem(PREFILL, 14336, 4096, dtype="bf16", layout="transposedB")
    monkeypatch.delenv("GEMMREG_TRITON_TUNED_UNMEASURED", raising=False)
    assert not grouped.gluon_here(problem, _hopper())
    monkeypatch.setenv("GEMMREG_TRITON_TUNED_UNMEASURED", "1")
    assert grouped.gluon_here(problem, _hopper()) == paths_here.gluon_supported(_hopper())
    assert not grouped.gluon_here(problem, _hopper(capability=(10, 0), arch="sm100"))
    assert not grouped.gluon_here(problem, _hopper(triton_interpreted=True))
    fp32 = gemmreg.grouped_problem(PREFILL, 14336, 4096, dtype="fp32", layout="transposedB")
    assert not grouped.gluon_here(fp32, _hopper())


def test_one_descriptor_reads_a_stack_of_weights_only_where_no_step_leaves_its_member():
    """A transposed view of N x K weights back to back is read across K whole
    (TMA zero-fills K's tail at the descriptor's edge); row-major K x N
    weights meet along K, so only a K of whole 64-deep steps keeps a step
    inside its member."""
    linear = torch.empty(3, 40, 80, device="meta").transpose(1, 2)  # 3 weights, N x K each
    assert grouped_tma.stacked_b(linear, 64) is True
    assert grouped_tma.stacked_b(torch.empty(3, 128, 48, device="meta"), 64) is False
    assert grouped_tma.stacked_b(torch.empty(3, 80, 48, device="meta"), 64) is None  # K tail
    gaps = torch.empty(3, 136, 48, device="meta")[:, :128]  # rows between the members
    assert grouped_tma.b_transposed(gaps) is False  # TMA takes it, member by member
    assert grouped_tma.stacked_b(gaps, 64) is None
    assert grouped_tma.stacked_b(torch.empty(3, 128, 47, device="meta"), 64) is None
    huge = torch.empty(2**15, 2**16, 8, device="meta")  # 2^31 rows of K
    assert grouped_tma.stacked_b(huge, 64) is None


@pytest.mark.skipif(not paths_here.gluon_supported(_hopper()), reason="a Triton without this Gluon")
@pytest.mark.parametrize("transposed", [True, False], ids=["stacked-BT", "rowmajor"])
def test_the_descriptors_describe_every_weight_as_one_stack_without_a_copy(transposed):
    from gemmreg_plugins.triton_tuned import gluon_grouped

    groups, n, k, rows = 3, 48, 128, 96
    weights = torch.empty(groups, n, k, dtype=torch.bfloat16)
    b = weights.transpose(1, 2) if transposed else torch.empty(groups, k, n, dtype=torch.bfloat16)
    a = torch.empty(rows, k, dtype=torch.bfloat16)
    c = torch.empty(rows, n, dtype=torch.bfloat16)
    a_desc, b_desc, c_desc = gluon_grouped.descriptors(a, b, c, 128, 128, 64, transposed)
    assert list(a_desc.shape) == [rows, k] and list(c_desc.shape) == [rows, n]
    assert list(a_desc.block_shape) == [64, 64] and list(c_desc.block_shape) == [64, 128]
    stack = [groups * n, k] if transposed else [groups * k, n]
    assert list(b_desc.shape) == stack
    assert b_desc.base.data_ptr() == b.data_ptr()  # the weights as they lie
    assert list(b_desc.block_shape) == ([128, 64] if transposed else [64, 128])


@pytest.mark.skipif(not paths_here.gluon_supported(_hopper()), reason="a Triton without this Gluon")
def test_a_b_that_is_not_one_stack_goes_to_the_tma_form(monkeypatch):
    monkeypatch.setenv("GEMMREG_TRITON_TUNED_UNMEASURED", "1")
    problem = gemmreg.grouped_problem((130, 0, 65), 48, 80, dtype="bf16", layout="rowmajor")
    config = grouped.config_for(problem.groups, 48, "bf16", tma=True, gluon=True)
    assert config.gluon
    table, entries, grid = grouped._table_and_grid(problem, _hopper(), config, {})
    taken: list[str] = []

    def fallback(a, b, out, offsets):
        taken.append("tma form")

    launch = grouped_tma.gluon_launcher(config, table, entries, 48, 80, grid, fallback)
    a = torch.zeros(195, 80, dtype=torch.bfloat16)
    b = torch.zeros(3, 80, 48, dtype=torch.bfloat16)  # row-major, K 80: a step would cross
    launch(a, b, torch.empty(195, 48, dtype=torch.bfloat16), None)
    assert taken == ["tma form"]


def test_forms_of_one_block_m_share_one_tile_table_and_grid_by_their_own_block_n():
    groups = (0, 1, 100, 9, 30)  # one member past 64 rows: two 64-row tiles, one of 128
    problem = gemmreg.grouped_problem(groups, 1024, 4096, dtype="bf16", layout="transposedB")
    config = grouped.config_for(PREFILL, 14336, "bf16", tma=True)  # 128-row tiles
    made: dict = {}  # fewer tiles than SMs: the grid is the tiles
    table, entries, grid = grouped._table_and_grid(problem, _hopper(), config, made)
    wider = attrs.evolve(config, block_n=config.block_n * 2)
    same, same_entries, wider_grid = grouped._table_and_grid(problem, _hopper(), wider, made)
    assert same is table and same_entries == entries  # taken, not built and copied again
    assert wider_grid[0] * 2 == grid[0]  # half the tiles across N: the grid is the config's own
    assert table.tolist() == grouped.tile_table(groups, config.block_m)
    shorter = attrs.evolve(config, block_m=config.block_m // 2)
    other, other_entries, _ = grouped._table_and_grid(problem, _hopper(), shorter, made)
    assert other is not table and other.tolist() == grouped.tile_table(groups, shorter.block_m)
    assert other_entries == entries + 1
    assert sorted(made) == [shorter.block_m, config.block_m]


SCRIPT = (
    CENSUS
    + """
import json, os
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
import torch
from gemmreg.testing import compile_natively
from gemmreg_plugins.triton_tuned import gluon_grouped, gluon_ws, grouped

prefill = (0, 17, 300, 1024, 2048, 4096, 512, 195)
configs = [grouped.config_for(prefill, n, "bf16", tma=True, gluon=True) for n in (14336, 128)]
groups, n, k, m = 8, 2048, 1024, 4096
out = {}
for config in configs:
    for dt, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
        for b_t in (False, True):
            a = torch.empty(m, k, dtype=dtype)
            b = (torch.empty(groups, n, k, dtype=dtype).transpose(1, 2) if b_t
                 else torch.empty(groups, k, n, dtype=dtype))
            c = torch.empty(m, n, dtype=dtype)
            descs = gluon_grouped.descriptors(a, b, c, config.block_m, config.block_n,
                                              config.block_k, b_t)
            types = {
                name: f"tensordesc<{dt}[{d.block_shape[0]}, {d.block_shape[1]}],{d.layout!r}>"
                for name, d in zip(("a_desc", "b_desc", "c_desc"), descs)
            }
            types.update(c_ptr=f"*{dt}", table_ptr="*i32")
            constexprs = dict(GROUP_M=config.group_m, PROGRAMS=132, STAGES=config.num_stages,
                              B_TRANSPOSED=b_t)
            compiled = compile_natively(gluon_grouped.gemm_gluon_grouped, types, constexprs,
                                        aligned=("n", "k", "stride_cm", "c_ptr", "table_ptr"),
                                        num_warps=config.num_warps)
            out[f"{config.name} {dt} {'b_t' if b_t else 'b'}"] = {
                "block_n": config.block_n, **census(compiled)
            }
out["regs"] = [gluon_ws.LOADER_REGS.value, gluon_ws.CONSUMER_REGS.value]
print(json.dumps(out))
"""
)
SHARED_MEMORY = 227 * 1024
"""An H200 SM's shared memory for one CTA."""


def test_the_rules_gluon_forms_compile_to_three_warpgroups_storing_whole_tiles_by_tma():
    """Both of the rule's tiles, fp16 and bf16, B a stack of weights either
    way round: the dense Gluon kernel's warpgroups and registers, nothing
    spilled, every ``wgmma`` pipelined, whole tiles stored by TMA and a
    member's last tile by masked stores from the registers."""
    if paths_here.triton_version() < paths_here.GLUON_TRITON:
        pytest.skip(f"the Gluon path is written for Triton >= {paths_here.GLUON_TRITON}")
    compiled = native_compile(SCRIPT)
    loader, consumer = compiled.pop("regs")
    assert len(compiled) == 2 * 2 * 2
    for name, found in compiled.items():
        assert found["warps"] == 12, name
        assert 0 < found["shared"] <= SHARED_MEMORY, name
        assert ["dec", str(loader)] in found["setmaxnreg"], name
        assert ["inc", str(consumer)] in found["setmaxnreg"], name
        assert found["tma_loads"] > 0 and found["tma_stores"] > 0, name
        assert found["masked_stores"] > 0, name  # the members' last tiles
        assert found["local"] == found["stack"] == found["local_bytes"] == 0, name
        assert not found["serialized"], name
        trans_b = {tuple(w[5:]) for w in found["wgmma"]}
        assert trans_b == {("0",) if name.endswith("b_t") else ("1",)}, name  # K-major weights
        assert {w[0] for w in found["wgmma"]} == {f"m64n{found['block_n']}k16"}, name
