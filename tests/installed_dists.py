"""Fake installed packages: a folder holding a ``*.dist-info`` (METADATA and
``entry_points.txt``, as pip writes them) and the plugin modules it names.
Put the folder on ``sys.path`` (or PYTHONPATH) and discovery finds the
package as it finds any installed one."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

SPEC_MODULE = """
import torch
from fake_plugins import fp32_spec

SPEC = fp32_spec({kernel!r}, lambda a, b, out: torch.mm(a, b, out=out), summary={summary!r})
"""
"""A module whose ``SPEC`` is one fp32 kernel (needs tests/ on the path, for fake_plugins)."""


def spec_module(kernel: str, summary: str = "") -> str:
    """The text of a module defining ``SPEC``, a kernel named ``kernel``."""
    return SPEC_MODULE.format(kernel=kernel, summary=summary or f"{kernel} from a fake package")


def install(
    root: Path,
    dist: str,
    entry_points: Mapping[str, str],
    modules: Mapping[str, str] = {},
    version: str = "0.1",
) -> Path:
    """Write package ``dist`` into ``root``: its entry points in the ``gemmreg``
    group (``name -> "module:ATTR"``) and ``modules`` (``name -> source``)."""
    root.mkdir(parents=True, exist_ok=True)
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = [f"{name} = {target}" for name, target in entry_points.items()]
    (info / "entry_points.txt").write_text("[gemmreg]\n" + "\n".join(lines) + "\n")
    for name, source in modules.items():
        (root / f"{name}.py").write_text(textwrap.dedent(source))
    return root
