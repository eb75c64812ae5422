#!/usr/bin/env bash
# The main job: list the plugins, check them all, and compare two of them.
# On a machine with no GPU the Triton plugins run under Triton's interpreter and
# the HIP plugins are listed as unavailable, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
.venv/bin/gemmreg list
.venv/bin/gemmreg check
.venv/bin/gemmreg compare torch_ref triton_grouped
