#!/usr/bin/env bash
# The verdict protocol's evidence on a GPU (verdicts that cannot be fooled,
# hostile plugins contained, the kernels' speed goals), one part per call so
# each fits a 10-minute device command:
#
#   smoke      the side-stream exploit, one A/A pair, and the wall time of
#              `gemmreg compare hip_tiled triton_grouped`
#   aa         A/A: twin_a vs twin_b (one torch.mm under two names) at each of
#              4096^3 bf16, 512^3 fp32 and 16x16x65536 bf16 (7 runs each)
#   known8192  a known difference: torch.mm plus one extra pass over C vs
#              torch.mm at 8192^3 bf16 (10 runs)
#   known32768 the same at 8192x8192x32768 bf16, about 1% (10 runs)
#   stability  triton_tuned vs torch_ref at bf16 8192x4096x14336 (3 runs),
#              one at 4096^3, and an independent timer on two of them
#              (scripts/independent_timer.py: triton.testing.do_bench_cudagraph)
#   aabench    A/A as sweeps: one `gemmreg bench twin_a twin_b` per repetition
#              over 4096^3, 512^3 and 16x16x65536 in bf16 and fp32 (6 points,
#              the compare defaults: --max-time 3), workers reused across points
#   knownbench the known difference as sweeps: one `gemmreg bench torch_ref
#              mm_extra_pass` per repetition over 8192^3 and 8192x8192x32768
#              bf16 with --max-time 3 (10 repetitions)
#   splitk     `gemmreg bench torch_ref splitk splitk_atomic
#              triton_grouped` over the four skinny split-K shapes in fp16 and
#              bf16 (one launch per call; both regimes: end-to-end and
#              device-kernel), the verdict table, the full report with every
#              regime per pair, and a bit-for-bit check of deterministic splitk
#              on the GPU (splitk-determinism.txt); needs gemmreg-splitk
#              installed too (`pip wheel --no-deps -w .whl examples/gemmreg-splitk`)
#   splitkpairs the split-K goals as pairs only (torch_ref, splitk, splitk_atomic) over
#              10 processes ($SPLITKPAIRS_PROCESSES): fewer pairs and more processes
#              narrow every interval (an INCONCLUSIVE 64x4096x16384 bf16 on the H200 said
#              about 15-17 would settle it; 16 take about 370 s); the device-kernel
#              regime judged across 5 profiling processes ($SPLITKPAIRS_DEVICE_PROCESSES)
#   trace      `gemmreg compare hip_tiled triton_grouped` with GEMMREG_TRACE=1:
#              its wall time, phase by phase (trace:2 twice: the first on a
#              fresh machine also pays for a cold page cache)
#   tracebench one process of the sweep's six kernels at 256^3 and 8192^3
#              fp32 with GEMMREG_TRACE=1: where a sweep point's time goes
#   startup    what a worker's start-up costs on this machine: importing torch,
#              triton and gemmreg's plugins, the CUDA context, one alone and
#              eight at once (startup.txt)
#   aa512      A/A at 512^3 only, bf16 and fp32, as sweeps (3 repetitions)
#   seed       the seed table: the five seed built-ins at 512^3 fp32
#   sweep      `gemmreg bench` of the five seed built-ins and triton_tuned over
#              256..8192 (powers of two) in fp32, fp16 and bf16, with plots
#   hostile    a plugin that poisons the CUDA context and one that hangs on
#              the GPU, in check and compare beside torch_ref
#   ncu        compare torch_ref triton_tuned at 4096^3 bf16 with --ncu=triton_tuned
#              (the report and its CSV in the run's profiler/), then --nsys
#   device1    `compare --device 1` with nvidia-smi sampling both GPUs: the
#              work must show on GPU 1 alone (two-GPU machine)
#   comparedev `compare torch_ref triton_grouped` with `--devices 0`, then `all`
#   grouped    triton_tuned's grouped path (an MoE layer's experts): check --grouped in
#              fp16 and bf16 (GROUPED_CHECK=0 skips it), then a 5-process bench against
#              torch_ref's loop of torch.mm over examples/shapes/moe-experts.yaml
#              (Mixtral 8x7B's expert projections)
#   fp8        triton_tuned's fp8 path: check against the fp8 matrix (both scalings, every
#              output dtype, A row-major with B either way round), then 5-process benches
#              against torch_ref_fp8 (torch._scaled_mm, cuBLASLt) at 4096^3 and 8192^3 and
#              over Llama 3 8B's projections in fp8e4m3, rowwise scales, bf16 C
#   fp8llm     the fp8 part's LLM bench alone: $FP8_TOKENS (e.g. 1,16) keeps those token
#              counts, so that each share fits a 10-minute command (fp8 takes it too);
#              $FP8_NAMES (e.g. down_proj) keeps the projections whose name holds it;
#              $FP8_PROCESSES (default 5) sets --processes; $FP8_BUDGET=S runs --budget S
#              instead (processes added until each pair is decided); $FP8_SWEEP_WIDE=1
#              adds --sweep-wide (the points judged together, the looks aimed there)
#   gluoncheck `gemmreg check triton_tuned --full` (fp16, bf16; both B layouts) with each
#              of the Gluon kernel's 128x128 forms named (GEMMREG_TRITON_TUNED_CONFIG), so
#              every one runs over the whole matrix ($GLUONCHECK_CONFIGS: those names)
#   piecescheck the same with each of the TMA split-K path's tiles in pieces named
#              ($PIECESCHECK_CONFIGS): they run wherever that path is offered (M > 32
#              where 128x256 tiles leave SMs idle)
#   tf32check  the same in fp32 with each of the TF32 Gluon kernel's configs named
#              ($TF32CHECK_CONFIGS): row-major A and B run it, other layouts the fallback
#   tf32gluon  `bench torch_ref_tf32 triton_tuned` at 4096^3 and 8192^3 fp32, 3 processes,
#              with each of those configs named and untuned: the Gluon kernel's own speed
#   configprobe every candidate config of triton_tuned's fp8 and grouped paths beside
#              torch._scaled_mm and the torch.mm loop (scripts/probes/fp8_grouped_configs.py):
#              what their rules are to be set from ($CONFIGPROBE_ONLY=fp8 or grouped: one
#              path, so that each fits a 10-minute command; $CONFIGPROBE_MATCH: only the
#              candidates whose name holds that text, beside each rule's own, e.g. tma: for
#              the fp8 TMA kernel's; $CONFIGPROBE_TOKENS: the LLM token counts of fp8's points)
#   sweepone   the sweep above with `--devices 0` (the one-GPU figure that
#              the multi-GPU sweeps are measured against)
#   sweepall   the same sweep with `--devices all`, and its verdicts matched
#              against sweepone's (scripts/verdict_match.py)
#   sweepray   the same sweep through a local Ray head (`--ray local`: one warm
#              actor per GPU), Ray installed first from wheels under .raywheels/
#              if not importable; its verdicts matched against sweepone's and
#              sweepall's, and each run's wall time against sweepone's
#              (sweep-speed.txt). SWEEP_PROCESSES=N gives the three sweeps
#              `--processes N` (5: the fixed count of the committed two-GPU runs,
#              evidence/2026-11-30-h200-two-gpu-sweeps, whose one-GPU sweep fit a
#              10-minute command; unset: the sequential default)
#   tf32       `bench torch_ref_tf32 triton_tuned` at the four large shapes
#              (4096^3, 8192^3, 8192x14336x4096, 8192x4096x14336) in fp32: TF32 against cuBLAS TF32
#   tuned      `bench torch_ref triton_tuned` at those shapes in fp16 and bf16
#   tunedpoints `bench torch_ref triton_tuned` at $TUNED_POINTS (MxNxK,...) in $TUNED_DTYPES
#              (default bf16,fp16), B a transposed view as at the LLM points, 5 processes:
#              a few points judged again after a change of the tuner's lists (with
#              GEMMREG_TRITON_TUNED_UNMEASURED=1, the forms no GPU has checked offered too)
#   ncubench   `bench torch_ref triton_tuned --ncu=triton_tuned` at 4096^3 and
#              8192^3 bf16: a profile per point, checked against the timed kernels
#   sigterm    gemmreg killed with SIGTERM while a worker hangs on the GPU
#              (no worker may survive)
#   cheats     the kernels that skip work (skip on repeat, cache by identity,
#              skip when timed, skip unless profiled) against torch_ref at a
#              launch-, a memory- and a compute-bound shape, bf16: each must
#              end FAILED or INVALID, never FASTER
#   honest     honest multi-launch kernels (split-K, split-K atomic, a
#              three-op split-K, an extra pass over C) against torch_ref at
#              the four skinny split-K shapes, bf16: their verdicts stand
#   decodeprobe torch.mm and triton_tuned's candidates at the decode and 128-token LLM
#              points, five clocks each (scripts/probe_decode_kernels.py; $DECODEPROBE_POINTS,
#              $DECODEPROBE_DTYPE, $DECODEPROBE_ONLY: its --points, --dtype and --only;
#              GEMMREG_TRITON_TUNED_UNMEASURED=1 times the forms no GPU has run too)
#   tunedllm   triton_tuned against cuBLAS over the 20 LLM projections, bf16 and fp16:
#              the tuner's choices, then a 5-process bench (scripts/tune_triton_tuned_llm.py);
#              TUNEDLLM_SKIP_TUNE=1 runs the bench alone (its cold starts tune, and the run's
#              tuning record says why each point chose its kernel): about two minutes less a
#              half, so that both dtypes' four halves fit one session's device time
#   aallm      A/A over Llama 3 8B's 20 projection shapes: one `bench` of
#              twin_a and twin_b (one torch.mm under two names) with the
#              default sequential budget
#
# PART:N runs N repetitions, PART:FROM-TO repetitions FROM..TO (the
# repetition number is also the seed). Every console line is stamped with the
# seconds since its command started, so the wall time of each phase shows.
# Lanes on separate GPUs can run at once: CUDA_VISIBLE_DEVICES=1 $0 OUT2 ...
#
# Run from the repository root on the GPU machine, with gemmreg installed
# (see scripts/gpu-evidence.sh); the test plugins come from tests/.
#   scripts/gpu-verdict-evidence.sh OUT_DIR PART...
set -uo pipefail
out=${1:?usage: scripts/gpu-verdict-evidence.sh OUT_DIR PART...}
shift
python=${PYTHON:-python3}
export PYTHONPATH="$PWD/tests${PYTHONPATH:+:$PYTHONPATH}"
export GEMMREG_EXTRA_PLUGINS=timing_plugins.twins,timing_plugins.extra_pass,timing_plugins.side_stream,timing_plugins.split_k,timing_plugins.skip_on_repeat,timing_plugins.cache_by_identity,timing_plugins.detects_timing,timing_plugins.unless_profiled
export PYTHONUNBUFFERED=1
mkdir -p "$out"

