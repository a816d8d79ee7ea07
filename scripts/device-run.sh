#!/usr/bin/env bash
# The GPU check from a bundle (scripts/device-bundle.sh): on a machine with a GPU, a driver and the
# CUDA libraries (PyTorch's NVIDIA wheels, or a CUDA install) but no build tools or -dev libraries.
#   1. checks before anything is written: every library the bundle needs resolves, a driver is
#      present and supports the bundle's CUDA runtime (one line naming the library or both
#      versions, exit 2 otherwise)
#   2. the node: nvidia-smi, `nodeaudit env`, `nodeaudit list`
#   3. the GPU-relevant tests of the bundle
#   4. `nodeaudit run --only 'gpu.*,comm.*,pipeline.step' --level quick`
#   5. PyTorch beside nodeaudit on the same GPU, alternating: the full run above is round 1's
#      nodeaudit side, then PyTorch, then gpu.gemm (bf16, fp8), gpu.memory-bandwidth and gpu.pcie
#      again, then PyTorch, ... (ROUNDS rounds); bench/gpu/peer_table.py prints the table
# Everything goes to OUT_DIR: device-run.log (all output), env.json, tests.log, run.json,
# peer-table.md/.json, rounds.tgz (every round's files). At most 8 files, so a machine that lends
# the GPU for one call can send them all back.
# Usage: scripts/device-run.sh OUT_DIR
# Knobs (environment): BUNDLE (default .device-bundle), PYTHON (default python3: the one with torch
#   and the NVIDIA wheels), ROUNDS (default 3), CUDA_LIB_DIRS (colon-separated, added before the
#   wheels' folders), BUDGET_S (default 480: no further peer round starts when less than 90 s of it
#   is left, so the call ends inside a lent machine's time with what it measured), ALLOW_NO_GPU=1
#   (go on without a driver: a check of this script where no GPU is).
# Exit: 0 all ran and passed, 1 a test, probe or step failed (the rest still ran), 2 bad set-up.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: scripts/device-run.sh OUT_DIR}"
bundle="$(realpath -m "${BUNDLE:-$root/.device-bundle}")"
python="${PYTHON:-python3}"
rounds="${ROUNDS:-3}"
budget_s="${BUDGET_S:-480}"
started_s=$SECONDS
die() { printf 'device-run: %s\n' "$*" >&2; exit 2; }

# --- 1. checks, before anything is written -------------------------------------------------------
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || die "ROUNDS=$rounds: must be a whole number from 1 to 99"
[[ "$budget_s" =~ ^[0-9]+$ ]] && ((budget_s >= 60 && budget_s <= 86400)) || die "BUDGET_S=$budget_s: must be seconds from 60 to 86400"
[[ -f "$bundle/manifest.env" ]] || die "$bundle/manifest.env not found: make the bundle with scripts/device-bundle.sh and carry it"
# shellcheck source=/dev/null
source "$bundle/manifest.env"
command -v "$python" >/dev/null || die "PYTHON=$python: not found"
wheel_dirs="$("$python" - <<'PY' 2>/dev/null
import glob, importlib.util, os
spec = importlib.util.find_spec("nvidia")
roots = list(spec.submodule_search_locations) if spec and spec.submodule_search_locations else []
dirs = sorted({os.path.dirname(p) for r in roots for p in glob.glob(os.path.join(r, "**", "lib*.so*"), recursive=True)})
print(":".join(dirs))
PY
)"
export LD_LIBRARY_PATH="$bundle/lib${CUDA_LIB_DIRS:+:$CUDA_LIB_DIRS}${wheel_dirs:+:$wheel_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nodeaudit="$bundle/nodeaudit"
[[ -x "$nodeaudit" ]] || die "$nodeaudit: not in the bundle"
missing="$(ldd "$nodeaudit" 2>&1 | awk '$3 == "not" {print $1}' | tr '\n' ' ')"
if [[ -z "$missing" ]] && ! loader_error="$("$nodeaudit" --help 2>&1 >/dev/null)"; then
  # ldd found a file the loader cannot use (a broken or empty copy): the loader's own words name it.
  missing="$(sed -n 's/.*error while loading shared libraries: \([^:]*\):.*/\1/p' <<<"$loader_error" | head -n 1)"
  [[ -n "$missing" ]] || die "$nodeaudit does not start: $(head -n 1 <<<"$loader_error")"
