"""Pack a Triton wheel small enough to travel to the GPU machine, and unpack it there.

Why: the GPU machine has one Triton (the image's) and no network; a probe
of another version has to carry it, and a carry holds 64 MiB. A Triton
3.9 wheel is 286 MB: its ``libtriton.so`` keeps debug information (about
500 MB of its 690 unpacked) and it holds the AMD backend, Blackwell's
CUPTI and profiler libraries and a second ``ptxas``, none of which a
Hopper run needs. Stripped of those and packed with xz it came to 53 MB
(``evidence/2026-12-05-h100-triton39-gluon-and-tf32-clusters``).

Here::

    python scripts/probes/triton_carry.py pack triton-3.9.0-cp312-...whl .t39/triton.tar.xz

The wheel must match the GPU machine's Python (``pip download triton==X
--python-version 3.12 --only-binary=:all: --no-deps``). There, before
gemmreg runs::

    python3 scripts/probes/triton_carry.py unpack .t39/triton.tar.xz /tmp/t39
    export PYTHONPATH=/tmp/t39:$PYTHONPATH TRITON_BACKENDS_IN_TREE=1

``TRITON_BACKENDS_IN_TREE=1`` makes Triton find its backends in its own
folder, not through the entry points of the image's Triton, which name the
AMD backend left out here.
"""

from __future__ import annotations

import argparse
import lzma
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

LEFT_OUT = (
    "triton/backends/amd",
    "triton/FileCheck",
    "triton/plugins",
    "triton/instrumentation",
    "triton/_C/libproton.so",
    "triton/backends/nvidia/lib/cupti",
    "triton/backends/nvidia/lib/cupti-blackwell",
    "triton/backends/nvidia/bin/nvdisasm",
)
"""What a Hopper run without Triton's profiler does not use."""
PTXAS = ("ptxas", "ptxas-blackwell")
"""Triton's two assemblers; one is kept (``--ptxas``): Triton 3.9 assembles
sm_90 with ``ptxas-blackwell`` (its ``get_ptxas``), earlier versions with ``ptxas``."""
CARRY_BYTES = 64 * 2**20


def pack(wheel: Path, archive: Path, ptxas: str) -> list[str]:
    """Write ``archive`` (tar, xz) from ``wheel`` without LEFT_OUT and the
    other ptxas, ``libtriton.so`` stripped; the lines to report."""
    report = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with zipfile.ZipFile(wheel) as zipped:
            zipped.extractall(root)
        for name in (*LEFT_OUT, *(f"triton/backends/nvidia/bin/{p}" for p in PTXAS if p != ptxas)):
            path = root / name
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
            else:
                continue
            report.append(f"left out {name}")
        for cache in list(root.rglob("__pycache__")):
            shutil.rmtree(cache)
        for tool in (root / "triton/backends/nvidia/bin").glob("*"):
            tool.chmod(0o755)  # a wheel's zip keeps no modes
        library = root / "triton/_C/libtriton.so"
        if library.exists():
            before = library.stat().st_size
            done = subprocess.run(
                ["strip", "--strip-unneeded", str(library)], capture_output=True, text=True
            )
            if done.returncode:
                report.append(f"libtriton.so not stripped: {done.stderr.strip()}")
            else:
                report.append(
                    f"libtriton.so stripped: {before:,} -> {library.stat().st_size:,} bytes"
                )
        archive.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive, "w:xz", preset=6) as tar:
            for item in sorted(root.iterdir()):
                tar.add(item, arcname=item.name)
    size = archive.stat().st_size
    fits = "fits" if size <= CARRY_BYTES else "does not fit"
    report.append(f"{archive}: {size:,} bytes ({fits} a 64 MiB carry)")
    return report


def unpack(archive: Path, target: Path) -> None:
    """Unpack ``archive`` into ``target`` (a folder to put first on PYTHONPATH)."""
    target.mkdir(parents=True, exist_ok=True)
    with lzma.open(archive) as raw, tarfile.open(fileobj=raw) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(target, filter="data")
        else:  # Python before 3.11.4 has no extraction filters
            tar.extractall(target)  # an archive this script packed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    packing = sub.add_parser("pack", help="wheel -> archive")
    packing.add_argument("wheel", type=Path)
    packing.add_argument("archive", type=Path)
    packing.add_argument("--ptxas", choices=PTXAS, default="ptxas-blackwell")
    unpacking = sub.add_parser("unpack", help="archive -> folder")
    unpacking.add_argument("archive", type=Path)
    unpacking.add_argument("target", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.what == "pack":
            print("\n".join(pack(args.wheel, args.archive, args.ptxas)))
        else:
            unpack(args.archive, args.target)
            print(f"export PYTHONPATH={args.target}:$PYTHONPATH TRITON_BACKENDS_IN_TREE=1")
    except (OSError, zipfile.BadZipFile, tarfile.TarError, lzma.LZMAError) as error:
        print(f"triton_carry: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