stamp() {  # prefix each line with the seconds since the command started
  "$python" -c '
import sys, time
start = time.monotonic()
for line in sys.stdin:
    sys.stdout.write(f"[{time.monotonic() - start:7.2f}s] {line}")
    sys.stdout.flush()
'
}

gemmreg() {  # gemmreg NAME ARGS...: one command, its stamped console and wall time
  local name=$1
  shift
  local start=$SECONDS
  # triton_tuned's tunings (why it chose what report --kernels shows), one file per command
  { GEMMREG_TRITON_TUNED_RECORD=${GEMMREG_TRITON_TUNED_RECORD:-$out/$name.tuning.json} \
    "$python" -m gemmreg "$@" 2>&1; echo "exit $?"; } | stamp >"$out/$name.console.txt"
  local rc
  rc=$(tail -n 1 "$out/$name.console.txt" | sed 's/.*exit //')
  echo "exit $rc, wall $((SECONDS - start)) s: gemmreg $*" | tee -a "$out/$name.console.txt"
  grep -h "verdict:" "$out/$name.console.txt" | sed 's/^\[[ 0-9.]*s\] //'
}

config_check() {  # config_check DTYPES CONFIG...: check --full of triton_tuned in those dtypes
  # with each config named (GEMMREG_TRITON_TUNED_CONFIG), untuned, wherever its path is offered
  local dtypes=$1 config name
  shift
  for config in "$@"; do
    name=configcheck-${config//:/-}
    GEMMREG_TRITON_TUNED_UNMEASURED=1 GEMMREG_TRITON_TUNED_TUNE=0 GEMMREG_TRITON_TUNED_CONFIG=$config \
      gemmreg "$name" check triton_tuned --full --dtype "$dtypes" --layout rowmajor,transposedB \
      --out "$out/$name"
    grep -h " pass, .* fail" "$out/$name.console.txt"
  done
}

tf32_configs=${TF32CHECK_CONFIGS:-gluon_tf32:128x256x32-s4-w4 gluon_tf32:128x256x32-s3-w4}

compare() {  # compare DIR ARGS...: one saved comparison
  local dir=$1
  shift
  gemmreg "$dir" compare "$@" --out "$out/$dir"
}

fp8_llm() {  # Llama 3 8B's projections in fp8e4m3 ($FP8_TOKENS: those token counts only)
  tokens=${FP8_TOKENS:-all}
  tokens=${tokens//,/-}${FP8_NAMES:+-${FP8_NAMES//[^a-z0-9]/}}
  sed 's/dtype: bf16/dtype: fp8e4m3/' examples/shapes/llm-projections.yaml |
    "$python" -c '
import re, sys
keep = {int(t) for t in sys.argv[1].split(",") if t.strip()}
names = sys.argv[2]
for line in sys.stdin:
    found = re.search(r"\bm: (\d+),", line)
    if found and keep and int(found.group(1)) not in keep:
        continue
    if found and names and names not in line:
        continue
    sys.stdout.write(line)
' "${FP8_TOKENS:-}" "${FP8_NAMES:-}" >"$out/llm-fp8-$tokens.yaml"
  llm_run=fp8-llm
  [ -n "${FP8_TOKENS:-}${FP8_NAMES:-}" ] && llm_run=fp8-llm-$tokens
  local count=(--processes "${FP8_PROCESSES:-5}")
  [ -n "${FP8_BUDGET:-}" ] && count=(--budget "$FP8_BUDGET")
  [ -n "${FP8_SWEEP_WIDE:-}" ] && count+=(--sweep-wide)  # the points judged together
  gemmreg "$llm_run" bench torch_ref_fp8 triton_tuned --shapes "$out/llm-fp8-$tokens.yaml" \
    --scaling rowwise "${count[@]}" --out "$out/$llm_run"
}

range() {  # range SPEC DEFAULT_COUNT: the repetition numbers a PART:... asks for
  local spec=$1 default=$2
  case $spec in
    *-*) seq "${spec%-*}" "${spec#*-}" ;;
    "") seq 1 "$default" ;;
    *) seq 1 "$spec" ;;
  esac
}

