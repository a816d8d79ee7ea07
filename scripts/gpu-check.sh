#!/usr/bin/env bash
# On a machine with a GPU and the build tools (scripts/install-deps.sh, patchelf): build the bundle
# for this machine's GPUs and run the device check from it, exactly as on a GPU machine without
# build tools (scripts/device-run.sh): GPU tests, the GPU/NCCL probes and the training step at quick
# level, PyTorch beside nodeaudit on the same GPU, one table.
# Usage: scripts/gpu-check.sh [OUT_DIR]   (default results/reference/<host>-<UTC time>)
# Knobs (environment): CUDA_ARCHS (default native), PYTHON (the interpreter with torch), ROUNDS.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/results/reference/$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
CUDA_ARCHS="${CUDA_ARCHS:-native}" bash "$root/scripts/device-bundle.sh"
exec bash "$root/scripts/device-run.sh" "$out"
