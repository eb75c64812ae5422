#!/usr/bin/env bash
# Compile every .hip kernel for both vendors: NVIDIA (nvcc, sm_90 PTX) and AMD
# (Debian's hipcc, code object for gfx1030). Nothing runs: this proves the
# sources are valid HIP on both paths, on a machine with no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mapfile -t sources < <(git ls-files '*.hip')
[ ${#sources[@]} -gt 0 ] || { echo "no .hip sources found"; exit 1; }
for src in "${sources[@]}"; do
  name=$(basename "$src" .hip)
  nvcc -x cu --ptx -arch=sm_90 -o "$out/$name.ptx" "$src"
  grep -q ".entry $name" "$out/$name.ptx"
  echo "nvcc  sm_90   ok: $src"
  HIP_PLATFORM=amd hipcc -include hip/hip_runtime.h --genco --offload-arch=gfx1030 -o "$out/$name.co" "$src"
  [ -s "$out/$name.co" ]
  echo "hipcc gfx1030 ok: $src"
done