for spec in "$@"; do
  part=${spec%%:*}
  count=${spec#*:}
  [ "$count" = "$spec" ] && count=""
  case $part in
    smoke)
      compare smoke-seed-pair hip_tiled triton_grouped
      compare smoke-exploit torch_ref side_stream_mm --shape 4096x4096x4096 --dtype bf16
      compare smoke-aa-512 twin_a twin_b --shape 512x512x512 --dtype fp32
      ;;
    cheats)
      gemmreg cheats bench torch_ref skip_on_repeat cache_by_identity detects_timing \
        mm_unless_profiled --shape 16x16x65536,64x4096x16384,4096x4096x4096 --dtype bf16 \
        --out "$out/cheats"
      gemmreg cheats-verdicts report "$out/cheats" --verdicts
      ;;
    honest)
      gemmreg honest bench torch_ref splitk splitk_atomic split_k_mm mm_extra_pass \
        --shape 16x16x65536,128x128x32768,64x4096x16384,32x8192x8192 --dtype bf16 \
        --out "$out/honest"
      gemmreg honest-verdicts report "$out/honest" --verdicts
      ;;
    aallm)
      gemmreg aallm bench twin_a twin_b --shapes examples/shapes/llm-projections.yaml \
        --out "$out/aallm"
      gemmreg aallm-verdicts report "$out/aallm" --verdicts
      ;;
    aa)
      for i in $(range "$count" 7); do
        compare "aa-4096-bf16-$i" twin_a twin_b --shape 4096x4096x4096 --dtype bf16 --seed "$i"
        compare "aa-512-fp32-$i" twin_a twin_b --shape 512x512x512 --dtype fp32 --seed "$i"
        compare "aa-16x16x65536-bf16-$i" twin_a twin_b --shape 16x16x65536 --dtype bf16 --seed "$i"
      done
      ;;
    known8192)
      for i in $(range "$count" 10); do
        compare "known-8192-bf16-$i" torch_ref mm_extra_pass --shape 8192x8192x8192 --dtype bf16 --seed "$i"
      done
      ;;
    known32768)
      for i in $(range "$count" 10); do
        compare "known-8192x8192x32768-bf16-$i" torch_ref mm_extra_pass --shape 8192x8192x32768 --dtype bf16 --seed "$i"
      done
      ;;
    stability)
      for i in $(range "$count" 3); do
        compare "stability-$i" torch_ref triton_tuned --shape 8192x4096x14336 --dtype bf16 --seed "$i"
      done
      compare stability-4096 torch_ref triton_tuned --shape 4096x4096x4096 --dtype bf16
      for run in stability-1 stability-4096; do
        "$python" scripts/independent_timer.py "$out/$run" 2>&1 | tee "$out/$run/independent-timer.txt"
      done
      ;;
    aabench)
      for i in $(range "$count" 7); do
        gemmreg "aabench-$i" bench twin_a twin_b --shape 4096x4096x4096,512x512x512,16x16x65536 \
          --dtype bf16,fp32 --max-time 3 --seed "$i" --out "$out/aabench-$i"
        gemmreg "aabench-$i-verdicts" report "$out/aabench-$i" --verdicts
        grep " vs " "$out/aabench-$i-verdicts.console.txt"
      done
      ;;
    trace)
      for i in $(range "$count" 1); do
        GEMMREG_TRACE=1 compare "trace-seed-pair-$i" hip_tiled triton_grouped
      done
      ;;
    tracebench)
      GEMMREG_TRACE=1 gemmreg tracebench bench hip_naive hip_tiled torch_ref triton_baseline \
        triton_grouped triton_tuned --shape 256,8192 --dtype fp32 --processes 1 --out "$out/tracebench"
      ;;
    startup)
      {
        for what in "import torch" "import torch, triton" \
          "from gemmreg.discovery import registry; registry.discover()" \
          "import torch; torch.zeros(1, device='cuda'); torch.cuda.synchronize()" \
          "from gemmreg.discovery import registry; from gemmreg.contract import backend; registry.discover(); backend.initialize_device()"; do
          "$python" - "$what" <<'PY'
import subprocess, sys, time
what = sys.argv[1]
for n in (1, 8):
    start = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-c", what], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(n)]
    codes = [p.wait() for p in procs]
    print(f"{'one' if n == 1 else 'eight'}: {time.monotonic() - start:6.2f} s  {what}" + ("" if not any(codes) else f"  (exit {codes})"))
PY
        done
        "$python" -X importtime -c "from gemmreg.discovery import registry; registry.discover()" 2>&1 |
          sort -t'|' -k2 -n | tail -40
      } >"$out/startup.txt" 2>&1
      head -12 "$out/startup.txt"
      ;;
    aa512)
      for i in $(range "$count" 3); do
        gemmreg "aa512-$i" bench twin_a twin_b --shape 512x512x512 \
          --dtype bf16,fp32 --max-time 3 --seed "$i" --out "$out/aa512-$i"
        gemmreg "aa512-$i-verdicts" report "$out/aa512-$i" --verdicts
        grep " vs " "$out/aa512-$i-verdicts.console.txt"
      done
      ;;
    knownbench)
      for i in $(range "$count" 10); do
        gemmreg "knownbench-$i" bench torch_ref mm_extra_pass --shape 8192x8192x8192,8192x8192x32768 \
          --dtype bf16 --max-time 3 --seed "$i" --out "$out/knownbench-$i"
        gemmreg "knownbench-$i-verdicts" report "$out/knownbench-$i" --verdicts
        grep " vs " "$out/knownbench-$i-verdicts.console.txt"
      done
      ;;
    splitkpairs)
      # the split-K speed goals as pairs only: torch_ref, splitk and splitk_atomic (3 pairs,
      # so a narrower Bonferroni interval than splitk's 6) over 10 processes (or
      # $SPLITKPAIRS_PROCESSES); the ratio to triton_grouped is splitk's part
      for i in $(range "$count" 1); do
        gemmreg "splitkpairs-$i" bench torch_ref splitk splitk_atomic \
          --processes "${SPLITKPAIRS_PROCESSES:-10}" \
          --device-processes "${SPLITKPAIRS_DEVICE_PROCESSES:-5}" \
          --shape 16x16x65536,128x128x32768,64x4096x16384,32x8192x8192 \
          --dtype fp16,bf16 --seed "$i" --out "$out/splitkpairs-$i"
        gemmreg "splitkpairs-$i-verdicts" report "$out/splitkpairs-$i" --verdicts
        grep " vs " "$out/splitkpairs-$i-verdicts.console.txt"
        gemmreg "splitkpairs-$i-report" report "$out/splitkpairs-$i"
      done
      ;;
    splitk)
      if ! "$python" -c "import gemmreg_splitk" 2>/dev/null; then
        echo "splitk: gemmreg-splitk is not installed (pip install examples/gemmreg-splitk)" >&2
        continue
      fi
      for i in $(range "$count" 1); do
        gemmreg "splitk-$i" bench torch_ref splitk splitk_atomic triton_grouped \
          --shape 16x16x65536,128x128x32768,64x4096x16384,32x8192x8192 \
          --dtype fp16,bf16 --seed "$i" --out "$out/splitk-$i"
        gemmreg "splitk-$i-verdicts" report "$out/splitk-$i" --verdicts
        grep " vs " "$out/splitk-$i-verdicts.console.txt"
        # --verdicts shows the end-to-end verdict (and a note where regimes
        # disagree); the full report lists, under each point, the graph-replay
        # regime's verdict and the device-kernel ratio (CUPTI) for each pair.
        gemmreg "splitk-$i-report" report "$out/splitk-$i"
        grep -E "^\[[ 0-9.]*s\] ([0-9]+x[0-9]+x[0-9]+ |verdict:|  (graph|device))" \
          "$out/splitk-$i-report.console.txt" |
          sed 's/^\[[ 0-9.]*s\] //'
      done
      "$python" - <<'PY' 2>&1 | tee "$out/splitk-determinism.txt"
