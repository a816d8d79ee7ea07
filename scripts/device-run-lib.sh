# Functions of scripts/device-run.sh (sourced by it; it sets bundle, python, root, the manifest's
# BUNDLE_* and, once it logs, log, run_dir, work, scratch, deadline_s, finish_reserve_s,
# kill_grace_s, status, ours, theirs).
# shellcheck shell=bash disable=SC2154,SC2034

# --- set-up (nothing written but the carried bundle's file modes) --------------------------------

# A copy may not keep file modes: the bundle's executables get them back as the bundle made them.
make_bundle_executable() {
  local relative file
  for relative in ${BUNDLE_EXECUTABLES:-nodeaudit $BUNDLE_TESTS}; do
    file="$bundle/$relative"
    [[ -f "$file" ]] || { bundle_problem="$file: not in the bundle"; return 1; }
    [[ -x "$file" ]] || chmod a+rx "$file" || { bundle_problem="$file: cannot make it executable"; return 1; }
  done
}

# The folders of PYTHON's NVIDIA wheels (nvidia/cu13/lib, nvidia/nccl/lib, ...), colon-separated.
nvidia_wheel_dirs() {
  "$python" - <<'PY' 2>/dev/null
import glob, importlib.util, os
spec = importlib.util.find_spec("nvidia")
roots = list(spec.submodule_search_locations) if spec and spec.submodule_search_locations else []
dirs = sorted({os.path.dirname(p) for r in roots for p in glob.glob(os.path.join(r, "**", "lib*.so*"), recursive=True)})
print(":".join(dirs))
PY
}

# The CUDA version the driver supports ("13.0"), or "none: why"; the loader's path first, then
# where the NVIDIA container toolkit mounts the driver's libraries.
driver_cuda_version() {
  LD_LIBRARY_PATH="$nodeaudit_ld_path" "$python" - <<'PY' 2>&1
import ctypes
errors = []
for name in ("libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1"):
    try:
        cuda = ctypes.CDLL(name)
        break
    except OSError as e:
        errors.append(str(e))
else:
    print(f"none: libcuda.so.1 not found ({'; '.join(errors)})")
    raise SystemExit
v = ctypes.c_int(0)
rc = cuda.cuDriverGetVersion(ctypes.byref(v))
print(f"{v.value // 1000}.{v.value % 1000 // 10}" if rc == 0 else f"none: cuDriverGetVersion returned {rc}")
PY
}

# The CUDA version of the runtime library $1 as nodeaudit's loader finds it.
runtime_cuda_version() {
  LD_LIBRARY_PATH="$nodeaudit_ld_path" "$python" - "$1" <<'PY' 2>&1
import ctypes, sys
v = ctypes.c_int(0)
rc = ctypes.CDLL(sys.argv[1]).cudaRuntimeGetVersion(ctypes.byref(v))
print(f"{v.value // 1000}.{v.value % 1000 // 10}" if rc == 0 else f"?: cudaRuntimeGetVersion returned {rc}")
PY
}

# --- logging and the budget ------------------------------------------------------------------------
say() { printf '%s\n' "$@" >>"$log"; printf '%s\n' "$@" >&3; }
logged() { tee -a "$log" >&3; }
mark_failed() { say "device-run: FAILED: $*"; status=1; }
seconds_left() { echo $((deadline_s - SECONDS)); }

# Prints the seconds a step may run: CAP_S ($1) or what is left of the budget before the finish,
# whichever is less; says so and fails when that is under LEAST_S ($2). $3 names the step.
limit_for() {
  local cap="$1" least="$2" limit=$(($(seconds_left) - finish_reserve_s - kill_grace_s))
  ((limit > cap)) && limit=$cap
  if ((limit < least)); then
    say "device-run: not run: $3: ${limit} s of the budget left for it, it needs ${least} s"
    return 1
  fi
  echo "$limit"
}

