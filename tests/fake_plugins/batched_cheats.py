"""Batched kernels with hidden bugs that pass a careless check: each runs
the shape asked for, but not every item of the batch. ``gemmreg check
--batch`` must FAIL every one (tests/test_batched.py); batched_loop, honest,
must pass.

- fake_batched_first_item: computes item 0 and writes it to every item of C
  (a grid that forgot its batch axis).
- fake_batched_packed_stride: finds item i of A and B at i times the item's
  size from the first, as if the batch were packed: right for packed
  operands, wrong (other elements, and NaN) for a strided batch.
- fake_batched_shared_b: multiplies every item of A by B's item 0 (the
  broadcast B of a different operation).
- batched_loop: one torch.mm per item.
"""

from __future__ import annotations

import gemmreg
import torch

PRECISION = {
    "fp32": gemmreg.Precision(math="ieee_fp32", detail="torch.mm per item"),
    "fp16": gemmreg.Precision(math="fp16", detail="torch.mm per item"),
}


def first_item(a, b, out):
    out.copy_((a[0] @ b[0]).expand_as(out))


def _packed(x):
    """``x`` read as if its items were packed: item i at i times an item's size
    (its rows times the row stride, or its columns times the column stride)."""
    (rows, cols), (row_stride, col_stride) = x.shape[1:], x.stride()[1:]
    size = max(rows * row_stride, cols * col_stride)
    return x.as_strided(x.shape, (size, row_stride, col_stride))


def packed_stride(a, b, out):
    torch.bmm(_packed(a), _packed(b), out=out)


def shared_b(a, b, out):
    torch.bmm(a, b[:1].expand_as(b), out=out)


def loop(a, b, out):
    for i in range(out.shape[0]):
        torch.mm(a[i], b[i], out=out[i])


def _spec(name, launch):
    caps = gemmreg.Capabilities(
        precision=PRECISION,
        backends={"cpu", "cuda"},
        layouts=gemmreg.LAYOUTS,
        batch_layouts={"packed", "strided"},
    )

    def prepare(problem):
        caps.require(problem)  # refuses what it does not declare: its one bug is the batch
        return launch if problem.batch > 1 else (lambda a, b, out: torch.mm(a, b, out=out))

    return gemmreg.KernelSpec(
        name=name,
        summary=f"test kernel {name}",
        prepare=prepare,
        capabilities=caps,
        tolerances=gemmreg.standard_tolerances(PRECISION),
    )


SPECS = (
    _spec("fake_batched_first_item", first_item),
    _spec("fake_batched_packed_stride", packed_stride),
    _spec("fake_batched_shared_b", shared_b),
    _spec("batched_loop", loop),
)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    for spec in SPECS:
        register(spec)
