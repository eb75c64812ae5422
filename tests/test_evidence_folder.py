"""evidence/ holds only what the docs cite, kept small: under 5 MB in all, one
folder per run named by its date and what it measured, each listed in
evidence/README.md's index (whose rows say what the folder shows)."""

from __future__ import annotations

import re
from pathlib import Path

EVIDENCE = Path(__file__).resolve().parent.parent / "evidence"
LIMIT_BYTES = 5_000_000


def test_evidence_stays_under_five_megabytes():
    total = sum(p.stat().st_size for p in EVIDENCE.rglob("*") if p.is_file())
    assert total < LIMIT_BYTES, f"evidence/ holds {total} bytes: keep only what the docs cite"


def test_every_run_folder_is_named_by_date_and_listed_in_the_index():
    index = (EVIDENCE / "README.md").read_text()
    folders = sorted(p.name for p in EVIDENCE.iterdir() if p.is_dir())
    assert folders, "no evidence folders found"
    for name in folders:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}-[a-z0-9]+(-[a-z0-9]+)+", name), name
        assert f"`{name}/`" in index, f"{name} is not in evidence/README.md's index"
