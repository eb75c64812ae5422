"""docs/layout.md's map of where a change goes names files that exist: a
newcomer who follows it must land in the right place, and a file that moves
or is renamed must take the map with it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYOUT = ROOT / "docs" / "layout.md"


def _map_section() -> str:
    text = LAYOUT.read_text()
    assert "## Where a change goes" in text, "docs/layout.md lost its map"
    return text.split("## Where a change goes", 1)[1]


def test_every_file_the_map_names_exists():
    section = _map_section()
    paths = [p for p in re.findall(r"`([^`\s]+\.(?:py|toml|md))`", section) if "NAME" not in p]
    assert len(paths) >= 15, paths  # the map names real files, not only patterns
    missing = [p for p in paths if not (ROOT / p).is_file()]
    assert not missing, f"docs/layout.md names files that do not exist: {missing}"


def test_the_map_covers_each_kind_of_change():
    rows = [line for line in _map_section().splitlines() if line.startswith("| ")]
    changes = {row.split("|")[1].strip() for row in rows[1:]}
    for change in ("an output format", "a check kind", "a timing regime", "an executor"):
        assert change in changes, change
    assert any(c.startswith("a plugin") for c in changes)


def test_the_named_format_module_pattern_matches_the_registered_formats():
    from gemmreg.reporting import formats

    for name in formats.FORMATS:
        assert (ROOT / "core" / "reporting" / f"format_{name}.py").is_file(), name
