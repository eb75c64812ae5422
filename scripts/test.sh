#!/usr/bin/env bash
# The test suite: formatting, lint, types, then pytest (CPU only, ~2 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
.venv/bin/ruff format --check .
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/pytest "$@"