import gemmreg, torch
from gemmreg import Problem
from gemmreg_splitk import heuristics, plugin
for m, n, k in [(64, 4096, 16384), (16, 16, 65536), (128, 128, 32768)]:
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    launch = plugin.make_prepare(False)(Problem(m=m, n=n, k=k, dtype="bf16"))
    outs = []
    for _ in range(5):
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        launch(a, b, c)
        outs.append(c)
    torch.cuda.synchronize()
    same = all(torch.equal(outs[0].view(torch.int16), o.view(torch.int16)) for o in outs[1:])
    err = (outs[0].float() - (a.float() @ b.float())).abs().max().item()
    config = heuristics.choose(m, n, k, plugin.target(gemmreg.where()))
    print(f"splitk {m}x{n}x{k} bf16, 5 calls: bit-identical {same}, max abs error vs fp32 {err:.3g}; {config}")
PY
      ;;
    seed)
      compare seed-table hip_naive hip_tiled torch_ref triton_baseline triton_grouped --shape 512x512x512 --dtype fp32
      ;;
    sweep)
      gemmreg sweep bench hip_naive hip_tiled torch_ref triton_baseline triton_grouped triton_tuned \
        --shape 256,512,1024,2048,4096,8192 --dtype fp32,fp16,bf16 --out "$out/sweep"
      gemmreg sweep-report report "$out/sweep" --plot "$out/sweep/plots"
      ;;
    hostile)
      export GEMMREG_EXTRA_PLUGINS=fake_plugins.gpu_poison,fake_plugins.gpu_hang
      gemmreg hostile-list list
      gemmreg hostile-check-poison check fake_gpu_poison torch_ref --out "$out/hostile-check-poison"
      compare hostile-compare-poison torch_ref fake_gpu_poison --shape 1024x1024x1024 --dtype fp32
      gemmreg hostile-check-hang check fake_gpu_hang torch_ref --timeout 30 --out "$out/hostile-check-hang"
      compare hostile-compare-hang torch_ref fake_gpu_hang --shape 1024x1024x1024 --dtype fp32 --timeout 30
      export GEMMREG_EXTRA_PLUGINS=timing_plugins.twins,timing_plugins.extra_pass,timing_plugins.side_stream,timing_plugins.split_k,timing_plugins.skip_on_repeat,timing_plugins.cache_by_identity,timing_plugins.detects_timing,timing_plugins.unless_profiled
      ;;
    ncu)
      # the profiler hook: triton_tuned against torch_ref, then
      # triton_tuned once more under Nsight Compute (clocks unlocked); and
      # --nsys, refused in one line where nsys is not on PATH
      compare ncu-4096-bf16 torch_ref triton_tuned --shape 4096x4096x4096 --dtype bf16 --ncu=triton_tuned
      ls "$out/ncu-4096-bf16/profiler"
      head -30 "$out/ncu-4096-bf16/profiler/"*.csv
      compare nsys-4096-bf16 torch_ref triton_tuned --shape 4096x4096x4096 --dtype bf16 --nsys=triton_tuned
      ;;
    tf32)
      # triton_tuned's fp32 (TF32) against cuBLAS TF32 (torch_ref_tf32), like for like
      gemmreg tf32 bench torch_ref_tf32 triton_tuned \
        --shape 4096,8192,8192x14336x4096,8192x4096x14336 --dtype fp32 --out "$out/tf32"
      ;;
    tuned)
      # triton_tuned against cuBLAS at the four large shapes, fp16 and bf16
      gemmreg tuned bench torch_ref triton_tuned \
        --shape 4096,8192,8192x14336x4096,8192x4096x14336 --dtype fp16,bf16 --out "$out/tuned"
      ;;
    tunedpoints)
      gemmreg tuned-points bench torch_ref triton_tuned --shape "${TUNED_POINTS:?TUNED_POINTS=MxNxK,...}" \
        --dtype "${TUNED_DTYPES:-bf16,fp16}" --layout transposedB --processes 5 --out "$out/tuned-points"
      ;;
    decodeprobe)
      # where a decode GEMM's time goes: torch.mm and triton_tuned's candidates at the
      # LLM points of 1, 16 and 128 tokens, five clocks each (scripts/probe_decode_kernels.py)
      "$python" scripts/probe_decode_kernels.py --out "$out/decodeprobe.json" \
        ${DECODEPROBE_POINTS:+--points "$DECODEPROBE_POINTS"} \
        ${DECODEPROBE_DTYPE:+--dtype "$DECODEPROBE_DTYPE"} ${DECODEPROBE_ONLY:+--only "$DECODEPROBE_ONLY"} \
        2>&1 | stamp >"$out/decodeprobe.console.txt"
      tail -n 60 "$out/decodeprobe.console.txt"
      ;;
    tunedllm)
      # triton_tuned against cuBLAS over Llama 3 8B's 20 projections, bf16 then fp16:
      # the tuner's choices (with the winner beside torch.mm), then a 5-process bench
      # ($TUNEDLLM_DTYPES, default "bf16 fp16"; $TUNEDLLM_POINTS, e.g. 1,16,128: those
      # token counts only, so that each half fits a 10-minute command; $TUNEDLLM_BUDGET=S:
      # --budget S instead of 5 processes); each dtype's tunings recorded beside its run
      for dtype in ${TUNEDLLM_DTYPES:-bf16 fp16}; do
        GEMMREG_TRITON_TUNED_RECORD=${GEMMREG_TRITON_TUNED_RECORD:-$out/tunedllm-$dtype.tuning.json} \
          "$python" scripts/tune_triton_tuned_llm.py --out "$out/tunedllm-$dtype" --dtype "$dtype" \
          ${TUNEDLLM_POINTS:+--points "$TUNEDLLM_POINTS"} ${TUNEDLLM_BUDGET:+--budget "$TUNEDLLM_BUDGET"} \
          ${TUNEDLLM_SKIP_TUNE:+--skip-tune} \
          2>&1 | stamp >"$out/tunedllm-$dtype.console.txt"
        grep -h "geometric\|weighted" "$out/tunedllm-$dtype.console.txt"
      done
      ;;
    ncubench)
      # bench --ncu: the kernel profiled at every point of a sweep
      gemmreg ncubench bench torch_ref triton_tuned --shape 4096,8192 --dtype bf16 \
        --ncu=triton_tuned --out "$out/ncubench"
      "$python" -c '
