#!/usr/bin/env bash
# Checks a bundle (scripts/device-bundle.sh) on this machine as if it were the GPU machine, as far as
# a machine without a GPU allows. In a private mount namespace (root; nothing outside it changes):
#   - every library the bundle carries is hidden at its system path (an empty file bound over it;
#     the C++ runtime excepted, which PyTorch needs too) and /usr/local/cuda is hidden (an empty tmpfs), so only the bundle's lib/ and the NVIDIA
#     wheels of PYTHON's environment can satisfy the loader, as on the GPU machine;
#   - the bundle must start, list every GPU probe as built, and device-run.sh must run end to end
#     with ALLOW_NO_GPU=1: tests pass or skip with NVML's reason, GPU probes skip with the reason;
#   - the set-up errors: a library missing from the bundle, no driver, and a driver older than the
#     bundle's runtime (a stand-in libcuda.so.1 built here, named as such, that reports CUDA 12.8)
#     each end in one line naming the library or both versions, exit 2, nothing written.
# Usage: scripts/device-bundle-check.sh [BUNDLE_DIR] PYTHON_WITH_TORCH
# Exit 0 when every check holds, 1 otherwise, 77 when it cannot run here (not root, no unshare).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bundle="$(realpath "${1:-$root/.device-bundle}")"
python="${2:?usage: scripts/device-bundle-check.sh BUNDLE_DIR PYTHON_WITH_TORCH}"
[[ $(id -u) -eq 0 ]] || { echo "device-bundle-check: needs root (mount namespace)"; exit 77; }
command -v unshare >/dev/null || { echo "device-bundle-check: needs unshare"; exit 77; }
[[ -f "$bundle/manifest.env" ]] || { echo "device-bundle-check: $bundle is not a bundle"; exit 1; }

if [[ -z "${DEVICE_BUNDLE_CHECK_INSIDE:-}" ]]; then
  exec env DEVICE_BUNDLE_CHECK_INSIDE=1 unshare -m --propagation private bash "$0" "$bundle" "$python"
fi

failures=0
check() {  # $1: what; rest: a command that must succeed
  local what="$1"; shift
  if "$@"; then echo "ok    $what"; else echo "FAIL  $what"; failures=$((failures + 1)); fi
}

