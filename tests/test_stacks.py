"""The torch and Triton versions gemmreg says it supports and ran with are the
ones that ran: pyproject.toml's lower bounds are the oldest stack CI tests, each
stack's NumPy pin respects the interpreter's known limit, and the README's line
of versions is rebuilt here from the constraints files and the newest H200
manifest, so it cannot be retyped wrong or left stale."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gemmreg.contract import known_limits, saved_files

REPO = Path(__file__).resolve().parents[1]
STACKS = ("oldest", "newest")
"""The stacks in constraints/ that scripts/test-stack.sh builds and CI runs."""

TRITON_PINNED_BY_TORCH = {
    "2.8.0": "==3.4.0",
    "2.9.1": "==3.5.1",
    "2.10.0": "==3.6.0",
    "2.11.0": "==3.6.0",
    "2.12.1": "==3.7.1",
    "2.13.0": "==3.7.1",
    "2.14.1": "~=3.8.0",
    "2.15.0": "~=3.9.0",
}
"""The Triton each torch release requires on Linux, copied from the
``Requires-Dist: triton`` of its PyPI wheels (manylinux_2_28_x86_64, cp310 and
cp311 alike; read 2026-11-30 with ``pip install --dry-run --report``). A stack
that pins another Triton is one pip cannot install as written: given the CUDA
torch of that version it silently picks an older torch that takes the pinned
Triton (torch 2.13.0 with Triton 3.6.0 became torch 2.11.0). Only the CPU
builds (``+cpu``) name no Triton. Add a release here when a stack moves to it."""


def pins(path: Path) -> dict[str, str]:
    """``name==version`` lines of a constraints file (comments and ranges skipped)."""
    found = {}
    for line in path.read_text().splitlines():
        match = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)==(\S+)\s*(#.*)?", line)
        if match:
            found[match[1].lower()] = match[2]
    return found


def default_stack() -> dict[str, str]:
    """scripts/bootstrap.sh's torch with constraints.txt's Triton: what test.sh runs."""
    bootstrap = (REPO / "scripts" / "bootstrap.sh").read_text()
    torch = re.search(r"^default_torch=([0-9.]+)$", bootstrap, re.MULTILINE)
    assert torch, "scripts/bootstrap.sh no longer names its default torch"
    return {**pins(REPO / "constraints.txt"), "torch": torch[1]}


def stack(name: str) -> dict[str, str]:
    return pins(REPO / "constraints" / f"{name}.txt")


def major_minor(version: str) -> tuple[int, int]:
    major, minor = re.findall(r"\d+", version)[:2]
    return int(major), int(minor)


def newest_h200_manifest() -> tuple[Path, dict]:
    """The H200 manifest with the latest timestamp among all the evidence: a
    folder's ``manifest.json``, or the one a saved run carries (runs are kept
    packed alone, as ``run.json.xz``)."""
    manifests = []
    for path in (REPO / "evidence").rglob("*.json*"):
        if path.name == "manifest.json":
            manifest = json.loads(path.read_text())
        elif path.name in saved_files.packed_names("run.json")[1:]:
            manifest = json.loads(saved_files.read_saved(path)).get("manifest", {})
        else:
            continue
        if "H200" in str(manifest.get("device_name")) and manifest.get("timestamp_utc"):
            manifests.append((manifest["timestamp_utc"], path, manifest))
    assert manifests, "no H200 manifest under evidence/"
    _, path, manifest = max(manifests, key=lambda row: row[0])
    return path, manifest


def versions_sentence() -> str:
    """The README's sentence, from the files that decide the versions."""
    oldest, default, newest = stack("oldest"), default_stack(), stack("newest")
    path, h200 = newest_h200_manifest()
    evidence = "/".join(path.relative_to(REPO).parts[:2])
    return (
        f"CI tests torch {oldest['torch']} + Triton {oldest['triton']} (oldest supported), "
        f"{default['torch']} + {default['triton']} (default) and {newest['torch']} + "
        f"{newest['triton']} (newest) on a CPU; an H200 last ran torch {h200['torch']} + "
        f"Triton {h200['triton']} (driver {h200['gpu']['driver_version']}, Python "
        f"{h200['python']}; [evidence]({evidence}/))."
    )