import json, sys
for e in json.load(open(sys.argv[1]))["profilers"]:
    print(e["problem"], e["status"], e.get("profiled_kernels"), e.get("timed_kernels"), e["reason"])
' "$out/ncubench/manifest.json" | tee "$out/ncubench-profilers.txt"
      ;;
    device1)
      nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader,nounits \
        -lms 200 >"$out/device1-smi.csv" &
      smi=$!
      sleep 1
      compare device1 torch_ref triton_grouped --shape 4096x4096x4096 --dtype bf16 --device 1
      kill "$smi"
      "$python" - "$out/device1-smi.csv" <<'PY' | tee "$out/device1-smi-summary.txt"
import sys
peak = {}
for line in open(sys.argv[1]):
    index, util, mem = (field.strip() for field in line.split(","))
    busy, most = peak.get(index, (0, 0))
    peak[index] = (max(busy, int(util)), max(most, int(mem)))
for index, (busy, most) in sorted(peak.items()):
    print(f"GPU {index}: highest utilization {busy}%, most memory used {most} MiB")
PY
      ;;
    comparedev)
      # compare --devices: the timed processes one per GPU, side by side
      compare comparedev-one torch_ref triton_grouped --shape 4096x4096x4096 --dtype bf16 --devices 0
      compare comparedev-all torch_ref triton_grouped --shape 4096x4096x4096 --dtype bf16 --devices all
      ;;
    grouped)
      [ "${GROUPED_CHECK:-1}" = 0 ] ||  # 0: the bench alone (the check passed at these kernels)
      gemmreg grouped-check check triton_tuned torch_ref --grouped --dtype fp16,bf16 \
        --layout rowmajor,transposedB --out "$out/grouped-check"
      gemmreg grouped bench torch_ref triton_tuned --shapes examples/shapes/moe-experts.yaml \
        --processes 5 --out "$out/grouped"
      gemmreg grouped-verdicts report "$out/grouped" --verdicts
      sed 's/^\[[ 0-9.]*s\] //' "$out/grouped-verdicts.console.txt" | tee "$out/grouped-verdicts.txt"
      ;;
    fp8)
      gemmreg fp8-check check triton_tuned torch_ref_fp8 --dtype fp8e4m3 \
        --layout rowmajor,transposedB --out "$out/fp8-check"
      gemmreg fp8-squares bench torch_ref_fp8 triton_tuned --shape 4096,8192 --dtype fp8e4m3 \
        --layout transposedB --scaling rowwise --processes 5 --out "$out/fp8-squares"
      fp8_llm
      for run in fp8-squares "$llm_run"; do
        gemmreg "$run-verdicts" report "$out/$run" --verdicts
      done
      ;;
    fp8llm)
      # the LLM file alone ($FP8_TOKENS, e.g. 1,16: those token counts only, so that
      # each share fits a 10-minute command; `report --parts` reads the shares as one)
      fp8_llm
      gemmreg "$llm_run-verdicts" report "$out/$llm_run" --verdicts
      ;;
    gluoncheck)
      # each named Gluon config over the whole correctness matrix, untuned, wherever
      # its path is offered (GEMMREG_TRITON_TUNED_CONFIG): the 128x128 forms the tuner
      # offers only where 128x256 tiles leave SMs idle ($GLUONCHECK_CONFIGS)
      config_check fp16,bf16 ${GLUONCHECK_CONFIGS:-gluon_ws:128x128x64-s4-w4 gluon_ws:128x128x64-s5-w4 gluon_ws:128x128x64-s6-w4 gluon_ws:128x128x128-s3-w4}
      ;;
    piecescheck)
      config_check fp16,bf16 ${PIECESCHECK_CONFIGS:-tma_split_k:128x64x128-s3-w8-k1-p3 tma_split_k:128x64x64-s6-w8-k1-p3}
      ;;
    tf32check)
      config_check fp32 $tf32_configs
      ;;
    tf32gluon)
      for config in $tf32_configs; do
        GEMMREG_TRITON_TUNED_UNMEASURED=1 GEMMREG_TRITON_TUNED_TUNE=0 GEMMREG_TRITON_TUNED_CONFIG=$config \
          gemmreg "tf32gluon-${config//:/-}" bench torch_ref_tf32 triton_tuned --shape 4096,8192 \
          --dtype fp32 --processes 3 --out "$out/tf32gluon-${config//:/-}"
      done
      ;;
    configprobe)
      probe="configprobe${CONFIGPROBE_ONLY:+-$CONFIGPROBE_ONLY}"
      "$python" scripts/probes/fp8_grouped_configs.py --out "$out/$probe.json" \
        ${CONFIGPROBE_ONLY:+--only "$CONFIGPROBE_ONLY"} ${CONFIGPROBE_MATCH:+--match "$CONFIGPROBE_MATCH"} \
        ${CONFIGPROBE_TOKENS:+--fp8-tokens "$CONFIGPROBE_TOKENS"} \
        2>&1 | stamp >"$out/$probe.console.txt"
      tail -n 80 "$out/$probe.console.txt"
      ;;
    sweepone | sweepall)
      devices=0
      [ "$part" = sweepall ] && devices=all
      gemmreg "$part" bench hip_naive hip_tiled torch_ref triton_baseline triton_grouped triton_tuned \
        --shape 256,512,1024,2048,4096,8192 --dtype fp32,fp16,bf16 --devices "$devices" --out "$out/$part" \
        ${SWEEP_PROCESSES:+--processes "$SWEEP_PROCESSES"}
      if [ "$part" = sweepall ] && [ -d "$out/sweepone" ]; then
        "$python" scripts/verdict_match.py "$out/sweepone" "$out/sweepall" | tee "$out/sweep-match.txt"
      fi
      ;;
    sweepray)
      if ! "$python" -c "import ray" 2>/dev/null; then
        mkdir -p /tmp/raywheels
        cat .raywheels/*/ray.part.* >/tmp/raywheels/"$(cat .raywheels/a/ray.name)"
        # Ray's dependencies only where this Python lacks them: a copy under
        # PYTHONPATH would shadow the machine's own (attrs, packaging, ...).
        missing=$("$python" - .raywheels/*/deps/*.whl <<'PY'
import importlib.util, sys
modules = {"attrs": "attr", "protobuf": "google.protobuf", "pyyaml": "yaml", "rpds_py": "rpds"}
for wheel in sys.argv[1:]:
    project = wheel.rsplit("/", 1)[-1].split("-")[0].lower()
    module = modules.get(project, project)
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        print(wheel)
PY
)
        echo "installing ray and: ${missing:-no dependency}" | tee "$out/sweepray-install.txt"
        # shellcheck disable=SC2086
        "$python" -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-ray \
          /tmp/raywheels/*.whl $missing 2>&1 | tail -3
        export PYTHONPATH="$PYTHONPATH:/tmp/site-ray"
      fi
      "$python" -c "import ray; print('ray', ray.__version__)" 2>&1 | tee "$out/sweepray-ray.txt"
      gemmreg "$part" bench hip_naive hip_tiled torch_ref triton_baseline triton_grouped triton_tuned \
        --shape 256,512,1024,2048,4096,8192 --dtype fp32,fp16,bf16 --ray local --out "$out/$part" \
        ${SWEEP_PROCESSES:+--processes "$SWEEP_PROCESSES"}
      if [ -d "$out/sweepone" ]; then
        "$python" scripts/verdict_match.py "$out/sweepone" "$out/sweepray" | tee "$out/ray-match.txt"
      fi
      if [ -d "$out/sweepall" ]; then
        "$python" scripts/verdict_match.py "$out/sweepall" "$out/sweepray" | tee "$out/ray-all-match.txt"
      fi
      # Each run's wall time against the one-GPU sweep's (goal for both: at most 0.55x).
      for run in sweepall sweepray; do
        if [ -f "$out/sweepone.console.txt" ] && [ -f "$out/$run.console.txt" ]; then
          one=$(grep -o 'wall [0-9]* s' "$out/sweepone.console.txt" | tail -n 1 | tr -dc 0-9)
          this=$(grep -o 'wall [0-9]* s' "$out/$run.console.txt" | tail -n 1 | tr -dc 0-9)
          awk -v a="$this" -v b="$one" -v r="$run" \
            'BEGIN { printf "%s: %d s against %d s on one GPU: %.3fx\n", r, a, b, a / b }' |
            tee -a "$out/sweep-speed.txt"
        fi
      done
      ;;
    sigterm)
      # SIGTERM while a worker hangs on the GPU: gemmreg must go, and every
      # worker with it (only this command's process tree is listed: another
      # lane may be running gemmreg on the other GPU).
      export GEMMREG_EXTRA_PLUGINS=fake_plugins.gpu_hang
      "$python" -m gemmreg check fake_gpu_hang --timeout 600 >"$out/sigterm.console.txt" 2>&1 &
      pid=$!
      sleep 25
      tree() { ps -eo pid,ppid,pgid,etimes,args | awk -v p="$pid" '$1 == p || $2 == p || $3 == p'; }
      # The listings go to a file of their own: gemmreg's output, written at
      # its own offset, overwrote lines appended to its console file.
      { echo "before SIGTERM (gemmreg $pid and its workers):"; tree; } >"$out/sigterm.ps.txt"
      workers=$(ps -eo pid,ppid | awk -v p="$pid" '$2 == p {print $1}')
      kill -TERM "$pid"
      wait "$pid"
      echo "gemmreg exit $? after SIGTERM" >>"$out/sigterm.ps.txt"
      sleep 3
      {
        echo "3 s after SIGTERM, still running of gemmreg $pid and its workers ($workers):"
        ps -o pid,args -p "$pid,${workers// /,}" | tail -n +2 || true
        echo "(end of list)"
      } >>"$out/sigterm.ps.txt"
      tail -n 3 "$out/sigterm.console.txt"
      cat "$out/sigterm.ps.txt"
      export GEMMREG_EXTRA_PLUGINS=timing_plugins.twins,timing_plugins.extra_pass,timing_plugins.side_stream,timing_plugins.split_k,timing_plugins.skip_on_repeat,timing_plugins.cache_by_identity,timing_plugins.detects_timing,timing_plugins.unless_profiled
      ;;
    *)
      echo "unknown part $part" >&2
      exit 2
      ;;
  esac
done
