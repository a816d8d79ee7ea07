#!/usr/bin/env bash
# The GPU check from a bundle (scripts/device-bundle.sh) on a machine with a GPU, a driver and the
# CUDA libraries (PyTorch's NVIDIA wheels, or a CUDA install) but no build tools or -dev libraries.
# On a lent machine that runs one command of at most 600 s with the bundle carried, the one call is
# (scripts/README.md):
#   command:  PYTHON=/opt/torch/.venv/bin/python bash scripts/device-run.sh "$OUT"
#   carry:    .device-bundle          timeout_s: 600
#
# One budget (BUDGET_S, default 480 s of the 600) covers everything: each step runs under `timeout`
# with what is left of it, less what the finish needs, so the call ends inside its limit with what
# it measured. Most valuable first:
#   1. checks before anything is written: every library the bundle needs resolves, a driver is
#      present and supports the bundle's CUDA runtime (one line naming it, exit 2 otherwise)
#   2. the node: nvidia-smi, `nodeaudit env`, `nodeaudit list`
#   3. `nodeaudit run --only 'gpu.*,comm.*,pipeline.step' --level quick` (run.json is rewritten after
#      every probe, so a run stopped at its limit keeps what it measured), then PyTorch round 1 at
#      the shapes and sizes that run used
#   4. the GPU-relevant tests of the bundle
#   5. more rounds while the budget allows one: gpu.gemm (bf16, fp8), gpu.memory-bandwidth and
#      gpu.pcie again, then PyTorch at that round's GEMM shape (A B A B ...)
#   6. always, also when stopped: the peer table (bench/gpu/peer_table.py), a probe summary,
#      rounds.tgz; the links made for the tests and the scratch folder are removed.
# Files go to OUT_DIR/NAME (a new folder; OUT_DIR may hold other things): device-run.log, env.json,
# tests.log, run.json, peer-table.md/.json, rounds.tgz (every round's files).
# Usage: scripts/device-run.sh OUT_DIR
# Knobs (environment): BUNDLE (default .device-bundle), PYTHON (default python3: the one with torch
#   and the NVIDIA wheels), ROUNDS (default 3), BUDGET_S (default 480), RUN_NAME (default
#   <host>-<UTC time>), CUDA_LIB_DIRS (colon-separated, searched before the wheels' folders),
#   SCRATCH_DIR (default /tmp), ALLOW_NO_GPU=1 (go on without a driver: a check of this script where
#   no GPU is), PEERS_ON_CPU=1 (with ALLOW_NO_GPU: PyTorch's side on the CPU at small sizes),
#   SKIP_PROBES (probe ids or globs the quick run leaves out, as `run --skip`).
# Exit: 0 all ran and passed, 1 a test, probe or step failed or did not fit (the rest still ran),
#   2 bad set-up (nothing written), 130 interrupted.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out_parent="${1:?usage: scripts/device-run.sh OUT_DIR}"
bundle="$(realpath -m "${BUNDLE:-$root/.device-bundle}")"
python="${PYTHON:-python3}"
rounds="${ROUNDS:-3}"
budget_s="${BUDGET_S:-480}"
name="${RUN_NAME:-$(hostname -s 2>/dev/null || echo node)-$(date -u +%Y%m%dT%H%M%SZ)}"
started_s=$SECONDS
die() { printf 'device-run: %s\n' "$*" >&2; exit 2; }

