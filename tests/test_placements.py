"""Operands in several placements, rotated across rounds (gemmreg.timing.placements)."""

from __future__ import annotations

from conftest import only_extra_plugins
from gemmreg.contract.records import Problem
from gemmreg.discovery.registry import discover
from gemmreg.timing import placements, round_loops, timing
from gemmreg.workers.task_results import KernelTiming


def test_small_problems_get_every_placement_and_large_ones_one():
    assert placements.placement_count(Problem(m=512, n=512, k=512)) == placements.PLACEMENTS
    assert placements.placement_count(Problem(m=8192, n=8192, k=8192, dtype="bf16")) == 1
    middle = Problem(m=4096, n=4096, k=4096, dtype="bf16")  # 96 MiB a set
    assert placements.placement_count(middle) == 2


def test_a_device_with_more_memory_gives_large_problems_more_placements():
    h200 = 150_109_880_320  # bytes, as torch reports it
    skinny = Problem(m=64, n=4096, k=16384, dtype="bf16")  # 130 MiB a set: memory-bound
    assert placements.placement_count(skinny) == 1
    assert placements.placement_count(skinny, h200) == placements.PLACEMENTS
    large = Problem(m=8192, n=8192, k=8192, dtype="bf16")  # 384 MiB a set
    assert placements.placement_count(large, h200) == 5  # of 2.3 GB
    assert placements.placement_count(large, 24 << 30) == 1  # 384 MiB of a 24 GB GPU
    huge = Problem(m=16384, n=16384, k=16384, dtype="fp32")  # 3 GiB a set
    assert placements.placement_count(huge, h200) == 1


class _Rotating:
    def __init__(self, name: str):
        self.name, self.result, self.used = name, KernelTiming(), []

    def call(self) -> None:
        pass

    def use_placement(self, index: int) -> None:
        self.used.append(index)


class _Clock:
    def samples(self, call, count):
        for _ in range(count):
            call()
        return [1.0] * count


def test_each_round_moves_every_kernel_to_the_next_placement():
    kernels = [_Rotating("a"), _Rotating("b")]
    policy = timing.policy_for(gpu=False, repeats=6)
    taken, _ = round_loops.take_rounds(
        kernels, _Clock(), policy, {"a": 1e-4, "b": 1e-4}, seed=3, monitor=None
    )
    assert len(taken) == 6
    assert kernels[0].used == kernels[1].used == list(range(6))


def test_a_kernel_that_keeps_its_first_pointers_fails_the_postcheck():
    """Its first call is right (it passes the precheck); the rounds hand it
    the other placements, whose C it never writes."""
    with only_extra_plugins(["fake_plugins.good", "fake_plugins.first_pointers"]):
        specs = {n: discover().get(n).spec for n in ("fake_good", "fake_first_pointers")}
        result = timing.measure_group(
            specs,
            Problem(m=8, n=8, k=8),
            seed=1,
            order_seed=1,
            policy=timing.policy_for(gpu=False, repeats=8),
        )
    good, cached = result.kernels["fake_good"], result.kernels["fake_first_pointers"]
    used = min(8, placements.PLACEMENTS)  # one placement a round
    assert good.status == "ok" and good.placements == used
    assert good.postcheck is not None and good.postcheck.passed
    assert cached.precheck is not None and cached.precheck.passed
    assert cached.status == "failed"
    assert cached.reason.startswith(f"postcheck: placement 2 of {placements.PLACEMENTS}")


def _counting_generator(draws: list[int]):
    """The default values, counting every draw."""
    from gemmreg.contract.inputs import normal_inputs

    def generate(problem, seed, device):
        draws.append(seed)
        return normal_inputs(problem, seed, device)

    return generate


def test_a_process_draws_each_kernel_s_operands_once_however_many_placements():
    """Further placements are clones of the prechecked bytes: a draw runs on
    the host (seconds for a large fp8 problem), once per placement it made a
    process's preparation take longer than its rounds."""
    import torch
    from fake_plugins import fp32_spec

    draws: list[int] = []
    spec = fp32_spec(
        "k", lambda a, b, out: torch.mm(a, b, out=out), make_inputs=_counting_generator(draws)
    )
    result = timing.measure_group(
        {"k": spec},
        Problem(m=8, n=8, k=8, layout="padded"),
        seed=1,
        order_seed=1,
        policy=timing.policy_for(gpu=False, repeats=placements.PLACEMENTS),
    )
    kernel = result.kernels["k"]  # every placement used once, and postchecked
    assert kernel.status == "ok" and kernel.placements == placements.PLACEMENTS
    assert kernel.postcheck is not None and kernel.postcheck.passed
    assert draws == [1]


def test_a_further_placement_holds_the_prechecked_bytes_in_memory_of_its_own():
    import torch
    from gemmreg.checking.guarded_inputs import InputStorages, geometry

    base = torch.arange(40, dtype=torch.float32)
    a, b = base[2:22].view(4, 5), base[22:37].view(5, 3)  # one storage, at offsets
    taken = InputStorages.take((a, b))
    base[0] = -1.0  # after the take: the placement holds what was taken
    ops, _ = placements.more_placements(taken, Problem(m=4, n=3, k=5), "cpu", 1)[0]
    copy_a, copy_b = ops
    assert copy_a.untyped_storage().data_ptr() == copy_b.untyped_storage().data_ptr()
    assert copy_a.untyped_storage().data_ptr() != base.untyped_storage().data_ptr()
    assert [geometry(x)[1:] for x in ops] == [geometry(x)[1:] for x in (a, b)]
    whole = torch.empty(0).set_(copy_a.untyped_storage())
    assert whole[0] == 0.0 and torch.equal(whole[1:], base[1:])
    assert InputStorages.watch(ops, like=taken).copies is taken.copies
