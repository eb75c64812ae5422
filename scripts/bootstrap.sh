#!/usr/bin/env bash
# Create .venv with gemmreg installed (editable) and the example third-party
# plugin packages; `scripts/bootstrap.sh dev` adds the dev tools the tests use
# (pytest, ruff, mypy, Ray, hypothesis, matplotlib: about 2 GB more), which the
# main job does not run. Safe to rerun.
#
# torch: an existing torch in .venv is kept (a GPU machine keeps its CUDA or ROCm
# build); otherwise GEMMREG_TORCH is installed (default: torch==2.13.0, which on
# this project's CPU machines is the CPU build). constraints.txt (the Triton that
# torch 2.13.0 pins) applies only when .venv's torch is that default: with another
# torch it would make pip swap that torch for one that takes its Triton.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
  dev) extras="[dev]" ;;
  "") extras="" ;;
  *) echo "usage: scripts/bootstrap.sh [dev]" >&2; exit 2 ;;
esac
python=${PYTHON:-python3}
default_torch=2.13.0
[ -x .venv/bin/python ] || "$python" -m venv .venv
# pip runs as `.venv/bin/python -m pip`, never `.venv/bin/pip`: a venv copied
# into another checkout keeps scripts whose first line names the original
# venv's python, so `.venv/bin/pip` there installed into the original.
# find_spec, not import: importing torch alone takes seconds.
if ! .venv/bin/python -c "import importlib.util as u, sys; sys.exit(not u.find_spec('torch'))"; then
  .venv/bin/python -m pip install -q "${GEMMREG_TORCH:-torch==$default_torch}"
fi
torch=$(.venv/bin/python -c "from importlib.metadata import version; print(version('torch'))")
constraints=(-c constraints.txt)
if [ "${torch%%+*}" != "$default_torch" ]; then
  constraints=()
  echo "bootstrap: keeping torch $torch and its Triton (constraints.txt is torch $default_torch's stack)"
fi
# pip takes ~20 s to find that nothing changed, on every run of scripts/test.sh:
# install only when what it reads changed since the last install here, or when
# the venv's gemmreg is not this checkout's (a venv copied from another one).
# The stamp names what was installed: a dev install also serves the main job.
stamp=.venv/gemmreg-bootstrap.stamp
inputs=$({ cat pyproject.toml constraints.txt examples/gemmreg-splitk/pyproject.toml \
  examples/gemmreg-minimal/pyproject.toml; echo "$torch"; } | sha256sum | cut -d' ' -f1)
wanted="$inputs $extras"
found=$(cat "$stamp" 2>/dev/null || true)
[ -z "$extras" ] && [ "$found" = "$inputs [dev]" ] && wanted=$found
here=$(pwd -P)
if [ "$found" != "$wanted" ] || ! .venv/bin/python -c "
import sys, gemmreg, gemmreg_splitk, gemmreg_minimal
sys.exit(not gemmreg.__file__.startswith(sys.argv[1] + '/core/'))" "$here" 2>/dev/null; then
  .venv/bin/python -m pip install -q "${constraints[@]}" -e ".$extras"
  # The examples (split-K, and the minimal one-module plugin) are separate
  # distributions, installed the way a user installs any third-party gemmreg plugin.
  .venv/bin/python -m pip install -q "${constraints[@]}" -e examples/gemmreg-splitk -e examples/gemmreg-minimal
  echo "$wanted" >"$stamp"
fi
