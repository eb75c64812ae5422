#!/usr/bin/env bash
# The test suite: formatting, lint, types, then pytest (CPU only, ~2 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
.venv/bin/ruff format --check .
.venv/bin/ruff check .
.venv/bin/mypy
# gemmreg's own tests, then the split-K package's tests (its matrix through the
# gemmreg pytest plugin, its split choice and its determinism).
.venv/bin/pytest tests examples/gemmreg-splitk/tests "$@"
