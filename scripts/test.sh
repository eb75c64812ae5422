#!/usr/bin/env bash
# The test suite: formatting, lint, types, then pytest (CPU only; about 8 minutes
# on a busy 2-core machine, 7 minutes of CPU: mostly worker start-up and the
# interpreted Triton matrix).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
.venv/bin/ruff format --check .
.venv/bin/ruff check .
.venv/bin/mypy
# gemmreg's own tests, then the example packages' tests: split-K's (its matrix
# through the gemmreg pytest plugin, its split choice and its determinism) and
# the minimal plugin's (its matrix: one line).
.venv/bin/pytest tests examples/gemmreg-splitk/tests examples/gemmreg-minimal/tests "$@"
