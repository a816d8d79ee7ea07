#!/usr/bin/env bash
# Checks a bundle (scripts/device-bundle.sh) on this machine as if it were the GPU machine, as far as
# a machine without a GPU allows. In a private mount namespace (root; nothing outside it changes):
#   - the bundle is under 60 MiB, and its executables lose their modes (a copy of it: a lent
#     machine's copy may not keep them);
#   - every library the bundle carries is hidden at its system path (an empty file bound over it;
#     those PYTHON loads to import torch excepted: the GPU machine has them) and /usr/local/cuda is
#     hidden (an empty tmpfs), so only the bundle's lib/ and the NVIDIA wheels of PYTHON's environment can satisfy
#     the loader, as on the GPU machine; every library each executable needs resolves;
#   - the bundle starts and lists every GPU probe as built; device-run.sh runs end to end with
#     ALLOW_NO_GPU=1 and PyTorch's side on the CPU, into an OUT_DIR that holds something already:
#     tests pass or skip with NVML's reason, GPU probes skip with the reason, the peer table covers
#     both rounds, and no scratch or link is left behind;
#   - with a budget too small for everything (BUDGET_S=100) it ends within it, says what it did not
#     run, and still leaves run.json and the peer table;
#   - NVML is found at /usr/local/nvidia/lib64 when the loader does not find it (a stand-in library
#     built here, named as such);
#   - the set-up errors: a library missing from the bundle, no driver, and a driver older than the
#     bundle's runtime (a stand-in libcuda.so.1 built here that reports CUDA 12.8) each end in one
#     line naming the library or both versions, exit 2, nothing written.
# Usage: scripts/device-bundle-check.sh [BUNDLE_DIR] PYTHON_WITH_TORCH
# Knobs: DRY_RUN_BUDGET_S (default 420: the end-to-end run's budget; about 70 s are used here).
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
  if "$@"; then echo "ok    $what"; else echo "FAIL  $what"; failures=$((failures + 1)); return 1; fi
}

work="$(mktemp -d)"
# PYTHON's environment may be shown at a path of its own (below): a mount point outside $work, undone
# and removed with rmdir only, so no recursive removal can ever reach the environment through it.
python_env_view=""
undo_python_env_view() {
  [[ -n "$python_env_view" ]] || return 0
  umount "$python_env_view" 2>/dev/null
  rmdir "$python_env_view" 2>/dev/null || echo "device-bundle-check: left $python_env_view (still mounted)" >&2
}
trap 'undo_python_env_view; rm -rf "$work"' EXIT

# The bundle's size as carried, then a copy of it whose files have lost their modes.
size_bytes="$(du -sb "$bundle" | cut -f1)"
check "the bundle is under 60 MiB ($((size_bytes >> 20)) MiB)" test "$size_bytes" -lt $((60 << 20))
cp -r "$bundle" "$work/bundle"
chmod -R a-x+X "$work/bundle"
original_bundle="$bundle"
bundle="$work/bundle"
check "the copy's executables have no x bit" test ! -x "$bundle/nodeaudit"

# Before the system's libraries are hidden (the compiler and readelf need some of them): the
# stand-ins, for these checks only: an NVML that fails its start-up naming itself, and a driver
# library that answers cuDriverGetVersion with 12080.
check "the bundle's own libraries come first, whatever LD_LIBRARY_PATH says (DT_RPATH)" \
  bash -c "readelf -d '$bundle/nodeaudit' | grep -q '(RPATH)'"
mkdir -p "$work/stand-ins" "$work/old-driver"
printf '%s\n' 'int nvmlInit_v2(void) { return 999; }' 'int nvmlShutdown(void) { return 0; }' \
  'const char* nvmlErrorString(int rc) { return "stand-in NVML of the bundle check"; }' \
  'int nvmlDeviceGetCount_v2(unsigned* n) { *n = 0; return 0; }' \
  'int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** d) { return 999; }' >"$work/stand-ins/nvml.c"
cc -shared -fPIC -o "$work/stand-ins/libnvidia-ml.so.1" "$work/stand-ins/nvml.c" || rm -f "$work/stand-ins/libnvidia-ml.so.1"
printf 'int cuDriverGetVersion(int* v) { *v = 12080; return 0; }\n' >"$work/old-driver/fake_libcuda.c"
cc -shared -fPIC -o "$work/old-driver/libcuda.so.1" "$work/old-driver/fake_libcuda.c" || rm -f "$work/old-driver/libcuda.so.1"