fi
[[ -z "$missing" ]] || die "the bundle needs ${missing% } and it is not found in the bundle's lib/, CUDA_LIB_DIRS or $python's NVIDIA wheels (${wheel_dirs:-none found})"
driver="$("$python" - <<'PY' 2>&1
import ctypes
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError as e:
    print(f"none: libcuda.so.1 not found ({e})")
else:
    v = ctypes.c_int(0)
    rc = cuda.cuDriverGetVersion(ctypes.byref(v))
    print(f"{v.value // 1000}.{v.value % 1000 // 10}" if rc == 0 else f"none: cuDriverGetVersion returned {rc}")
PY
)"
# The CUDA runtime is the one the loader finds (a wheel's libcudart) when the bundle links it
# dynamically, else the one it was built with.
runtime="$BUNDLE_CUDA_RUNTIME" runtime_from="built in"
cudart="$(tr ' ' '\n' <<<"$BUNDLE_CUDA_LIBS" | grep -m1 '^libcudart' || true)"
if [[ -n "$cudart" ]]; then
  runtime="$("$python" - "$cudart" <<'PY' 2>&1
import ctypes, sys
v = ctypes.c_int(0)
rc = ctypes.CDLL(sys.argv[1]).cudaRuntimeGetVersion(ctypes.byref(v))
print(f"{v.value // 1000}.{v.value % 1000 // 10}" if rc == 0 else f"?: cudaRuntimeGetVersion returned {rc}")
PY
)" runtime_from="$cudart as loaded"
  [[ "$runtime" =~ ^[0-9]+\.[0-9]+$ ]] || die "$cudart: cannot read its CUDA version ($runtime)"
fi
if [[ "$driver" == none:* ]]; then
  [[ "${ALLOW_NO_GPU:-0}" == 1 ]] || die "no NVIDIA driver (${driver#none: }): the bundle's GPU probes need one"
elif ((${driver%%.*} < ${runtime%%.*})); then
  die "the driver supports CUDA $driver, older than the bundle's CUDA runtime $runtime ($runtime_from): update the driver or rebuild the bundle with CUDA ${driver%%.*}"
fi
# Within one major version a newer runtime runs on an older driver (CUDA's minor version
# compatibility), as long as no PTX has to be compiled: the bundle carries machine code for its archs.
# The tests find the CLI and the fixtures through the paths they were built with: point those paths
# at this checkout and this bundle (on the build machine they already are).
if [[ ! -e "$BUNDLE_SOURCE_ROOT" ]]; then
  mkdir -p "$(dirname "$BUNDLE_SOURCE_ROOT")" && ln -s "$root" "$BUNDLE_SOURCE_ROOT" ||
    die "cannot link $BUNDLE_SOURCE_ROOT to $root (the tests' compiled-in source path)"
elif [[ "$(realpath "$BUNDLE_SOURCE_ROOT")" != "$root" ]]; then
  die "$BUNDLE_SOURCE_ROOT (the tests' compiled-in source path) holds another checkout, not $root: move it aside or rebuild the bundle here"
fi
if [[ ! -e "$BUNDLE_BUILD_DIR" ]]; then
  ln -s "$bundle" "$BUNDLE_BUILD_DIR" || die "cannot link $BUNDLE_BUILD_DIR to $bundle"
fi
mkdir -p "$out" || die "OUT_DIR $out: cannot create it"
[[ -z "$(ls -A "$out")" ]] || die "OUT_DIR $out is not empty: give an empty or new folder (nothing is overwritten)"

# --- from here on everything is logged ----------------------------------------------------------
out="$(realpath "$out")"
exec > >(tee -a "$out/device-run.log") 2>&1
work="$(mktemp -d)"
scratch="$(mktemp -d "${SCRATCH_DIR:-/tmp}/nodeaudit-scratch.XXXXXX")"
cleanup() { rm -rf "$work" "$scratch"; }
trap cleanup EXIT
status=0
step() { printf '\n=== %s  %s\n' "$(date -u +%H:%M:%S)" "$*"; }
mark_failed() { printf 'device-run: FAILED: %s\n' "$*"; status=1; }

