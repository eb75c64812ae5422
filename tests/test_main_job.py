"""The README's main job (scripts/main.sh) can be run again: it owns its
output folder ($GEMMREG_MAIN_OUT, runs/main), and since a command refuses a
folder that already holds a run, every command it saves there must say
--force, or a second run stops at exit 2 with the first run's results."""

from __future__ import annotations

import re
from pathlib import Path

MAIN = Path(__file__).resolve().parent.parent / "scripts" / "main.sh"


def test_every_command_saving_into_the_main_jobs_folder_replaces_it():
    saving = [line for line in MAIN.read_text().splitlines() if re.search(r'--out "\$out/', line)]
    assert len(saving) >= 2, saving  # check and compare at least
    assert all("--force" in line for line in saving), saving
