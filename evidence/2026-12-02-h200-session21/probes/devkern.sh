#!/usr/bin/env bash
# Session 21: split-K's device-kernel figure is one process's (CUPTI, 40 rounds), so
# repeat the bench in bf16 at 128x128x32768 (0.99x in r3) and 32x8192x8192 to see
# how far one process's figure moves between processes:
#   devkern.sh NAME SEED...   (installs the carried wheels first)
set -u
name=$1
shift
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 GEMMREG_GIT_COMMIT=${COMMIT:?set COMMIT}
dir=/root/out/$name
mkdir -p "$dir"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv >"$dir/machine.txt" 2>&1
for seed in "$@"; do
  timeout 120 python3 -m gemmreg bench torch_ref splitk splitk_atomic --processes 12 \
    --shape 128x128x32768,32x8192x8192 --dtype bf16 --seed "$seed" \
    --out "$dir/seed-$seed" >"$dir/seed-$seed.console.txt" 2>&1
  echo "seed $seed exit $?"
  python3 -m gemmreg report "$dir/seed-$seed" >"$dir/seed-$seed-report.txt" 2>&1
  grep -E "^[0-9]+x[0-9]+x[0-9]+ (fp16|bf16)|^verdict: splitk(_atomic)? vs torch_ref|device kernels:" \
    "$dir/seed-$seed-report.txt" | cut -c1-120
  tar czf "$OUT/$name.tgz" -C /root/out "$name"  # after each seed: a cut-off run keeps what it did
done
