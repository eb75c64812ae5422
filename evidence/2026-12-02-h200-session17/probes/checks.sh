#!/usr/bin/env bash
# Session 17: both packages' full correctness matrices on the GPU, at once
# (correctness only, nothing timed), into /root/out/NAME/<check>/:
#   tuned-tma    triton_tuned --full on its TMA path   (no tuning: first candidate)
#   tuned-tiled  triton_tuned --full on its tiled path (no tuning: first candidate)
#   splitk       splitk splitk_atomic --full
#   all          every installed plugin, the default matrix
#   checks.sh NAME BUDGET_S   (after lane.sh's install: PYTHONPATH=/tmp/site)
set -u
dir=/root/out/$1 budget=$2
mkdir -p "$dir"
run() {  # run CHECK ENV... -- ARGS...
  local name=$1
  shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  (env "${envs[@]}" timeout "$budget" python3 -m gemmreg check "$@" --out "$dir/$name" \
     >"$dir/$name.console.txt" 2>&1
   echo "exit $?" >>"$dir/$name.console.txt") &
}
run tuned-tma GEMMREG_TRITON_TUNED_TUNE=0 GEMMREG_TRITON_TUNED_PATH=persistent_tma -- triton_tuned --full
run tuned-tiled GEMMREG_TRITON_TUNED_TUNE=0 GEMMREG_TRITON_TUNED_PATH=tiled -- triton_tuned --full
run splitk -- splitk splitk_atomic --full
run all --
wait
for f in "$dir"/*.console.txt; do echo "== $f"; tail -n 3 "$f"; done
