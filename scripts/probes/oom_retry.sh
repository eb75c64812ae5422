#!/usr/bin/env bash
# Run on a GPU machine with gemmreg's wheels in .whl/ (those of 8e7ec79 ran):
#   COMMIT=<commit> scripts/probes/oom_retry.sh NAME   (results in $OUT/NAME.tgz)
# The out-of-memory retry of `check` (d651b14) with a real co-tenant:
# memory_holder.py takes all but 3 GiB of the card, the check of torch_ref's
# full fp16 row-major matrix starts, and the holder lets go once every case
# but one has settled (evidence/2026-12-03-h200-kernel-speed-verdicts/m1).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 GEMMREG_GIT_COMMIT=${COMMIT:?set COMMIT}
dir=/root/out/$1
mkdir -p "$dir"
here=$(dirname "$0")
nvidia-smi --query-gpu=name,uuid,driver_version,memory.total --format=csv >"$dir/machine.txt"
rm -f /tmp/held
python3 "$here/memory_holder.py" "$dir/check.err" >"$dir/holder.txt" 2>&1 &
holder=$!
while [ ! -e /tmp/held ] && kill -0 $holder 2>/dev/null; do sleep 0.2; done
timeout 150 python3 -m gemmreg check torch_ref --full --dtype fp16 --layout rowmajor -v --out "$dir/check" >"$dir/check.txt" 2>"$dir/check.err"
echo "exit $?" >>"$dir/check.txt"
wait $holder
cat "$dir/holder.txt"; grep -n "65600\|second try\|out of memory\|pass,\|exit" "$dir/check.txt" | cut -c1-400
tar czf "$OUT/$1.tgz" -C /root/out "$1"
