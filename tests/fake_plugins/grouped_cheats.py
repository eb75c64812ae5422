"""Grouped kernels with hidden bugs that pass a careless check: each runs
every member of an even grouping right, and errs on the members a routed
batch of tokens makes. ``gemmreg check --grouped`` must FAIL every one
(tests/test_grouped.py); grouped_loop, honest, must pass.

- fake_grouped_offsets_late: reads each member's rows from the offsets one
  member on (offsets[i + 1]:offsets[i + 2]), so member i's B multiplies the
  next member's rows and the first member's rows are never written.
- fake_grouped_empty_skips_next: after an empty member it also skips the
  member after it (a loop that advances twice on an empty range).
- fake_grouped_empty_writes_next: runs an empty member as one row (a grid of
  at least one block per member, unmasked), writing that row over the next
  member's first row with the empty member's B.
- fake_grouped_first_b: multiplies every member by member 0's B.
- grouped_loop: one torch.mm per member, from the offsets it is handed.
"""

from __future__ import annotations

import itertools

import gemmreg
import torch

PRECISION = {
    "fp32": gemmreg.Precision(math="ieee_fp32", detail="torch.mm per member"),
    "fp16": gemmreg.Precision(math="fp16", detail="torch.mm per member"),
}


def _rows(offsets):
    starts = offsets.tolist()
    return list(itertools.pairwise(starts))


def offsets_late(a, b, out, offsets):
    rows = _rows(offsets)
    for i in range(len(rows) - 1):
        start, stop = rows[i + 1]
        torch.mm(a[start:stop], b[i], out=out[start:stop])


def empty_skips_next(a, b, out, offsets):
    skip = False
    for i, (start, stop) in enumerate(_rows(offsets)):
        if skip:
            skip = False
            continue
        if start == stop:
            skip = True
            continue
        torch.mm(a[start:stop], b[i], out=out[start:stop])


def empty_writes_next(a, b, out, offsets):
    for i, (start, stop) in reversed(list(enumerate(_rows(offsets)))):
        stop = max(stop, start + 1)  # at least one row per member
        torch.mm(a[start:stop], b[i], out=out[start:stop])


def first_b(a, b, out, offsets):
    for start, stop in _rows(offsets):
        torch.mm(a[start:stop], b[0], out=out[start:stop])


def loop(a, b, out, offsets):
    for i, (start, stop) in enumerate(_rows(offsets)):
        torch.mm(a[start:stop], b[i], out=out[start:stop])


def _spec(name, launch):
    caps = gemmreg.Capabilities(
        precision=PRECISION, backends={"cpu", "cuda"}, layouts=gemmreg.LAYOUTS, grouped=True
    )

    def prepare(problem):
        caps.require(problem)  # refuses what it does not declare: its one bug is the members
        return launch if problem.groups else (lambda a, b, out: torch.mm(a, b, out=out))

    return gemmreg.KernelSpec(
        name=name,
        summary=f"test kernel {name}",
        prepare=prepare,
        capabilities=caps,
        tolerances=gemmreg.standard_tolerances(PRECISION),
    )


SPECS = (
    _spec("fake_grouped_offsets_late", offsets_late),
    _spec("fake_grouped_empty_skips_next", empty_skips_next),
    _spec("fake_grouped_empty_writes_next", empty_writes_next),
    _spec("fake_grouped_first_b", first_b),
    _spec("grouped_loop", loop),
)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    for spec in SPECS:
        register(spec)
