"""The kernel compiles natively for an H200 (sm_90) with no GPU here: Triton's
compiler and ptxas run on the CPU. The interpreter tests check the
arithmetic; this checks what only native code has: the main loop is
software-pipelined, the arrival count is one acquire-release atomic behind a
CTA barrier, and the partials are read back from L2 (``ld.global.cg``).

The operands are declared as Triton's JIT would specialise them for the
target shapes (16-byte aligned, every stride but the unit ones a multiple of
16); without that, the loads cannot be asynchronous copies.
"""

from __future__ import annotations

import pytest
from gemmreg.testing import native_compile

SCRIPT = """
import json, os, re
from gemmreg.testing import compile_natively, ptxas_report  # with no GPU, turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
from gemmreg_splitk import heuristics, kernel, tuned
from gemmreg_splitk import scatter as scatter_mod

fn = kernel.splitk_kernel()
POINTERS = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "ws_ptr": "*fp32", "count_ptr": "*i32"}
UNIT = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1}
SWAPPED = {"stride_am": 1, "stride_bk": 1, "stride_cm": 1}  # B^T and A^T of row-major B, A
out = {}
MODES = ("deterministic", "atomic", "tree", "skinny", "skinny_swapped", "tma", "tma_swapped",
         "tree_fanin4_swapped", "scatter_spin", "scatter")
for mode in MODES:
    atomic = mode not in ("deterministic", "tree", "tma", "tree_fanin4_swapped", "scatter_spin",
                          "scatter")
    tree, swap, tma = mode.startswith("tree"), "swapped" in mode, mode.startswith("tma")
    m, n, k = (32, 8192, 8192) if mode.startswith("skinny") or swap else (64, 4096, 16384)
    if mode == "tree_fanin4_swapped" or mode.startswith("scatter"):
        m, n, k = 128, 128, 32768
    c = heuristics.choose(m, n, k, heuristics.gpu(132), atomic=atomic)
    if mode.startswith("skinny"):  # a 32x128 tile, whatever tuned.TABLE holds for the class
        c = heuristics._finish(32, 128, 64, 4, k, 2, swap_ab=swap)
    if tma:  # a streaming config tune_grid offers the flat classes (5 stages, <= 200 KiB)
        c = heuristics._finish(32 if swap else 64, 256, 64, 2 if swap else 4, k, 2, num_warps=8,
                               num_stages=5, swap_ab=swap, tma=True)
    if mode == "tree":  # a binary tree of split 4 (2 levels), whatever tuned.TABLE holds
        c = heuristics._finish(64, 64, 64, 4, k, 2, reduce="tree")
    if mode == "tree_fanin4_swapped":
        c = heuristics._finish(32, 64, 128, 32, k, 2, swap_ab=True, reduce="tree", fanin=4)
    scatter, spin = mode.startswith("scatter"), mode == "scatter_spin"
    if scatter:  # 8 tiles x split 16: 128 programs, all resident on 132 SMs when it spins
        c = heuristics._finish(32, 64, 128, 16, k, 2, swap_ab=swap, reduce="scatter")
    bm, bn = (c.block_n, c.block_m) if swap else (c.block_m, c.block_n)
    constexprs = dict(SWAPPED if swap else UNIT, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=c.block_k,
                      SPLIT_K=c.split_k, ATOMIC=atomic, EVEN_K=k % c.k_per_split == 0,
                      REDUCE_CHUNK=c.reduce_chunk, REVERSE_SPLITS=False, PRECISION="ieee",
                      TREE=tree, LEVELS=tuned.tree_levels(c.split_k, c.fanin) if tree else 0,
                      FANIN=c.fanin if tree else 2,
                      TMA=tma, A_T=tma and swap, B_T=tma and swap,
                      SCATTER=scatter, SPIN=spin, SLOTS=scatter_mod.slots(c.split_k),
                      PER=scatter_mod.share_size(bm, bn, c.split_k))
    types = dict(POINTERS, count_ptr="*i64") if scatter else dict(POINTERS)
    if tma:  # descriptors of row-major A and B; swapped, B^T and A^T through their transposes
        box_a = (c.block_k, bm) if swap else (bm, c.block_k)
        box_b = (bn, c.block_k) if swap else (c.block_k, bn)
        types.update(a_ptr=f"tensordesc<bf16[{box_a[0]}, {box_a[1]}]>",
                     b_ptr=f"tensordesc<bf16[{box_b[0]}, {box_b[1]}]>")
    compiled = compile_natively(
        fn, types, constexprs,
        aligned=[n for n in fn.arg_names if not types.get(n, "").startswith("tensordesc")],
        num_warps=c.num_warps, num_stages=c.num_stages, launch_cooperative_grid=spin,
    )
    ptx = compiled.asm["ptx"]
    out[mode] = {
        "levels": constexprs["LEVELS"],
        "split": c.split_k,
        "fanin": c.fanin,
        "shared": compiled.metadata.shared,
        "stages": c.num_stages,
        "acq_rel_adds": len(re.findall(r"atom\\.global\\.gpu\\.acq_rel\\.add", ptx)),
        # Triton lowers an acquire atomic_add of 0 to an acquire load
        "acquire_reads": len(re.findall(r"(atom|ld)\\.global\\.gpu\\.acquire", ptx)),
        "release_adds": len(re.findall(r"atom\\.global\\.gpu\\.release\\.add", ptx)),
        "cooperative": bool(compiled.metadata.launch_cooperative_grid),
        "cg_loads": len(re.findall(r"ld\\.global\\.cg", ptx)),
        "exchanges": len(re.findall(r"atom\\.global\\S*\\.exch", ptx)),
        "wgmma": len(re.findall(r"wgmma\\.mma_async", ptx)),
        "mma_sync": len(re.findall(r"mma\\.sync", ptx)),
        "barriers": len(re.findall(r"bar\\.sync", ptx)),
        "async_copies": compiled.asm["ttgir"].count("async_copy_global_to_local"),
        "tma_loads": len(re.findall(r"cp\\.async\\.bulk\\.tensor", ptx)),
        "cp_async": len(re.findall(r"cp\\.async\\.c[ag]", ptx)),
        "stage_bytes": (c.block_m + c.block_n) * c.block_k * 2,
        "ptxas": ptxas_report(ptx),
    }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def compiled() -> dict:
    return native_compile(SCRIPT)


@pytest.mark.parametrize(
    "mode",
    ["deterministic", "atomic", "tree", "skinny_swapped", "tree_fanin4_swapped", "scatter_spin"],
)
def test_the_main_loop_is_pipelined(compiled, mode):
    got = compiled[mode]
    assert got["async_copies"] > 0
    assert got["shared"] >= (got["stages"] - 1) * got["stage_bytes"]


@pytest.mark.parametrize("mode", ["deterministic", "atomic"])
def test_the_arrival_is_one_acq_rel_atomic_behind_a_barrier_and_reads_bypass_l1(compiled, mode):
    got = compiled[mode]
    assert got["acq_rel_adds"] == 1
    assert got["barriers"] >= 2
    if mode == "deterministic":
        assert got["cg_loads"] > 0  # the slots are read from L2
    else:
        # the accumulator is read (and zeroed) by an atomic exchange: plain
        # loads of it came back short on the H200
        assert got["exchanges"] > 0


def test_the_tree_reduction_counts_once_per_level_and_reads_from_l2(compiled):
    """One acquire-release arrival per tree level (unrolled), the sibling's sum
    read with ``.cg``, and no serial reduction compiled in beside it."""
    got = compiled["tree"]
    # 64x4096x16384 split 4 ways: 2 levels
    assert got["split"] == 4 and got["levels"] == (got["split"] - 1).bit_length() == 2
    assert got["acq_rel_adds"] == got["levels"]
    assert got["cg_loads"] > 0
    assert got["barriers"] >= 2 * got["levels"]


def test_a_swapped_launch_turns_a_skinny_tile_into_wgmma(compiled):
    """32x8192: a 32-row tile is below wgmma's 64, so Triton falls back to
    mma.sync; launched as C^T = B^T A^T the 128-wide N tile is the MMA's M."""
    assert compiled["skinny"]["wgmma"] == 0 and compiled["skinny"]["mma_sync"] > 0
    assert compiled["skinny_swapped"]["wgmma"] > 0 and compiled["skinny_swapped"]["mma_sync"] == 0