def test_every_stack_pins_torch_triton_and_numpy():
    for name, pinned in [("default", default_stack())] + [(s, stack(s)) for s in STACKS]:
        missing = {"torch", "triton"} - set(pinned)
        assert not missing, f"{name} does not pin {missing}"
    for name in STACKS:
        assert "numpy" in stack(name), f"constraints/{name}.txt does not pin numpy"


def satisfies(version: str, requirement: str) -> bool:
    """``version`` against ``==X.Y.Z`` or ``~=X.Y.Z`` (the only forms torch uses)."""
    operator, wanted = requirement[:2], requirement[2:]
    if operator == "==":
        return version == wanted
    assert operator == "~=", requirement
    head = wanted.split(".")[:-1]
    as_numbers = [int(part) for part in re.findall(r"\d+", version)]
    return version.split(".")[: len(head)] == head and as_numbers >= [
        int(part) for part in wanted.split(".")
    ]


def test_satisfies_reads_torchs_two_forms():
    assert satisfies("3.7.1", "==3.7.1") and not satisfies("3.7.0", "==3.7.1")
    assert satisfies("3.8.2", "~=3.8.0") and satisfies("3.8.0", "~=3.8.0")
    assert not satisfies("3.9.0", "~=3.8.0") and not satisfies("3.7.1", "~=3.8.0")


def test_every_stack_pins_the_triton_its_torch_requires():
    """A regression once shipped: constraints.txt kept Triton 3.6.0 when the
    default torch moved to 2.13.0, which requires 3.7.1."""
    for name, pinned in [("default", default_stack())] + [(s, stack(s)) for s in STACKS]:
        torch = pinned["torch"].split("+")[0]
        assert torch in TRITON_PINNED_BY_TORCH, (
            f"{name}: torch {torch}'s Triton is not recorded in TRITON_PINNED_BY_TORCH"
        )
        required = TRITON_PINNED_BY_TORCH[torch]
        assert satisfies(pinned["triton"], required), (
            f"{name}: torch {torch} requires triton{required}, the stack pins {pinned['triton']}"
        )


def test_the_lower_bounds_are_the_oldest_stack_tested():
    # Read as text, not with tomllib: the tests also run on Python 3.10.
    dependencies = re.findall(r'"([A-Za-z0-9_-]+>=[0-9.]+)"', (REPO / "pyproject.toml").read_text())
    oldest = stack("oldest")
    for name in ("torch", "triton"):
        wanted = "{}>={}.{}".format(name, *major_minor(oldest[name]))
        assert wanted in dependencies, f"pyproject.toml should say {wanted}"


def numpy_ceiling(path: Path) -> tuple[int, int] | None:
    """The ``numpy<X.Y`` line of a constraints file, if it has one."""
    match = re.search(r"^numpy<([0-9.]+)", path.read_text(), re.MULTILINE)
    return major_minor(match[1]) if match else None


def test_no_stack_meets_the_interpreter_numpy_clash():
    """Where Triton's interpreter cannot take NumPy 2.4 the stack pins below it,
    and only there: the cap is the interpreter's, not gemmreg's."""
    files = {"default": REPO / "constraints.txt"} | {
        s: REPO / "constraints" / f"{s}.txt" for s in STACKS
    }
    for name, path in files.items():
        pinned = default_stack() if name == "default" else stack(name)
        old_triton = major_minor(pinned["triton"]) < known_limits.INTERPRETER_NUMPY_FIXED_IN
        ceiling = numpy_ceiling(path)
        if "numpy" in pinned:
            clashes = major_minor(pinned["numpy"]) >= known_limits.INTERPRETER_NUMPY_LIMIT
        else:
            clashes = ceiling is None or ceiling > known_limits.INTERPRETER_NUMPY_LIMIT
        assert not (old_triton and clashes), f"{path.name}: {pinned} meets the clash"
        assert old_triton or ceiling is None, (
            f"{path.name}: Triton {pinned['triton']} needs no numpy<"
        )


def test_the_readme_names_the_versions_that_ran():
    readme = " ".join((REPO / "README.md").read_text().split())
    assert " ".join(versions_sentence().split()) in readme, versions_sentence()
