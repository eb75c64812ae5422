#!/usr/bin/env bash
# Session 13-15 device command: install the carried wheels, then run
#   lane.sh NAME BUDGET_S PART...   (PART as scripts/gpu-verdict-evidence.sh takes them,
#                                    or check:NAME:ARGS for a `gemmreg check`, run in the background)
# into /root/out/NAME, and pack it as $OUT/NAME.tgz (the device returns 8 files at most).
set -u
name=$1 budget=$2
shift 2
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export GEMMREG_GIT_COMMIT=${COMMIT:?set COMMIT}
dir=/root/out/$name
mkdir -p "$dir"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'; } >"$dir/machine.txt" 2>&1
pids=()
for part in "$@"; do
  case $part in
    check:*)
      rest=${part#check:}
      cname=${rest%%:*}
      args=${rest#*:}
      # shellcheck disable=SC2086
      (timeout "$budget" python3 -m gemmreg check $args --out "$dir/$cname" >"$dir/$cname.console.txt" 2>&1
       echo "exit $?" >>"$dir/$cname.console.txt") &
      pids+=($!)
      ;;
    *)
      var=BUDGET_${part%%:*}
      timeout "${!var:-$budget}" scripts/gpu-verdict-evidence.sh "$dir" "$part" 2>&1 | tee -a "$dir/lane.log" | grep -E "exit|vs torch_ref|bit-identical"
      ;;
  esac
done
for p in "${pids[@]}"; do wait "$p"; done
for f in "$dir"/*.console.txt; do case $f in *check*|*tuned-full*) tail -n 4 "$f";; esac; done
for run in "$dir"/tf32 "$dir"/tuned; do
  [ -d "$run" ] && python3 -m gemmreg report "$run" --verdicts >"$run-verdicts.txt" 2>&1 && cat "$run-verdicts.txt"
done
tar czf "$OUT/$name.tgz" -C /root/out "$name"
ls -la "$OUT"
