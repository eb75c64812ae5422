"""scripts/probes/triton_carry.py: a wheel packed and unpacked keeps what a
Hopper run imports and loses what it does not (the AMD backend, the
profiler's libraries, the other ptxas), the assembler stays executable
(a wheel's zip keeps no modes), and a broken wheel is one line and exit 2."""

from __future__ import annotations

import importlib.util
import os
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def probe():
    spec = importlib.util.spec_from_file_location(
        "triton_carry", REPO / "scripts/probes/triton_carry.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KEPT = (
    "triton/__init__.py",
    "triton/_C/libtriton.so",
    "triton/backends/nvidia/compiler.py",
    "triton/backends/nvidia/bin/ptxas-blackwell",
    "triton/backends/nvidia/lib/libdevice.10.bc",
    "triton-3.9.0.dist-info/METADATA",
)
LEFT = (
    "triton/backends/amd/compiler.py",
    "triton/backends/nvidia/bin/ptxas",
    "triton/backends/nvidia/bin/nvdisasm",
    "triton/backends/nvidia/lib/cupti/libcupti.so",
    "triton/_C/libproton.so",
    "triton/__pycache__/x.cpython-312.pyc",
)


def fake_wheel(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as wheel:
        for name in KEPT + LEFT:
            wheel.writestr(name, f"contents of {name}\n")
    return path


def test_packed_and_unpacked_keeps_what_hopper_uses(tmp_path):
    carry = probe()
    archive = tmp_path / "carry" / "triton.tar.xz"
    report = carry.pack(fake_wheel(tmp_path / "triton.whl"), archive, "ptxas-blackwell")
    assert any("fits a 64 MiB carry" in line for line in report)
    # not an ELF file: left as it is, and said so
    assert any(line.startswith("libtriton.so not stripped") for line in report)
    carry.unpack(archive, tmp_path / "site")
    present = {
        str(p.relative_to(tmp_path / "site")) for p in (tmp_path / "site").rglob("*") if p.is_file()
    }
    assert present == set(KEPT)
    assert (tmp_path / "site" / "triton/_C/libtriton.so").read_text() == (
        "contents of triton/_C/libtriton.so\n"
    )
    assert os.access(tmp_path / "site/triton/backends/nvidia/bin/ptxas-blackwell", os.X_OK)


def test_the_other_assembler_can_be_the_one_kept(tmp_path):
    carry = probe()
    archive = tmp_path / "triton.tar.xz"
    carry.pack(fake_wheel(tmp_path / "triton.whl"), archive, "ptxas")
    carry.unpack(archive, tmp_path / "site")
    tools = {p.name for p in (tmp_path / "site/triton/backends/nvidia/bin").iterdir()}
    assert tools == {"ptxas"}


def test_a_file_that_is_not_a_wheel_is_one_line_and_exit_2(tmp_path, capsys):
    broken = tmp_path / "triton.whl"
    broken.write_text("not a zip")
    assert probe().main(["pack", str(broken), str(tmp_path / "out.tar.xz")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("triton_carry: ") and "\n" not in err
