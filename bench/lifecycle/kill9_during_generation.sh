#!/usr/bin/env bash
# kill -9 of `nodeaudit run` while storage.dataset generates its sample files, TRIES times, with
# LOAD busy loops beside it (a loaded machine): after each kill, how long the probe child took to
# end (its parent-death signal, the probe's own removal, then the child's reaper past its grace) and
# what was left in the data directory. Every try starts from an empty data directory.
#   bench/lifecycle/kill9_during_generation.sh [BIN] ; TRIES=20 LOAD=2 LEVEL=standard AT_FILES=10000 by default
set -u
BIN=${1:-build/nodeaudit}
TRIES=${TRIES:-20}
LOAD=${LOAD:-2}
LEVEL=${LEVEL:-standard}
AT_FILES=${AT_FILES:-10000}  # kill once this many entries exist in the data directory
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kill9-bench-XXXXXX")
DATA="$WORK/data"
mkdir -p "$DATA"
load_pids=()
for _ in $(seq "$LOAD"); do (while :; do :; done) & load_pids+=($!); done
cleanup() { kill "${load_pids[@]}" 2>/dev/null; [ -n "${run_pid:-}" ] && kill -9 "$run_pid" 2>/dev/null; sleep 1; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

entries() { find "$DATA" -mindepth 1 2>/dev/null | wc -l; }
child_alive() { pgrep -f -- "probe storage.dataset .*$DATA" >/dev/null; }

clean=0
printf '%-4s %-14s %-16s %-12s\n' try files_at_kill child_gone_s entries_left
for try in $(seq "$TRIES"); do
  "$BIN" run --only storage.dataset --level "$LEVEL" --data-dir "$DATA" --out "$WORK/r$try.json" >"$WORK/log$try" 2>&1 &
  run_pid=$!
  # Generation under way: at least AT_FILES entries written.
  for _ in $(seq 1200); do [ "$(entries)" -ge "$AT_FILES" ] && break; sleep 0.1; done
  at_kill=$(entries)
  kill -9 "$run_pid"
  wait "$run_pid" 2>/dev/null
  start=$(date +%s.%N)
  for _ in $(seq 1200); do child_alive || break; sleep 0.05; done
  gone_s=$(echo "$(date +%s.%N) - $start" | bc)
  left=$(entries)
  [ "$left" -eq 0 ] && clean=$((clean + 1))
  printf '%-4s %-14s %-16.2f %-12s\n' "$try" "$at_kill" "$gone_s" "$left"
  rm -rf "${DATA:?}"/* "$WORK/r$try.json"
done
echo "left nothing in $clean of $TRIES tries (LOAD=$LOAD busy loops, --level $LEVEL)"