# Hide the system copies of what the bundle carries, and the CUDA toolkit.
hidden=0
for lib in "$bundle"/lib/*; do
  name="$(basename "$lib")"
  # The C++ runtime stays: it is no -dev library, every Linux has one, and PyTorch needs it.
  [[ "$name" == libstdc++.so.* || "$name" == libgcc_s.so.* ]] && continue
  while read -r path; do
    [[ -e "$path" ]] || continue
    mount --bind /dev/null "$path" && hidden=$((hidden + 1))
  done < <(ldconfig -p | awk -v n="$name" '$1 == n {print $NF}' | xargs -r -n1 realpath | sort -u)
done
[[ -d /usr/local/cuda ]] && mount -t tmpfs none "$(realpath /usr/local/cuda)"
# The tests' compiled-in build folder shows the bundle, as device-run.sh arranges on the GPU machine.
# shellcheck source=/dev/null
source "$bundle/manifest.env"
if [[ -d "$BUNDLE_BUILD_DIR" ]]; then mount --bind "$bundle" "$BUNDLE_BUILD_DIR"; fi
echo "hid $hidden system libraries and /usr/local/cuda"
check "the CUDA toolkit is hidden" test ! -e /usr/local/cuda/bin/nvcc

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# 1. The bundle starts and lists every GPU probe as built.
wheels="$("$python" -c 'import glob,importlib.util,os; s=importlib.util.find_spec("nvidia"); print(":".join(sorted({os.path.dirname(p) for r in s.submodule_search_locations for p in glob.glob(os.path.join(r,"**","lib*.so*"),recursive=True)})))')"
LD_LIBRARY_PATH="$bundle/lib:$wheels" "$bundle/nodeaudit" list >"$work/list.txt" 2>&1
check "the bundle starts (nodeaudit list)" grep -q '^gpu.gemm' "$work/list.txt"
check "every gpu.* probe is built" bash -c "! grep -E '^gpu\.' '$work/list.txt' | grep -q 'not built'"
check "the bundle loads cuBLAS and NCCL from the wheels, not the system" \
  bash -c "LD_LIBRARY_PATH='$bundle/lib:$wheels' ldd '$bundle/nodeaudit' | grep -E 'libcublas|libnccl' | grep -qv /usr/local/cuda"

# 2. The whole device run, without a GPU.
PYTHON="$python" ALLOW_NO_GPU=1 ROUNDS=2 BUNDLE="$bundle" bash "$root/scripts/device-run.sh" "$work/out" >"$work/run.log" 2>&1
rc=$?
check "device-run.sh without a GPU ends 0 (exit $rc; log $work/run.log)" test "$rc" -eq 0
check "device-run.sh wrote its files" bash -c "cd '$work/out' && ls device-run.log env.json tests.log run.json peer-table.md rounds.tgz >/dev/null"
check "every GPU probe is skipped with the runtime's reason" \
  "$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); g=[p for p in d["probes"] if p["id"].startswith("gpu.")]; sys.exit(not g or any(p["status"]!="skipped" or not p.get("reason") for p in g))' "$work/out/run.json"
check "the GPU device tests skip naming NVML's reason" grep -q 'no GPU listed by NVML' "$work/out/tests.log"
check "the peer table says what was not measured" grep -q 'not measured' "$work/out/peer-table.md"
cp "$work/run.log" "${CHECK_LOG:-/dev/null}" 2>/dev/null || true

# 3. Set-up errors: one line, exit 2, nothing written.
one_line_holding() {  # $1: file, $2: text
  [[ $(wc -l <"$1") -eq 1 ]] && grep -qF -- "$2" "$1" || { echo "      got: $(cat "$1")"; false; }
}
expect_setup_error() {  # $1: what; $2: text the line must hold; rest: env assignments
  local what="$1" needle="$2"; shift 2
  local target="$work/should-stay-empty"
  env "$@" bash "$root/scripts/device-run.sh" "$target" >"$work/err.txt" 2>&1
  local rc=$?
  check "$what: exit 2 (got $rc)" test "$rc" -eq 2
  check "$what: one line naming it" one_line_holding "$work/err.txt" "$needle"
  check "$what: nothing written" test ! -e "$target"
}
cp -a "$bundle" "$work/bundle-missing-lib"
missing_lib="$(ls "$work/bundle-missing-lib/lib" | grep -m1 liburing)"
rm "$work/bundle-missing-lib/lib/$missing_lib"
expect_setup_error "a library missing from the bundle" "$missing_lib" PYTHON="$python" BUNDLE="$work/bundle-missing-lib"
expect_setup_error "no driver" "no NVIDIA driver" PYTHON="$python" BUNDLE="$bundle"
# A stand-in driver library, for this check only: it answers cuDriverGetVersion with 12080.
mkdir -p "$work/old-driver"
printf 'int cuDriverGetVersion(int* v) { *v = 12080; return 0; }\n' >"$work/old-driver/fake_libcuda.c"
if cc -shared -fPIC -o "$work/old-driver/libcuda.so.1" "$work/old-driver/fake_libcuda.c"; then
  expect_setup_error "a driver older than the runtime" "supports CUDA 12.8, older than the bundle's CUDA runtime" \
    PYTHON="$python" BUNDLE="$bundle" CUDA_LIB_DIRS="$work/old-driver" LD_LIBRARY_PATH="$work/old-driver"
else
  echo "skip  a driver older than the runtime: no C compiler to build the stand-in libcuda.so.1"
fi

echo "device-bundle-check: $failures failed"
((failures == 0))
