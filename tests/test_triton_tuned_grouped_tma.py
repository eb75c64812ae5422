"""triton_tuned's grouped path in its TMA form, on the CPU: where it is chosen
(Hopper, 16-bit operands whose strides TMA takes), that it passes the grouped
matrix under the interpreter (device-made descriptors run there too) and
falls back to the pointer kernel for the layouts it refuses, that neither
form writes a row outside its tile's member, and that every config the
rule chooses compiles for an H200 (sm_90): TMA copies on ``wgmma``,
pipelined within shared memory, nothing spilled."""

from __future__ import annotations

import attrs
import gemmreg
import pytest
import torch
from gemmreg.checking import matrix
from gemmreg.checking.output_check import check_case
from gemmreg.testing import native_compile
from gemmreg_plugins import triton_tuned
from gemmreg_plugins.triton_tuned import grouped, grouped_tma, paths_here

SMALL_TMA = grouped.GroupedConfig(
    block_m=16, block_n=32, block_k=32, num_warps=4, num_stages=1, tma=True, epilogue_parts=2
)
"""The TMA form in tiles the interpreter runs quickly, C stored in halves;
K tails at the matrix's aligned k (80)."""


def _spec(config: grouped.GroupedConfig) -> gemmreg.KernelSpec:
    def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
        return grouped.grouped_launcher(problem, gemmreg.where(), "ieee", config=config)

    return gemmreg.KernelSpec(
        name="triton_tuned",
        summary="the grouped path's TMA form under the interpreter",
        prepare=prepare,
        capabilities=triton_tuned.capabilities_for("cpu"),
        tolerances=triton_tuned.tolerances_for("cpu"),
    )


def _hopper(**changes: object) -> gemmreg.Environment:
    fields = dict(
        backend="cuda",
        device="cuda",
        capability=(9, 0),
        arch="sm90",
        multiprocessors=132,
        triton_interpreted=False,
    )
    return attrs.evolve(gemmreg.where(), **{**fields, **changes})


def test_the_tma_form_runs_on_hopper_for_16_bit_operands_whose_strides_tma_takes():
    def problem(dtype: str = "bf16", layout: str = "transposedB", k: int = 4096):
        return gemmreg.grouped_problem((0, 17, 300), 14336, k, dtype=dtype, layout=layout)

    assert paths_here.tma_supported(_hopper())  # this Triton makes descriptors
    assert grouped.tma_here(problem(), _hopper())
    assert grouped.tma_here(problem("fp16", "rowmajor"), _hopper())
    assert not grouped.tma_here(problem("fp32"), _hopper())  # TF32 keeps the pointer kernel
    assert not grouped.tma_here(problem(layout="transposedA"), _hopper())
    assert not grouped.tma_here(problem(layout="padded"), _hopper())  # rows of odd bytes
    assert not grouped.tma_here(problem(k=4095), _hopper())
    assert not grouped.tma_here(problem(), _hopper(capability=(8, 0), arch="sm80"))
    assert not grouped.tma_here(problem(), _hopper(triton_interpreted=True))


@pytest.mark.parametrize("shared", [False, True], ids=["per-tile", "shared"])
def test_the_tma_form_passes_the_grouped_matrix_under_the_interpreter(shared):
    """Both forms of descriptor: made per tile, or A's and C's shared by
    every tile (a member's last partial tile bounded by its own C)."""
    cases = matrix.build("full", False, ["fp32", "fp16"], batches=(), grouped=True)
    taken = {c.problem.layout for c in cases if grouped_tma.takes(c.problem)}
    assert taken == {"rowmajor", "transposedB"}  # the rest run the pointer fallback
    spec = _spec(attrs.evolve(SMALL_TMA, shared=shared))
    failed = [
        (c.problem.label, r.reason)
        for c in cases
        for r in [check_case(spec, c.problem, c.seed, "normal")]
        if not r.passed
    ]
    assert not failed, failed


