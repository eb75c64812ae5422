#!/usr/bin/env bash
# The GPU evidence run: list, the correctness check, and the seed's table
# (all five built-ins at 512x512x512 fp32) into OUT_DIR. Run on the GPU machine
# with gemmreg installed; for example, from a wheel built here with
# `pip wheel --no-deps -w .whl .`:
#
#   pip install --no-deps --no-index --target /tmp/site .whl/*.whl
#   PYTHONPATH=/tmp/site GEMMREG_GIT_COMMIT=<commit> scripts/gpu-evidence.sh "$OUT"
#
# GEMMREG_GIT_COMMIT records the commit in the manifests when the tree is a copy
# without .git.
set -euo pipefail
out=${1:?usage: scripts/gpu-evidence.sh OUT_DIR}
python=${PYTHON:-python3}
mkdir -p "$out"
"$python" -m gemmreg list > "$out/list.txt"
"$python" -m gemmreg check --out "$out/check"
"$python" -m gemmreg compare hip_naive hip_tiled torch_ref triton_baseline triton_grouped \
  --shape 512x512x512 --dtype fp32 --out "$out/seed-table"
