#!/usr/bin/env bash
# The GPU machine's one call, rehearsed here on the CPU: the test build is packaged as a bundle
# (scripts/device-bundle.sh --from-build) and scripts/device-bundle-check.sh runs device-run.sh from
# it end to end with the system's copies of the bundle's libraries hidden, checks the bundle's size
# and that every library it needs resolves, and the set-up errors.
# Usage: device_dry_run_test.sh SOURCE_DIR BUILD_DIR   (NODEAUDIT_TORCH_PYTHON: the torch venv's python)
# Exit 77 (skip) only where this machine cannot: not root or no unshare (mount namespace), or no
# PyTorch; NODEAUDIT_EXPECT_MOUNT_NAMESPACE=1 / NODEAUDIT_EXPECT_TORCH=1 turn those into failures.
set -uo pipefail
source_dir="${1:?usage: device_dry_run_test.sh SOURCE_DIR BUILD_DIR}"
build_dir="${2:?usage: device_dry_run_test.sh SOURCE_DIR BUILD_DIR}"

skip_or_fail() {  # $1: the NODEAUDIT_EXPECT_ switch that makes it a failure, $2: why
  if [[ "${!1:-0}" == 1 ]]; then echo "FAIL: $1=1, yet $2"; exit 1; fi
  echo "SKIP: $2"
  exit 77
}
[[ $(id -u) -eq 0 ]] && command -v unshare >/dev/null ||
  skip_or_fail NODEAUDIT_EXPECT_MOUNT_NAMESPACE "the dry run hides libraries in a mount namespace: it needs root and unshare"
python="${NODEAUDIT_TORCH_PYTHON:-}"
[[ -n "$python" ]] && "$python" -c 'import torch' 2>/dev/null ||
  skip_or_fail NODEAUDIT_EXPECT_TORCH "NODEAUDIT_TORCH_PYTHON=${python:-(unset)} cannot import torch (make torch-venv)"

bundle_parent="$(mktemp -d "${TMPDIR:-/tmp}/nodeaudit-device-dry-run.XXXXXX")"
trap 'rm -rf "$bundle_parent"' EXIT
bash "$source_dir/scripts/device-bundle.sh" --from-build "$build_dir" "$bundle_parent/bundle" || {
  echo "FAIL: packaging the test build as a bundle"
  exit 1
}
bash "$source_dir/scripts/device-bundle-check.sh" "$bundle_parent/bundle" "$python"