@pytest.mark.parametrize("config", [grouped.INTERPRETED, SMALL_TMA, attrs.evolve(SMALL_TMA, epilogue_parts=1), attrs.evolve(SMALL_TMA, shared=True)])  # fmt: skip
@pytest.mark.parametrize("groups", [(17,), (5, 17)])
def test_no_form_writes_a_row_past_its_tiles_member(config, groups):
    """A and C handed with rows past the last member's (another member's,
    as far as the kernel can tell): they stay as they were, though the last
    tile's 16 rows reach into them."""
    rows, n, k = sum(groups), 48, 80
    problem = gemmreg.grouped_problem(groups, n, k, dtype="fp32")
    launch = grouped.grouped_launcher(problem, gemmreg.where(), "ieee", config=config)
    a, b = torch.randn(rows + 20, k), torch.randn(len(groups), k, n)
    out = torch.full((rows + 20, n), float("nan"))
    launch(a, b, out, None)
    start = 0
    for member, size in enumerate(groups):
        want = a[start : start + size] @ b[member]
        assert torch.allclose(out[start : start + size], want, atol=1e-4, rtol=1e-4)
        start += size
    assert out[rows:].isnan().all()


def test_shared_descriptors_are_refused_in_a_flattened_loop():
    """Triton fails to flatten a loop that makes a descriptor in a branch."""
    with pytest.raises(ValueError, match="flattened"):
        attrs.evolve(SMALL_TMA, shared=True, flatten=True)


def test_one_descriptor_reads_b_only_where_it_is_a_stack_of_transposed_weights():
    stacked = torch.empty(3, 40, 80, device="meta").transpose(1, 2)  # 3 weights, N x K each
    assert grouped_tma.whole_b_rows(stacked) == 3 * 40
    assert grouped_tma.whole_b_rows(torch.empty(3, 80, 40, device="meta")) is None  # row-major
    gaps = torch.empty(3, 48, 80, device="meta")[:, :40].transpose(1, 2)
    assert grouped_tma.b_transposed(gaps) is True  # TMA takes it, member by member
    assert grouped_tma.whole_b_rows(gaps) is None
    padded = torch.empty(3, 40, 96, device="meta")[:, :, :80].transpose(1, 2)
    assert grouped_tma.whole_b_rows(padded) == 3 * 40  # rows of 96 elements, 80 read
    huge = torch.empty(2**17, 2**14, 16, device="meta").transpose(1, 2)  # 2^31 rows
    assert grouped_tma.whole_b_rows(huge) is None


@pytest.mark.parametrize("transposed", [True, False], ids=["stacked-BT", "rowmajor"])
def test_a_tile_past_its_members_columns_never_stores_the_next_members_product(transposed):
    """n = 48 in 32-column tiles: each member's second column tile reads 16
    rows of the next member's weight through the shared descriptor of every
    weight. Those rows are NaN; the product columns they make lie past n and
    C's descriptor never stores them, so the members before are exact. (n
    a multiple of 16 elements: an older interpreter checks strides so.)"""
    config = attrs.evolve(SMALL_TMA, shared=True)
    groups, n, k = (5, 17, 9), 48, 80
    problem = gemmreg.grouped_problem(groups, n, k, dtype="fp32")
    launch = grouped.grouped_launcher(problem, gemmreg.where(), "ieee", config=config)
    generator = torch.Generator().manual_seed(7)
    a = torch.randn(sum(groups), k, generator=generator)
    weights = torch.randn(len(groups), n, k, generator=generator)
    weights[2] = float("nan")
    b = weights.transpose(1, 2) if transposed else weights.transpose(1, 2).contiguous()
    assert (grouped_tma.whole_b_rows(b) is not None) == transposed
    out = torch.zeros(sum(groups), n)
    launch(a, b, out, None)
    first = groups[0] + groups[1]
    want = torch.cat([a[: groups[0]] @ b[0], a[groups[0] : first] @ b[1]])
    assert torch.allclose(out[:first], want, atol=1e-4, rtol=1e-4)
    assert out[first:].isnan().all()


