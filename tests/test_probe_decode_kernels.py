"""``scripts/probe_decode_kernels.py`` and its clocks (``scripts/decode_clocks.py``)
on the CPU: the parts that need no GPU (config names, points, how a profile is
cut into calls, the table); the timing itself needs a GPU, and says so."""

from __future__ import annotations

import attrs
import pytest
from conftest import load_script
from gemmreg_plugins.triton_tuned import configs, launch_config
from gemmreg_plugins.triton_tuned.configs import Config


@pytest.fixture(scope="module")
def probe():
    return load_script("probe_decode_kernels")


@pytest.fixture(scope="module")
def decode_clocks():
    return load_script("decode_clocks")


def every_candidate() -> list[Config]:
    """Candidates of every path and flag: decode (split-K swap-AB, GEMV),
    128 tokens (split-K), big tiles (persistent TMA with its flags, Gluon),
    fp32 (TF32 lists with transposed B), ROCm's tiled list."""
    found: list[Config] = []
    for shape in ((1, 4096, 4096), (3, 1024, 4096), (128, 1024, 4096), (4096, 4096, 4096)):
        for dtype in ("bf16", "fp32"):
            found += configs.candidates("cuda", dtype, *shape, tma=True, gluon=True, num_sms=132)
    return found + configs.candidates("rocm", "fp16", 64, 64, 64, tma=False)


def test_every_candidate_name_reads_back_as_its_config(probe):
    found = every_candidate()
    assert {c.path for c in found} == set(launch_config.PATHS)
    assert any(c.stream_k for c in found) and any(not c.persistent for c in found)
    assert any(c.transpose_b for c in found) and any(c.epilogue_parts == 4 for c in found)
    for config in found:
        assert Config.from_name(config.name) == config, config.name


def test_a_name_may_leave_the_group_out(probe):
    config = Config.from_name("split_k:64x16x512-s3-w8-k4-swap")
    expected = Config(path="split_k", block_m=64, block_n=16, block_k=512, num_stages=3,
                      num_warps=8, split_k=4, swap_ab=True)  # fmt: skip
    assert config == expected and config.group_m == 8
    assert Config.from_name("gemv:32x1x256-s3-w4-k2") == attrs.evolve(
        expected, path="gemv", block_m=32, block_n=1, block_k=256, num_warps=4, split_k=2,
        swap_ab=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    "name",
    [
        "split_k",  # no sizes
        "64x16x128-s3-w4",  # no path
        "split_k:64x16-s3-w4",
        "split_k:64x16x128-s3-w4-zz",  # an unknown part
        "split_k:64x16x128-s3",  # no warps
        "split_k:64x24x128-s3-w4",  # not a power of two (Config.from_dict)
        "tiled:64x64x64-s3-w4-k2",  # split_k on the tiled path
        "warp:64x64x64-s3-w4",  # no such path
    ],
)
def test_what_is_not_a_config_name_is_refused(probe, name):
    with pytest.raises(ValueError):
        Config.from_name(name)


def test_default_points_are_the_decode_and_128_token_rows_and_one_more(probe):
    from gemmreg.timing.shape_files import read_shapes

    rows = [attrs.asdict(r) for r in read_shapes(probe.DEFAULT_SHAPES)]
    points = probe.parse_points(probe.parse_args([]).points, rows, None)
    assert len(points) == 13 and points[-1] == {
        "m": 2048, "n": 1024, "k": 4096, "dtype": "bf16", "layout": "transposedB",
    }  # fmt: skip
    assert {p["m"] for p in points[:-1]} == {1, 16, 128}
    assert all(p["layout"] == "transposedB" and p["dtype"] == "bf16" for p in points)
    again = probe.parse_points("1,1,1x4096x4096,16", rows, "fp16")
    assert len(again) == 8 and {p["dtype"] for p in again} == {"fp16"}  # no repeats


def test_a_profile_is_cut_into_calls_at_each_flush(decode_clocks):
    flush = {"fill", "reduce"}
    events = [
        ("gemm", 0.0, 9.0),  # before any flush: not a call
        ("fill", 10.0, 50.0),
        ("gemm", 61.0, 7.0),
        ("sum", 69.0, 1.5),
        ("fill", 80.0, 50.0),
        ("reduce", 130.0, 2.0),  # one flush of two kernels
        ("gemm", 140.0, 6.0),
        ("fill", 150.0, 50.0),  # a call with no kernel of its own
    ]
    assert decode_clocks.call_times(list(reversed(events)), flush) == [(8.5, 2), (6.0, 1), (0.0, 0)]
    assert decode_clocks.call_times([], flush) == []


def test_the_table_is_sorted_by_device_time_with_ratios_to_torch_mm(probe):
    rows = [
        {
            "name": "split_k:a",
            "ok": True,
            "device_us": 20.0,
            "judge_us": 30.0,
            "bench_us": 37.0,
            "kernels": 1,
        },
        {
            "name": "torch.mm",
            "ok": True,
            "device_us": 10.0,
            "judge_us": 20.0,
            "bench_us": 18.5,
            "kernels": 1,
        },
        {"name": "gemv:b", "ok": False, "error": "wrong result", "device_us": 5.0},
        {"name": "broken", "ok": False, "error": "ValueError: no"},
    ]
    lines = probe.render("1x4096x4096 bf16", rows).splitlines()
    assert lines[0] == "1x4096x4096 bf16" and lines[1].split()[:3] == ["config", "ok", "device"]
    assert [line.split()[0] for line in lines[2:]] == ["gemv:b", "torch.mm", "split_k:a", "broken"]
    # device, judge and bench against torch.mm's
    assert lines[4].split()[-3:] == ["2.00", "1.50", "2.00"]
    assert lines[2].split()[1] == "NO" and lines[2].endswith("wrong result")
    assert lines[5].split()[2] == "-" and "ValueError: no" in lines[5]


def test_without_a_gpu_it_says_so(probe):
    with pytest.raises(SystemExit, match="needs a CUDA GPU"):
        probe.main(["--points", "1"])
