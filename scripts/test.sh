#!/usr/bin/env bash
# The test suite: formatting, lint, types, then pytest (CPU only; about 10 minutes
# on a 2-core machine shared with other work, 7 minutes of CPU: mostly worker
# start-up and the interpreted Triton matrix; longer when others saturate it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh dev
.venv/bin/ruff format --check .
.venv/bin/ruff check .
.venv/bin/mypy
# gemmreg's own tests, then the example packages' tests: split-K's (its matrix
# through the gemmreg pytest plugin, its split choice and its determinism) and
# the minimal plugin's (its matrix: one line). In two pytest processes
# (pytest-xdist): most of the suite waits on the worker processes its tests
# start (a torch import each, a hang waited out), and one pytest process kept
# under one core busy. --dist loadfile hands out whole modules, so a module's
# fixtures (a command or a worker several tests read) still run once.
# Add -n 0 to run in this process only.
.venv/bin/pytest -n 2 --dist loadfile tests examples/gemmreg-splitk/tests examples/gemmreg-minimal/tests "$@"