# --- 1. checks, before anything is written -------------------------------------------------------
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || die "ROUNDS=$rounds: must be a whole number from 1 to 99"
[[ "$budget_s" =~ ^[0-9]+$ ]] && ((budget_s >= 60 && budget_s <= 86400)) || die "BUDGET_S=$budget_s: must be seconds from 60 to 86400"
[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || die "RUN_NAME=$name: letters, digits, '.', '_' and '-' only"
[[ -f "$bundle/manifest.env" ]] || die "$bundle/manifest.env not found: make the bundle with scripts/device-bundle.sh and carry it"
# shellcheck source=/dev/null
source "$bundle/manifest.env"
command -v "$python" >/dev/null || die "PYTHON=$python: not found"
# shellcheck source=scripts/device-run-lib.sh
source "$root/scripts/device-run-lib.sh"
make_bundle_executable || die "$bundle_problem"
nodeaudit="$bundle/nodeaudit"
wheel_dirs="$(nvidia_wheel_dirs)"
# Only nodeaudit's processes get the CUDA libraries' folders; the bundle's own libraries come from
# its run path (DT_RPATH, searched before LD_LIBRARY_PATH), so python3 and torch never see them.
# Then the machine's own path, then where the NVIDIA container toolkit mounts the driver's libraries.
ld_dirs=()
for dirs in "${CUDA_LIB_DIRS:-}" "$wheel_dirs" "${LD_LIBRARY_PATH:-}"; do [[ -n "$dirs" ]] && ld_dirs+=("$dirs"); done
[[ -d /usr/local/nvidia/lib64 ]] && ld_dirs+=(/usr/local/nvidia/lib64)
nodeaudit_ld_path="$(IFS=:; echo "${ld_dirs[*]}")"
na=(env "LD_LIBRARY_PATH=$nodeaudit_ld_path")
missing="$("${na[@]}" ldd "$nodeaudit" 2>&1 | awk '$3 == "not" {print $1}' | tr '\n' ' ')"
if [[ -z "$missing" ]] && ! loader_error="$("${na[@]}" "$nodeaudit" --help 2>&1 >/dev/null)"; then
  # ldd found a file the loader cannot use (a broken or empty copy): the loader's own words name it.
  missing="$(sed -n 's/.*error while loading shared libraries: \([^:]*\):.*/\1/p' <<<"$loader_error" | head -n 1)"
  [[ -n "$missing" ]] || die "$nodeaudit does not start: $(head -n 1 <<<"$loader_error")"
fi
[[ -z "$missing" ]] || die "the bundle needs ${missing% } and it is not found in the bundle's lib/, CUDA_LIB_DIRS or $python's NVIDIA wheels (${wheel_dirs:-none found})"
driver="$(driver_cuda_version)"
runtime="$BUNDLE_CUDA_RUNTIME" runtime_from="built in"
cudart="$(tr ' ' '\n' <<<"$BUNDLE_CUDA_LIBS" | grep -m1 '^libcudart' || true)"
if [[ -n "$cudart" ]]; then
  runtime="$(runtime_cuda_version "$cudart")" runtime_from="$cudart as loaded"
  [[ "$runtime" =~ ^[0-9]+\.[0-9]+$ ]] || die "$cudart: cannot read its CUDA version ($runtime)"
fi
if [[ "$driver" == none:* ]]; then
  [[ "${ALLOW_NO_GPU:-0}" == 1 ]] || die "no NVIDIA driver (${driver#none: }): the bundle's GPU probes need one"
elif ((${driver%%.*} < ${runtime%%.*})); then
  die "the driver supports CUDA $driver, older than the bundle's CUDA runtime $runtime ($runtime_from): update the driver or rebuild the bundle with CUDA ${driver%%.*}"
fi
# Within one major version a newer runtime runs on an older driver (CUDA's minor version
# compatibility), as long as no PTX has to be compiled: the bundle carries machine code for its archs.
run_dir="$out_parent/$name"
[[ ! -e "$run_dir" ]] || die "$run_dir exists: give another RUN_NAME or OUT_DIR (nothing is overwritten)"
work="$(mktemp -d "${SCRATCH_DIR:-/tmp}/nodeaudit-device-run.XXXXXX")" || die "cannot make a scratch folder in ${SCRATCH_DIR:-/tmp}"
scratch="$work/data"
if ! { mkdir "$scratch" && mkdir -p "$out_parent" && mkdir "$run_dir"; }; then
  rm -rf "$work"
  die "OUT_DIR $out_parent: cannot create $run_dir in it"
fi

# --- from here on everything is logged, and the finish always runs --------------------------------
run_dir="$(realpath "$run_dir")"
log="$run_dir/device-run.log"
exec 3>&1
status=0 ours=() theirs=() torch_round_s=0
deadline_s=$((started_s + budget_s))
finish_reserve_s=30 kill_grace_s=10
trap finish EXIT
trap 'say "device-run: interrupted"; status=130; exit 130' INT TERM

say "device-run: bundle $BUNDLE_COMMIT built $BUNDLE_BUILT_AT with CUDA $BUNDLE_CUDA_RUNTIME; runtime CUDA $runtime ($runtime_from), archs $BUNDLE_CUDA_ARCHS; driver CUDA $driver; budget ${budget_s} s; files in $run_dir"
say "nodeaudit's LD_LIBRARY_PATH=$nodeaudit_ld_path"
"${na[@]}" ldd "$nodeaudit" | grep -E 'cublas|nccl|cudart|bundle' 2>&1 | logged
step 30 5 "node: nvidia-smi" nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,power.limit --format=csv ||
  say "(nvidia-smi unavailable)"
if limit="$(limit_for 60 5 "nodeaudit env --format json")"; then
  timeout -k "$kill_grace_s" "$limit" "${na[@]}" "$nodeaudit" env --format json >"$run_dir/env.json" 2>>"$log" ||
    mark_failed "nodeaudit env --format json"
else
  status=1
fi
step 60 5 "nodeaudit env" "${na[@]}" "$nodeaudit" env --data-dir "$scratch" || mark_failed "nodeaudit env"
step 30 5 "nodeaudit list" "${na[@]}" "$nodeaudit" list || mark_failed "nodeaudit list"

# --- 3. the quick run and PyTorch round 1 --------------------------------------------------------
# What PyTorch's round 1 gets after the run (import, CUDA start, 5 figures): 90 s, less in a
# budget too small for it, where the run gets what it can.
round1_reserve_s=$((budget_s / 4 < 90 ? budget_s / 4 : 90))
step $(($(seconds_left) - round1_reserve_s - finish_reserve_s - kill_grace_s)) 20 "nodeaudit run --only 'gpu.*,comm.*,pipeline.step' --level quick" \
  "${na[@]}" "$nodeaudit" run --only 'gpu.*,comm.*,pipeline.step' ${SKIP_PROBES:+--skip "$SKIP_PROBES"} --level quick \
  --data-dir "$scratch" --out "$run_dir/run.json" ||
  mark_failed "nodeaudit run (exit $step_rc)"
if [[ -f "$run_dir/run.json" ]]; then
  ours+=("$run_dir/run.json")
else
  echo '{"probes": []}' >"$work/no-run.json"
  ours+=("$work/no-run.json")
fi
torch_round 1 "${ours[0]}"
write_peer_table

# --- 4. the GPU tests ----------------------------------------------------------------------------
run_bundle_tests

# --- 5. more rounds while one fits -----------------------------------------------------------------
round_s=$((torch_round_s + 60))  # the first later round: PyTorch's round 1 and three quick probes
for ((r = 2; r <= rounds; r++)); do
  if (($(seconds_left) - finish_reserve_s < round_s * 5 / 4)); then
    mark_failed "rounds $r to $rounds not run: $(seconds_left) s of the budget left, a round takes about ${round_s} s"
    break
  fi
  round_started_s=$SECONDS
  nodeaudit_round "$r"
  torch_round "$r" "${ours[-1]}"
  write_peer_table
  round_s=$((SECONDS - round_started_s))
done
exit "$status"