SCRIPT = """
import itertools, json, re
import attrs
import gemmreg
import os
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
from gemmreg.testing import compile_natively, ptxas_report
from gemmreg_plugins.triton_tuned import grouped, grouped_tma_kernel

fn = grouped_tma_kernel.grouped_tma_kernel()
shapes = [((40, 0, 50), 4096), ((0, 17, 300, 1024, 2048, 4096, 512, 195), 14336),
          ((0, 1, 3, 0, 9, 2, 12, 5), 14336),
          ((0, 17, 300, 1024, 2048, 4096, 512, 195), 128), ((3000, 2000), 4096)]
out = {}
for dtype, element, size in (("bf16", "*bf16", 2), ("fp16", "*fp16", 2)):
    for groups, n in shapes:
        rule = grouped.config_for(groups, n, dtype, tma=True)
        # the probe's flattened twins of the 128-row tiles too (one descriptor a tile: a
        # flattened loop cannot share them), and the shared-descriptor form
        alone = attrs.evolve(rule, shared=False)
        twins = {alone, attrs.evolve(alone, flatten=rule.block_m == 128), attrs.evolve(rule, shared=True)}
        for transposed, c in itertools.product((False, True), twins):
            constexprs = dict(BLOCK_M=c.block_m, BLOCK_N=c.block_n, BLOCK_K=c.block_k,
                              GROUP_M=c.group_m, B_TRANSPOSED=transposed,
                              EPILOGUE_PARTS=c.epilogue_parts, INPUT_PRECISION="ieee",
                              FLATTEN=c.flatten, SHARED=c.shared,
                              WHOLE_B=c.shared and transposed)
            types = {"a_ptr": element, "b_ptr": element, "c_ptr": element,
                     "table_ptr": "*i32", "stride_bg": "i64"}
            compiled = compile_natively(
                fn, types, constexprs,
                aligned=[n for n in fn.arg_names if n != "entries"],
                num_warps=c.num_warps, num_stages=c.num_stages,
            )
            ptx = compiled.asm["ptx"]
            out[f"{dtype} B^T={transposed} {c.name}"] = {
                "tma": c.tma,
                "shared": compiled.metadata.shared,
                "stage": (c.block_m + c.block_n) * c.block_k * size,
                "stages": c.num_stages,
                "wgmma": len(re.findall(r"wgmma\\.mma_async", ptx)),
                "loads": len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.shared::\\w+\\.global", ptx)),
                "stores": len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.global\\.shared", ptx)),
                "local": len(re.findall(r"\\bst\\.local|\\bld\\.local", ptx)),
                "serialized": ptxas_report(ptx)["serialized"],
            }
print(json.dumps(out))
"""

SHARED_MEMORY = 227 * 1024
"""An H200 block's shared memory (232448 bytes)."""


@pytest.mark.slow
def test_every_tma_config_the_rule_chooses_compiles_for_an_h200_pipelined_on_wgmma():
    """Each config fits in shared memory with its operand ring of ``stages - 1``
    tiles or more, loads A and B and stores C through TMA, multiplies with
    ``wgmma`` and spills nothing; with B either way round, flattened, and with
    the descriptors shared by every tile (B's too where it is a transposed view)."""
    compiled = native_compile(SCRIPT)
    assert len(compiled) >= 10, compiled  # 128x256, 128x128 (flat too), 64x128; B both ways
    for name, found in compiled.items():
        assert found["tma"], name
        assert (found["stages"] - 1) * found["stage"] <= found["shared"] <= SHARED_MEMORY, (name, found)  # fmt: skip
        assert found["loads"] >= 2 and found["stores"] >= 1, (name, found)
        assert found["wgmma"] > 0, (name, found)
        assert found["local"] == 0, (name, found)  # no accumulator spilled
        assert not found["serialized"], name  # ptxas kept every wgmma pipelined