# Hide the system copies of what the bundle carries, and the CUDA toolkit. What PYTHON itself loads
# to import torch stays (the C++ runtime, zlib, ...): the GPU machine runs that PyTorch, so it has
# them; everything else the bundle carries is hidden, as on a machine without the -dev libraries.
python_libs="$("$python" -c 'import os, torch; print("\n".join(sorted({os.path.realpath(l.split()[-1]) for l in open("/proc/self/maps") if ".so" in l.split()[-1]})))')"
hidden=0 kept=()
for lib in "$bundle"/lib/*; do
  name="$(basename "$lib")"
  while read -r path; do
    [[ -e "$path" ]] || continue
    if grep -qxF "$path" <<<"$python_libs"; then kept+=("$name"); continue; fi
    mount --bind /dev/null "$path" && hidden=$((hidden + 1))
  done < <(ldconfig -p | awk -v n="$name" '$1 == n {print $NF}' | xargs -r -n1 realpath | sort -u)
done
echo "kept what PyTorch loads itself: ${kept[*]:-none}"
[[ -d /usr/local/cuda ]] && mount -t tmpfs none "$(realpath /usr/local/cuda)"
# The tests' compiled-in build folder shows the bundle, as device-run.sh arranges on the GPU machine.
# shellcheck source=/dev/null
source "$bundle/manifest.env"
# A PYTHON whose environment lives in that build folder (make test's torch venv) is shown first at a
# path of its own, or the bind below would hide it.
venv_dir="$(cd "$(dirname "$python")/.." && pwd)"
if [[ -d "$BUNDLE_BUILD_DIR" && $venv_dir/ == "$(realpath "$BUNDLE_BUILD_DIR")"/* ]]; then
  python_env_view="$(mktemp -d "${TMPDIR:-/tmp}/nodeaudit-python-env.XXXXXX")"
  mount --bind "$venv_dir" "$python_env_view"
  python="$python_env_view/bin/$(basename "$python")"
fi
if [[ -d "$BUNDLE_BUILD_DIR" ]]; then mount --bind "$bundle" "$BUNDLE_BUILD_DIR"; fi
echo "hid $hidden system libraries and /usr/local/cuda"
check "the CUDA toolkit is hidden" test ! -e /usr/local/cuda/bin/nvcc

# 1. Every library resolves; the bundle starts and lists every GPU probe as built.
wheels="$("$python" -c 'import glob,importlib.util,os; s=importlib.util.find_spec("nvidia"); print(":".join(sorted({os.path.dirname(p) for r in s.submodule_search_locations for p in glob.glob(os.path.join(r,"**","lib*.so*"),recursive=True)})))')"
for relative in $BUNDLE_EXECUTABLES; do
  check "every library $relative needs resolves" \
    bash -c "! LD_LIBRARY_PATH='$wheels' ldd '$bundle/$relative' | grep -E 'not found|/usr/local/cuda'"
done
chmod a+x "$bundle/nodeaudit"
LD_LIBRARY_PATH="$wheels" "$bundle/nodeaudit" list >"$work/list.txt" 2>&1
chmod a-x "$bundle/nodeaudit"
check "the bundle starts (nodeaudit list)" grep -q '^gpu.gemm' "$work/list.txt"
check "every gpu.* probe is built" bash -c "! grep -E '^gpu\.' '$work/list.txt' | grep -q 'not built'"
check "the bundle loads cuBLAS and NCCL from the wheels, not the system" \
  bash -c "LD_LIBRARY_PATH='$wheels' ldd '$bundle/nodeaudit' | grep -E 'libcublas|libnccl' | grep -qv /usr/local/cuda"

# 2. The whole device run, without a GPU, into an OUT_DIR that is not empty.
# A bundle made from the test build (MPI on) holds Open MPI, whose launcher and plugins are hidden
# here: comm.host-fabric is left out of the run, as the GPU machine's bundle (MPI off) lists it as
# not built.
skip_probes=""
compgen -G "$bundle/lib/libmpi.so*" >/dev/null && skip_probes=comm.host-fabric && echo "      (MPI in the bundle: comm.host-fabric left out of the dry run)"
mkdir -p "$work/out" "$work/scratch"
echo "not the run's" >"$work/out/already-here.txt"
started_s=$SECONDS
SKIP_PROBES="$skip_probes" PYTHON="$python" ALLOW_NO_GPU=1 PEERS_ON_CPU=1 ROUNDS=2 BUDGET_S="${DRY_RUN_BUDGET_S:-420}" RUN_NAME=dry \
  SCRATCH_DIR="$work/scratch" BUNDLE="$bundle" bash "$root/scripts/device-run.sh" "$work/out" >"$work/run.log" 2>&1
rc=$?
echo "      (the dry run took $((SECONDS - started_s)) s)"
run="$work/out/dry"
check "device-run.sh without a GPU ends 0 (exit $rc)" test "$rc" -eq 0 || grep -E 'FAILED|not run|stopped|failed|crashed|timeout' "$work/run.log"
check "device-run.sh wrote its files beside what OUT_DIR held" \
  bash -c "cd '$run' && ls device-run.log env.json tests.log run.json peer-table.md peer-table.json rounds.tgz >/dev/null && test -f ../already-here.txt"
check "every GPU probe is skipped with the runtime's reason" \
  "$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); g=[p for p in d["probes"] if p["id"].startswith("gpu.")]; sys.exit(not g or any(p["status"]!="skipped" or not p.get("reason") for p in g))' "$run/run.json"
check "the GPU device tests skip naming NVML's reason" grep -q 'no GPU listed by NVML' "$run/tests.log"
check "the peer table covers both rounds and names the commit" grep -q "nodeaudit $BUNDLE_COMMIT beside PyTorch.*2 alternating rounds" "$run/peer-table.md"
check "the peer table says what was not measured" grep -q 'not measured' "$run/peer-table.md"
check "PyTorch round 2 took its sizes from nodeaudit's round 2" \
  bash -c "tar -xzOf '$run/rounds.tgz' ./pytorch-round2.json | grep -q 'nodeaudit-round2.json'" || tar -tzvf "$run/rounds.tgz"
check "no scratch left behind" bash -c "test -z \"\$(ls -A '$work/scratch')\""
check "the log has the run's last line" bash -c "tail -n 1 '$run/device-run.log' | grep -q 'device-run: done in'"
cp "$work/run.log" "${CHECK_LOG:-/dev/null}" 2>/dev/null || true

# 3. A budget too small for everything: the call still ends inside it with what it reached.
started_s=$SECONDS
SKIP_PROBES="$skip_probes" PYTHON="$python" ALLOW_NO_GPU=1 PEERS_ON_CPU=1 ROUNDS=3 BUDGET_S=100 RUN_NAME=tight SCRATCH_DIR="$work/scratch" \
  BUNDLE="$bundle" bash "$root/scripts/device-run.sh" "$work/out" >"$work/tight.log" 2>&1
rc=$? took_s=$((SECONDS - started_s))
check "a 100 s budget: the call ends within it ($took_s s)" test "$took_s" -le 102
check "a 100 s budget: exit 1, naming what did not fit (exit $rc)" \
  bash -c "test $rc -eq 1 && grep -Eq 'not run|stopped at its' '$work/tight.log'"
check "a 100 s budget: run.json and the peer table are there" test -f "$work/out/tight/run.json" -a -f "$work/out/tight/peer-table.md"

# 4. NVML where the NVIDIA container toolkit puts it, found when the loader does not find it.
if [[ -f "$work/stand-ins/libnvidia-ml.so.1" ]]; then
  chmod a+x "$bundle/nodeaudit"
  unshare -m --propagation private bash -c "mount -t tmpfs none /usr/local && mkdir -p /usr/local/nvidia/lib64 &&
    cp '$work/stand-ins/libnvidia-ml.so.1' /usr/local/nvidia/lib64/ && LD_LIBRARY_PATH='$wheels' '$bundle/nodeaudit' env --format json" >"$work/nvml-env.json" 2>&1
  chmod a-x "$bundle/nodeaudit"
  check "NVML is found at /usr/local/nvidia/lib64" grep -q 'stand-in NVML of the bundle check' "$work/nvml-env.json"
else
  echo "skip  NVML at /usr/local/nvidia/lib64: no C compiler to build the stand-in library"
fi

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
cp -a "$original_bundle" "$work/bundle-missing-lib"
missing_lib="$(ls "$work/bundle-missing-lib/lib" | grep -m1 liburing)"
rm "$work/bundle-missing-lib/lib/$missing_lib"
expect_setup_error "a library missing from the bundle" "$missing_lib" PYTHON="$python" BUNDLE="$work/bundle-missing-lib"
expect_setup_error "no driver" "no NVIDIA driver" PYTHON="$python" BUNDLE="$original_bundle"
if [[ -f "$work/old-driver/libcuda.so.1" ]]; then
  expect_setup_error "a driver older than the runtime" "supports CUDA 12.8, older than the bundle's CUDA runtime" \
    PYTHON="$python" BUNDLE="$original_bundle" CUDA_LIB_DIRS="$work/old-driver" LD_LIBRARY_PATH="$work/old-driver"
else
  echo "skip  a driver older than the runtime: no C compiler to build the stand-in libcuda.so.1"
fi

echo "device-bundle-check: $failures failed"
((failures == 0))