step "bundle $BUNDLE_COMMIT built $BUNDLE_BUILT_AT with CUDA $BUNDLE_CUDA_RUNTIME; runtime CUDA $runtime ($runtime_from), archs $BUNDLE_CUDA_ARCHS; driver CUDA $driver"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
ldd "$nodeaudit" | grep -E 'cublas|nccl|cudart|bundle' || true
step "node"
nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,power.limit --format=csv 2>&1 || echo "(nvidia-smi unavailable)"
"$nodeaudit" env --format json >"$out/env.json" || mark_failed "nodeaudit env"
"$nodeaudit" env --data-dir "$scratch"
"$nodeaudit" list

step "tests: $BUNDLE_TESTS"
for t in $BUNDLE_TESTS; do
  (cd "$BUNDLE_BUILD_DIR/$(dirname "$t")" && timeout 600 "./$(basename "$t")" --gtest_color=no) >"$work/test.log" 2>&1 ||
    mark_failed "test $t (see tests.log)"
  { echo "--- $t"; cat "$work/test.log"; } >>"$out/tests.log"
  echo "$t: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?' "$work/test.log" | tr -s ' ' | tr '\n' ' ')"
  grep -E '^\[  (FAILED|SKIPPED) +\] [A-Za-z0-9_/]+\.[A-Za-z0-9_/]+$' "$work/test.log" | sort -u
done
rm -f "$work/test.log"

step "nodeaudit run --only 'gpu.*,comm.*,pipeline.step' --level quick"
"$nodeaudit" run --only 'gpu.*,comm.*,pipeline.step' --level quick --data-dir "$scratch" --out "$out/run.json" ||
  mark_failed "nodeaudit run (exit $?)"

step "PyTorch beside nodeaudit, $rounds alternating rounds"
ours=() theirs=()
for ((r = 1; r <= rounds; r++)); do
  if ((r > 1 && SECONDS - started_s > budget_s - 90)); then
    echo "device-run: round $r and later not run: $((SECONDS - started_s)) s of the ${budget_s} s budget used"
    break
  fi
  result="$work/nodeaudit-round$r.json"
  if ((r == 1)); then
    cp "$out/run.json" "$result" 2>/dev/null || echo '{"probes": []}' >"$result"
  else
    parts=()
    for probe in "gpu.gemm --dtypes bf16,fp8" "gpu.memory-bandwidth" "gpu.pcie"; do
      part="$work/round$r-${probe%% *}.json"
      # shellcheck disable=SC2086
      "$nodeaudit" probe $probe --level quick --out "$part" || mark_failed "round $r: nodeaudit probe $probe"
      [[ -f "$part" ]] && parts+=("$part")
    done
    "$python" -c 'import json,sys; docs=[json.load(open(p)) for p in sys.argv[2:]]; json.dump({"probes":[q for d in docs for q in d.get("probes",[])]}, open(sys.argv[1],"w"))' \
      "$result" "${parts[@]}" || mark_failed "round $r: merging nodeaudit files"
  fi
  ours+=("$result")
  peer="$work/pytorch-round$r.json"
  PYTHONUNBUFFERED=1 "$python" "$root/bench/gpu/torch_peers.py" --result "$out/run.json" --out "$peer" ||
    mark_failed "round $r: torch_peers.py"
  [[ -f "$peer" ]] || echo '{"figures": [], "skipped": {"all": "torch_peers.py failed"}}' >"$peer"
  theirs+=("$peer")
done
"$python" "$root/bench/gpu/peer_table.py" --nodeaudit "${ours[@]}" --torch "${theirs[@]}" --run "$out/run.json" \
  --md "$out/peer-table.md" --json "$out/peer-table.json" || mark_failed "peer_table.py"

step "probe summary"
"$python" - "$out/run.json" <<'PY' || true
import json, sys
doc = json.load(open(sys.argv[1]))
for p in doc.get("probes", []):
    print(f"{p['id']:<24} {p['status']:<10} {p.get('reason', '')}")
    for f in p.get("findings", []):
        if f["severity"] != "info":
            print(f"{'':<24} {f['severity']:<10} {f['code']}: {f['message']}")
PY
tar -C "$work" -czf "$out/rounds.tgz" . || mark_failed "packing rounds.tgz"
step "done in $((SECONDS - started_s)) s: exit $status; files in $out: $(ls "$out" | tr '\n' ' ')"
exit "$status"
