#!/usr/bin/env bash
# The verdict protocol's evidence on a GPU (issue "Verdicts that cannot be
# fooled"), one part per call so each fits a 10-minute device command:
#
#   smoke      the side-stream exploit, one A/A pair, and the wall time of
#              `gemmreg compare hip_tiled triton_grouped`
#   aa         A/A: twin_a vs twin_b (one torch.mm under two names), 7 runs at
#              each of 4096^3 bf16, 512^3 fp32 and 16x16x65536 bf16
#   known      a known difference: torch.mm plus one extra pass over C, 10 runs
#              at each of 8192^3 bf16 and 8192x8192x32768 bf16
#   stability  triton_tuned vs torch_ref at bf16 8192x4096x14336, three runs,
#              one at 4096^3, and an independent timer on two of them
#              (scripts/independent_timer.py: triton.testing.do_bench_cudagraph)
#   seed       the seed table: the five seed built-ins at 512^3 fp32
#
# PART:N runs N repetitions instead of the default (aa:2, known:3).
#
# Run from the repository root on the GPU machine, with gemmreg installed
# (see scripts/gpu-evidence.sh); the test plugins come from tests/timing_plugins.
#   scripts/gpu-verdict-evidence.sh OUT_DIR PART...
set -uo pipefail
out=${1:?usage: scripts/gpu-verdict-evidence.sh OUT_DIR PART...}
shift
python=${PYTHON:-python3}
export PYTHONPATH="$PWD/tests${PYTHONPATH:+:$PYTHONPATH}"
export GEMMREG_EXTRA_PLUGINS=timing_plugins.twins,timing_plugins.extra_pass,timing_plugins.side_stream
mkdir -p "$out"

compare() {  # compare DIR ARGS...: one run, its console and its wall time
  local dir=$out/$1
  shift
  local start=$SECONDS
  "$python" -m gemmreg compare "$@" --out "$dir" >"$dir.console.txt" 2>&1
  local rc=$?
  echo "exit $rc, wall $((SECONDS - start)) s: gemmreg compare $*" | tee -a "$dir.console.txt"
  grep -h "^verdict:" "$dir.console.txt"
}

for spec in "$@"; do
  part=${spec%%:*}
  count=${spec#*:}
  [ "$count" = "$spec" ] && count=""
  case $part in
    smoke)
      compare smoke-exploit torch_ref side_stream_mm --shape 4096x4096x4096 --dtype bf16
      compare smoke-aa-512 twin_a twin_b --shape 512x512x512 --dtype fp32
      compare smoke-seed-pair hip_tiled triton_grouped
      ;;
    aa)
      for i in $(seq 1 "${count:-7}"); do
        compare "aa-4096-bf16-$i" twin_a twin_b --shape 4096x4096x4096 --dtype bf16 --seed "$i"
        compare "aa-512-fp32-$i" twin_a twin_b --shape 512x512x512 --dtype fp32 --seed "$i"
        compare "aa-16x16x65536-bf16-$i" twin_a twin_b --shape 16x16x65536 --dtype bf16 --seed "$i"
      done
      ;;
    known)
      for i in $(seq 1 "${count:-10}"); do
        compare "known-8192-bf16-$i" torch_ref mm_extra_pass --shape 8192x8192x8192 --dtype bf16 --seed "$i"
      done
      for i in $(seq 1 "${count:-10}"); do
        compare "known-8192x8192x32768-bf16-$i" torch_ref mm_extra_pass --shape 8192x8192x32768 --dtype bf16 --seed "$i"
      done
      ;;
    stability)
      for i in $(seq 1 "${count:-3}"); do
        compare "stability-$i" torch_ref triton_tuned --shape 8192x4096x14336 --dtype bf16 --seed "$i"
      done
      compare stability-4096 torch_ref triton_tuned --shape 4096x4096x4096 --dtype bf16
      for run in stability-1 stability-4096; do
        "$python" scripts/independent_timer.py "$out/$run" | tee "$out/$run/independent-timer.txt"
      done
      ;;
    seed)
      compare seed-table hip_naive hip_tiled torch_ref triton_baseline triton_grouped --shape 512x512x512 --dtype fp32
      ;;
    *)
      echo "unknown part $part" >&2
      exit 2
      ;;
  esac
done