@pytest.mark.parametrize("mode", ["tma", "tma_swapped"])
def test_the_tma_variant_streams_through_tensor_copies_into_wgmma(compiled, mode):
    """``tma=1``: A and B arrive by ``cp.async.bulk.tensor`` (no per-thread
    ``cp.async``), pipelined over the stages, into wgmma; swapped, both
    operands through their transposed descriptors. The arrival is unchanged."""
    got = compiled[mode]
    assert got["tma_loads"] > 0 and got["cp_async"] == 0
    assert got["shared"] >= (got["stages"] - 1) * got["stage_bytes"]
    assert got["wgmma"] > 0 and got["mma_sync"] == 0
    assert got["acq_rel_adds"] == 1 and got["barriers"] >= 2


def test_ptxas_serialises_no_wgmma_and_spills_nothing(compiled):
    """What ptxas reports of each form (``gemmreg.testing.ptxas_report``): a
    serialised ``wgmma`` compiles and computes right, and runs far slower."""
    for mode, got in compiled.items():
        assert not got["ptxas"]["serialized"], (mode, got["ptxas"]["performance"])
        assert got["ptxas"]["spill_bytes"] == 0, mode


def test_the_pointer_path_still_copies_asynchronously_without_tma(compiled):
    assert compiled["deterministic"]["cp_async"] > 0
    assert compiled["deterministic"]["tma_loads"] == 0


def test_a_fan_in_4_tree_counts_once_per_level_and_reads_its_group_from_l2(compiled):
    """Split 32 at fan-in 4: 3 levels (4, 4, 2 runs per group), so 3
    acquire-release arrivals where the binary tree makes 5, each behind a CTA
    barrier, and the members' sums read with ``.cg``; swapped, into wgmma."""
    got = compiled["tree_fanin4_swapped"]
    assert (got["split"], got["fanin"], got["levels"]) == (32, 4, 3)
    assert got["acq_rel_adds"] == got["levels"]
    assert got["barriers"] >= 2 * got["levels"]
    assert got["cg_loads"] >= got["levels"] * (got["fanin"] - 1)
    assert got["wgmma"] > 0 and got["mma_sync"] == 0


def test_the_reduce_scatter_spins_only_when_launched_cooperatively(compiled):
    """Spinning: one acquire-release arrival, then the spin's acquire reads of
    the same count (``ld.acquire``: Triton lowers an acquire ``atomic_add`` of
    0 to a load), no release of anything else, the shares read from L2, and the kernel
    flagged for a cooperative launch (every program resident, or the driver
    refuses). Not spinning: no acquire reads, an ordinary launch."""
    spin, plain = compiled["scatter_spin"], compiled["scatter"]
    assert spin["acq_rel_adds"] == 1 and spin["release_adds"] == 0
    assert spin["acquire_reads"] >= 1
    assert spin["cg_loads"] > 0 and spin["cooperative"]
    assert plain["acq_rel_adds"] == 1 and plain["release_adds"] == plain["acquire_reads"] == 0
    assert plain["cg_loads"] > 0 and not plain["cooperative"]
