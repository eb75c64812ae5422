#!/usr/bin/env bash
# Create .venv with gemmreg installed (editable), its dev tools and the example
# third-party plugin package. Safe to rerun.
#
# torch: an existing torch in .venv is kept (a GPU machine keeps its CUDA or ROCm
# build); otherwise GEMMREG_TORCH is installed (default: torch==2.13.0, which on
# this project's CPU machines is the CPU build). constraints.txt pins the Triton
# and NumPy versions whose CPU interpreter gemmreg is tested with.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  .venv/bin/pip install -q "${GEMMREG_TORCH:-torch==2.13.0}"
fi
.venv/bin/pip install -q -c constraints.txt -e ".[dev]"
# The split-K example is a separate distribution, installed the way a user
# installs any third-party gemmreg plugin.
.venv/bin/pip install -q -c constraints.txt -e examples/gemmreg-splitk
