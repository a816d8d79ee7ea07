#!/usr/bin/env bash
# On a machine with a GPU and the build tools (scripts/install-deps.sh, patchelf): build the bundle
# for this machine's GPUs and run the device check from it, exactly as on a GPU machine without
# build tools (scripts/device-run.sh): GPU tests, the GPU/NCCL probes and the training step at quick
# level, PyTorch beside nodeaudit on the same GPU, one table.
# The run is written to build-device/check-runs/NAME and moved to results/reference/NAME only when
# it ended 0 (every test, probe and step passed, within the budget): a failed run never sits among
# the references.
# Usage: scripts/gpu-check.sh [NAME]   (default <host>-<UTC time>)
# Knobs (environment): CUDA_ARCHS (default native), PYTHON (the interpreter with torch), ROUNDS.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name="${1:-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "gpu-check: NAME $name: letters, digits, '.', '_' and '-' only" >&2; exit 2; }
reference="$root/results/reference/$name"
[[ ! -e "$reference" ]] || { echo "gpu-check: $reference exists: choose another NAME" >&2; exit 2; }
CUDA_ARCHS="${CUDA_ARCHS:-native}" bash "$root/scripts/device-bundle.sh"
staging="$root/build-device/check-runs"
status=0
RUN_NAME="$name" bash "$root/scripts/device-run.sh" "$staging" || status=$?
if ((status == 0)); then
  mkdir -p "$(dirname "$reference")"
  mv "$staging/$name" "$reference"
  echo "gpu-check: reference run in $reference"
else
  echo "gpu-check: the run ended $status; its files stay in $staging/$name (not moved to results/reference/)" >&2
fi
exit "$status"