# step CAP_S LEAST_S WHAT COMMAND...: COMMAND under `timeout` (limit_for's), its output logged and
# shown; step_rc is its exit (124: stopped at the limit, 125: not started).
step() {
  local cap="$1" least="$2" what="$3" limit
  shift 3
  if ! limit="$(limit_for "$cap" "$least" "$what")"; then
    step_rc=125
    return 125
  fi
  say "" "=== $(date -u +%H:%M:%S)  $what  (limit ${limit} s, $(seconds_left) s of the budget left)"
  timeout -k "$kill_grace_s" "$limit" "$@" 2>&1 | logged
  step_rc=${PIPESTATUS[0]}
  ((step_rc == 124 || step_rc == 137)) && say "device-run: $what: stopped at its ${limit} s limit"
  return "$step_rc"
}

# --- the steps ----------------------------------------------------------------------------------------

# The tests find the CLI and the fixtures through the paths they were built with: those paths are
# linked to this checkout and this bundle for the run (on the build machine they already are) and
# the links, and any folder made for them, are removed at the end.
made_links=() made_dirs=()
link_for_tests() {  # $1: the path the tests were built with, $2: what it must show
  [[ "$1" -ef "$2" ]] && return 0
  if [[ -e "$1" || -L "$1" ]]; then
    links_problem="$1 (a path compiled into the tests) is another folder here"
    return 1
  fi
  local top="$1"
  while [[ ! -e "$(dirname "$top")" ]]; do top="$(dirname "$top")"; done
  mkdir -p "$(dirname "$1")" && ln -s "$2" "$1" || { links_problem="cannot link $1 to $2"; return 1; }
  made_links+=("$1")
  [[ "$top" != "$1" ]] && made_dirs+=("$top")
  return 0
}

