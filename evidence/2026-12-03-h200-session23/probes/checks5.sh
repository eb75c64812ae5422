#!/usr/bin/env bash
# Session 23: session 22's c1 again at main's head, with the checker's sliced
# float64 reference (f7d5bd5): the split-K sweep (splitk:1), then all five
# `check --full` runs sharing one card, as in session 22, with the card's
# memory sampled every 2 s (memory.csv) so the sharing shows.
#   checks5.sh NAME BUDGET_S     (COMMIT set; run from the repository root)
set -u
name=$1 budget=$2
here=evidence
bash $here/2026-12-01-h200-session14/probes/lane.sh "$name" "$budget" splitk:1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 GEMMREG_GIT_COMMIT=$COMMIT
dir=/root/out/$name
nvidia-smi --query-gpu=timestamp,memory.used,memory.total --format=csv -l 2 >"$dir/memory.csv" 2>&1 &
smi=$!
(GEMMREG_TRITON_TUNED_TUNE=0 GEMMREG_TRITON_TUNED_PATH=gluon_ws timeout "$budget" \
   python3 -m gemmreg check triton_tuned --full --out "$dir/check-gluon" >"$dir/check-gluon.console.txt" 2>&1
 echo "exit $?" >>"$dir/check-gluon.console.txt") &
gluon=$!
bash $here/2026-12-02-h200-session17/probes/checks.sh "$name" "$budget"
wait "$gluon"
kill "$smi"
echo "== $dir/check-gluon.console.txt"; tail -n 4 "$dir/check-gluon.console.txt"
sort -t, -k2 -n "$dir/memory.csv" | tail -n 1
tar czf "$OUT/$name.tgz" -C /root/out "$name"
