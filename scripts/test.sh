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
# gemmreg's own tests, then the split-K package's tests (its matrix through the
# gemmreg pytest plugin, its split choice and its determinism).
.venv/bin/pytest tests examples/gemmreg-splitk/tests "$@"