remove_test_links() {
  local i path
  # Last made first: the build folder's link may lie inside the linked checkout path.
  for ((i = ${#made_links[@]} - 1; i >= 0; i--)); do [[ -L "${made_links[i]}" ]] && rm -f "${made_links[i]}"; done
  for path in "${made_dirs[@]}"; do find "$path" -depth -type d -empty -delete 2>/dev/null; done
}

run_bundle_tests() {
  say "" "=== $(date -u +%H:%M:%S)  tests: $BUNDLE_TESTS"
  if ! link_for_tests "$BUNDLE_SOURCE_ROOT" "$root" || ! link_for_tests "$BUNDLE_BUILD_DIR" "$bundle"; then
    mark_failed "the GPU tests not run: $links_problem"
    return
  fi
  local t limit
  for t in $BUNDLE_TESTS; do
    limit="$(limit_for 240 20 "test $t")" || { status=1; continue; }
    (cd "$BUNDLE_BUILD_DIR/$(dirname "$t")" &&
      timeout -k "$kill_grace_s" "$limit" env LD_LIBRARY_PATH="$nodeaudit_ld_path" "./$(basename "$t")" --gtest_color=no) \
      >"$work/test.log" 2>&1 || mark_failed "test $t (exit $?; see tests.log)"
    { echo "--- $t"; cat "$work/test.log"; } >>"$run_dir/tests.log"
    say "$t: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?' "$work/test.log" | tr -s ' ' | tr '\n' ' ')"
    grep -E '^\[  (FAILED|SKIPPED) +\] [A-Za-z0-9_/]+\.[A-Za-z0-9_/]+$' "$work/test.log" | sort -u | logged
  done
  rm -f "$work/test.log"
}

# nodeaudit's side of a later round: the probes PyTorch is compared with, merged into one file.
nodeaudit_round() {
  local r="$1" probe part parts=() result="$work/nodeaudit-round$1.json"
  for probe in "gpu.gemm --dtypes bf16,fp8" "gpu.memory-bandwidth" "gpu.pcie"; do
    part="$work/round$r-${probe%% *}.json"
    # shellcheck disable=SC2086
    step 150 15 "round $r: nodeaudit probe $probe --level quick" \
      env LD_LIBRARY_PATH="$nodeaudit_ld_path" "$nodeaudit" probe $probe --level quick --out "$part" ||
      mark_failed "round $r: nodeaudit probe $probe (exit $step_rc)"
    [[ -f "$part" ]] && parts+=("$part")
  done
  timeout 30 "$python" -c 'import json,sys; docs=[json.load(open(p)) for p in sys.argv[2:]]; json.dump({"probes":[q for d in docs for q in d.get("probes",[])]}, open(sys.argv[1],"w"))' \
    "$result" "${parts[@]}" 2>&1 | logged
  [[ -s "$result" ]] || { mark_failed "round $r: merging nodeaudit's files"; echo '{"probes": []}' >"$result"; }
  ours+=("$result")
}

# PyTorch's side of round $1, at the GEMM shape and the sizes of nodeaudit's result $2 (that round's).
torch_round() {
  local r="$1" peer="$work/pytorch-round$1.json" begun=$SECONDS cpu_args=()
  [[ "${PEERS_ON_CPU:-0}" == 1 ]] && cpu_args=(--device cpu --small)
  step 240 20 "round $r: PyTorch at the shapes and sizes of $(basename "$2")" \
    env PYTHONUNBUFFERED=1 "$python" "$root/bench/gpu/torch_peers.py" --result "$2" --out "$peer" --level quick "${cpu_args[@]}" ||
    mark_failed "round $r: torch_peers.py (exit $step_rc)"
  [[ -f "$peer" ]] || echo '{"figures": [], "skipped": {"all": "torch_peers.py did not finish"}}' >"$peer"
  theirs+=("$peer")
  torch_round_s=$((SECONDS - begun))
}

# The table over the rounds that have both sides; rewritten after every round and at the finish.
write_peer_table() {
  local n=$((${#ours[@]} < ${#theirs[@]} ? ${#ours[@]} : ${#theirs[@]})) run_args=()
  ((n > 0)) || { say "device-run: no round has both sides: no peer table"; return; }
  [[ -f "$run_dir/run.json" ]] && run_args=(--run "$run_dir/run.json")
  timeout 15 "$python" "$root/bench/gpu/peer_table.py" --nodeaudit "${ours[@]:0:n}" --torch "${theirs[@]:0:n}" "${run_args[@]}" \
    --commit "$BUNDLE_COMMIT" --md "$run_dir/peer-table.md" --json "$run_dir/peer-table.json" >>"$log" 2>&1 ||
    mark_failed "peer_table.py"
}

print_probe_summary() {
  [[ -f "$run_dir/run.json" ]] || { say "device-run: no run.json: the quick run did not start"; return; }
  timeout 5 "$python" - "$run_dir/run.json" <<'PY' 2>&1 | logged
import json, sys
doc = json.load(open(sys.argv[1]))
for p in doc.get("probes", []):
    print(f"{p['id']:<24} {p['status']:<10} {p.get('reason', '')}")
    for f in p.get("findings", []):
        if f["severity"] != "info":
            print(f"{'':<24} {f['severity']:<10} {f['code']}: {f['message']}")
PY
}

# Always last (the EXIT trap): the table, the summary, the rounds' files; nothing left behind.
# Its steps' limits add up to finish_reserve_s (30 s).
finish() {
  trap - EXIT INT TERM
  say "" "=== $(date -u +%H:%M:%S)  finish"
  write_peer_table
  [[ -f "$run_dir/peer-table.md" ]] && cat "$run_dir/peer-table.md" >&3  # the log has it from peer_table.py
  print_probe_summary
  timeout 10 tar -C "$work" --exclude ./data -czf "$run_dir/rounds.tgz" . 2>&1 | logged
  [[ ${PIPESTATUS[0]} -eq 0 ]] || mark_failed "packing rounds.tgz"
  remove_test_links
  rm -rf "$work"
  say "device-run: done in $((SECONDS - started_s)) s: exit $status; files in $run_dir: $(ls "$run_dir" | tr '\n' ' ')"
  exit "$status"
}
