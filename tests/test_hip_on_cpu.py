"""hip_regtiled's kernel source, run on the CPU under sanitizers.

CI has no GPU, so the matrix skips every HIP case here. This test compiles the
unchanged ``matmul_regtiled.hip`` into a host program
(``hip_on_cpu/run_regtiled.cpp``: one std::thread per GPU thread, a
std::barrier per block for ``__syncthreads``) and runs it on shapes with tails
on every axis, padded rows holding NaN (and, as the core lays them out, 16
bytes of NaN before each operand's first element), misaligned bases, and offsets past
2^31. C must equal the exact product (small-integer inputs), every element
written and no padding touched. AddressSanitizer catches reads and writes
outside A, B and C; UndefinedBehaviorSanitizer a 16-byte access at an address
that is not 16-byte aligned (the vector path taken where it is illegal);
ThreadSanitizer two threads touching shared memory with no barrier between
them; the timeout a thread that returns before a barrier.

What it cannot show: GPU-only behaviour (the memory model of a real device,
NVRTC/hiprtc compilation, speed). Those are ``gemmreg check --full
hip_regtiled`` and ``gemmreg compare`` on a GPU.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import TESTS
from gemmreg_plugins import hip_regtiled

HARNESS = TESTS / "hip_on_cpu" / "run_regtiled.cpp"
COMPILER = shutil.which("g++") or shutil.which("c++")
SANITIZERS = {
    "address": ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"],
    "thread": ["-fsanitize=thread"],
}
ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
    "TSAN_OPTIONS": "halt_on_error=1:exitcode=66",
}
INT32_MAX = 2**31 - 1
STRIDE_2_30 = 2**30  # row strides whose third row starts past 2^31 elements

if COMPILER is None:
    pytest.skip("no C++ compiler (g++ or c++) to build the CPU harness", allow_module_level=True)


def compile_harness(out: Path, sanitizer: str) -> Path:
    flags = ["-std=c++20", "-O1", "-g", "-pthread", "-fno-strict-aliasing", *SANITIZERS[sanitizer]]
    # A toolchain without this sanitizer's runtime is a reason to skip; a
    # harness or kernel that does not compile is a failure.
    probe = out / f"probe-{sanitizer}"
    done = subprocess.run(
        [COMPILER, *flags, "-x", "c++", "-", "-o", str(probe)],
        input="int main() { return 0; }\n",
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or subprocess.run([str(probe)], env={**os.environ, **ENV}).returncode:
        pytest.skip(f"{COMPILER} cannot build with -fsanitize={sanitizer}: {done.stderr[-300:]}")
    binary = out / f"run_regtiled-{sanitizer}"
    done = subprocess.run(
        [
            COMPILER,
            *flags,
            f'-DKERNEL_SOURCE="{hip_regtiled.SOURCE}"',
            str(HARNESS),
            "-o",
            str(binary),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return binary


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("hip_on_cpu")
    built: dict[str, Path] = {}

    def get(sanitizer: str) -> Path:
        if sanitizer not in built:
            built[sanitizer] = compile_harness(out, sanitizer)
        return built[sanitizer]

    return get


def run(binary: Path, *args: object, timeout: float = 120) -> None:
    try:
        done = subprocess.run(
            [str(binary), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **ENV},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"no result in {timeout} s: a thread that never reaches a barrier hangs")
    assert done.returncode == 0 and done.stdout.strip() == "ok", (
        done.stdout[-2000:] + done.stderr[-4000:]
    )


# (M, N, K, A's row padding, B's, C's, misalignment in floats), and why.
CASES = {
    # The matrix's shapes: the seed's edges, each tail alone and together,
    # K below the tile and K = 1, degenerate and skinny. None is a multiple of
    # 4 wide in every operand, so most run the scalar path.
    "1x1x1": (1, 1, 1, 0, 0, 0, 0),
    "3x5x7": (3, 5, 7, 0, 0, 0, 0),
    "15x17x19": (15, 17, 19, 0, 0, 0, 0),
    "17x19x23": (17, 19, 23, 0, 0, 0, 0),
    "31x33x29": (31, 33, 29, 0, 0, 0, 0),
    "m-tail-65x64x64": (65, 64, 64, 0, 0, 0, 0),
    "n-tail-64x65x64": (64, 65, 64, 0, 0, 0, 0),
    "k-tail-64x64x65": (64, 64, 65, 0, 0, 0, 0),
    "all-tails-65x67x69": (65, 67, 69, 0, 0, 0, 0),
    "k7-64x64x7": (64, 64, 7, 0, 0, 0, 0),
    "k1-64x64x1": (64, 64, 1, 0, 0, 0, 0),
    "1x64x1": (1, 64, 1, 0, 0, 0, 0),
    "64x1x64": (64, 1, 64, 0, 0, 0, 0),
    "130x70x65": (130, 70, 65, 0, 0, 0, 0),
    "tall-200x8x40": (200, 8, 40, 0, 0, 0, 0),
    "wide-8x200x40": (8, 200, 40, 0, 0, 0, 0),
    # Whole tiles only, every load and store 16 bytes: the interior path.
    "tiles-256x256x64": (256, 256, 64, 0, 0, 0, 0),
    # 16-byte accesses legal, with a tail on every axis: the tail pieces
    # must fall back to guarded loads and stores.
    "vector-tails-260x136x20": (260, 136, 20, 0, 0, 0, 0),
    # The same with every base one float off 16 bytes: scalar path only.
    "misaligned-260x136x20": (260, 136, 20, 0, 0, 0, 1),
    # Padded rows as the core pads them: 3 NaNs after each row, the views
    # starting 16 bytes into their buffers, after NaN (C's here too), so A's
    # stride 72 makes A's 16-byte loads legal; and at 257^3 with both A and B
    # vectorised.
    "padded-65x67x69": (65, 67, 69, 3, 3, 0, 4),
    "padded-257x257x257": (257, 257, 257, 3, 3, 0, 4),
    # Strides multiple of 4 with NaN right after each row: a 16-byte load or
    # store that crosses the end of a row reads NaN or overwrites padding.
    "padded-vector-130x132x13": (130, 132, 13, 3, 4, 4, 0),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_exact_result_no_access_outside_and_no_misaligned_vector(harness, case):
    run(harness("address"), *case)


def test_offsets_past_2_31_from_row_index_times_stride(harness):
    """The last block of a 268435556 x 4 x 8 problem: its rows of A and C start
    past 2^31 elements (buffers mapped, only that tile filled)."""
    m = 2**28 + 100
    assert (m - 1) * 8 > INT32_MAX
    run(harness("address"), m, 4, 8, 0, 0, 0, 0, "last")


def test_offsets_past_2_31_from_large_row_strides(harness):
    """Row strides of 2^30 (a 32-bit int) in A, B and C: row 2 and up sit past
    2^31 elements, on the vector path and, misaligned, the scalar path."""
    m, n, k = 4, 5, 6
    pads = (STRIDE_2_30 - k, STRIDE_2_30 - n, STRIDE_2_30 - n)
    assert (m - 1) * STRIDE_2_30 > INT32_MAX
    run(harness("address"), m, n, k, *pads, 0)
    run(harness("address"), m, n, k, *pads, 1)


def test_the_matrix_large_offset_case_last_block(harness):
    """gemmreg's own 2^31 case, 65600 x 64 x 32768: the block whose A rows
    start at element 2^31, through all 4096 K steps."""
    run(harness("address"), 65600, 64, 32768, 0, 0, 0, 0, "last", timeout=300)


@pytest.mark.parametrize(
    "case",
    [CASES["130x70x65"], CASES["vector-tails-260x136x20"], CASES["padded-vector-130x132x13"]],
    ids=["130x70x65", "vector-tails-260x136x20", "padded-vector-130x132x13"],
)
def test_shared_memory_has_a_barrier_between_every_write_and_read(harness, case):
    run(harness("thread"), *case)
