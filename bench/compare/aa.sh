#!/usr/bin/env bash
# A/A false alarms and a real slowdown, for `nodeaudit compare`.
#
# 1. RUNS runs (default 5) of the CPU probes at --rounds 3 on this machine, back to back.
# 2. `compare` over every ordered pair of them (20 for 5 runs; 10 unordered): how many exit 1.
#    Every run is the same build on the same idle node, so every exit 1 is a false alarm.
#    With BEFORE=/path/to/an/older/nodeaudit the same pairs are also compared by that binary.
# 3. One more run of the same probes under a CPU quota (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us)
#    of SLOW_SHARE (default 0.8) of the CPUs, which slows host.decode (it uses every core): compare
#    each A/A run against it and all runs pooled as baselines; host.decode's figures should come out
#    as regressions where their spread is below 10%.
#
# Usage: bench/compare/aa.sh OUT_DIR   (needs root for the cgroup; prints a summary at the end)
# Env: NODEAUDIT (default build/nodeaudit), RUNS, PROBES, EXTRA (flags for every run), BEFORE, SLOW_SHARE
set -euo pipefail

out=${1:?usage: aa.sh OUT_DIR}
bin=${NODEAUDIT:-build/nodeaudit}
runs=${RUNS:-5}
probes=${PROBES:-host.memory-bandwidth,host.decode}
extra=${EXTRA:-}
slow_share=${SLOW_SHARE:-0.8}
mkdir -p "$out"
log="$out/aa.log"
: >"$log"

for i in $(seq 1 "$runs"); do
  echo "run $i of $runs ..." | tee -a "$log"
  # shellcheck disable=SC2086
  "$bin" run --only "$probes" --rounds 3 $extra --out "$out/run$i.json" >>"$log" 2>&1
done

count_pairs() {  # $1: binary; prints "exit1 total"
  local exit1=0 total=0 rc
  for i in $(seq 1 "$runs"); do
    for j in $(seq 1 "$runs"); do
      [ "$i" = "$j" ] && continue
      rc=0
      "$1" compare "$out/run$i.json" "$out/run$j.json" >"$out/compare-$i-$j.$(basename "$1").md" 2>&1 || rc=$?
      total=$((total + 1))
      [ "$rc" = 1 ] && exit1=$((exit1 + 1))
      [ "$rc" = 2 ] && echo "compare $i $j: bad input (exit 2)" >&2
    done
  done
  echo "$exit1 $total"
}

read -r after_exit1 pairs < <(count_pairs "$bin")
disturbed=$(grep -c "was disturbed" "$log" || true)
echo "A/A pairs exiting 1 (false alarms): $after_exit1 of $pairs ($bin)" | tee -a "$log"
echo "probe warnings 'was disturbed' during the A/A runs: $disturbed" | tee -a "$log"
# The same pairs with the disturbed marks taken out: how many false alarms the noise band alone prevents.
mkdir -p "$out/undisturbed"
for i in $(seq 1 "$runs"); do
  python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for p in d["probes"]:
    p.pop("disturbed", None)
json.dump(d, open(sys.argv[2], "w"))' "$out/run$i.json" "$out/undisturbed/run$i.json"
done
read -r undisturbed_exit1 _ < <(out="$out/undisturbed" count_pairs "$bin")
echo "A/A pairs exiting 1 with the disturbed marks removed (noise band alone): $undisturbed_exit1 of $pairs" | tee -a "$log"
python3 "$(dirname "$0")/floors.py" "$out"/run[0-9]*.json | tee -a "$log"
if [ -n "${BEFORE:-}" ]; then
  read -r before_exit1 _ < <(count_pairs "$BEFORE")
  echo "A/A pairs exiting 1 with $BEFORE: $before_exit1 of $pairs" | tee -a "$log"
fi

# The slowdown: a CPU quota on one run of host.decode.
cpus=$(nproc)
period=100000
quota=$(awk -v s="$slow_share" -v c="$cpus" -v p="$period" 'BEGIN { printf "%d", s * c * p }')
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  cg=/sys/fs/cgroup/nodeaudit-aa-$$
  mkdir "$cg"
  echo "$quota $period" >"$cg/cpu.max"
else
  cg=/sys/fs/cgroup/cpu/nodeaudit-aa-$$
  mkdir "$cg"
  echo "$period" >"$cg/cpu.cfs_period_us"
  echo "$quota" >"$cg/cpu.cfs_quota_us"
fi
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
echo "slow run: host.decode under a quota of $quota us per $period us ($slow_share of $cpus CPUs) in $cg" | tee -a "$log"
# shellcheck disable=SC2086
sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$cg" "$bin" run --only "$probes" --rounds 3 $extra \
  --out "$out/slow.json" >>"$log" 2>&1
caught=0
for i in $(seq 1 "$runs"); do
  rc=0
  "$bin" compare "$out/run$i.json" "$out/slow.json" >"$out/slow-vs-$i.md" 2>&1 || rc=$?
  # Caught: the gate fails and it is host.decode's figures that regressed.
  if [ "$rc" = 1 ] && grep -q "^| host.decode .* | regression |" "$out/slow-vs-$i.md"; then caught=$((caught + 1)); fi
done
echo "slowdown caught (exit 1, host.decode regressed) against single baselines: $caught of $runs" | tee -a "$log"
rc=0
"$bin" compare $(for i in $(seq 1 "$runs"); do echo "$out/run$i.json"; done) "$out/slow.json" >"$out/slow-vs-all.md" 2>&1 || rc=$?
echo "slowdown against all $runs runs pooled as baselines: exit $rc" | tee -a "$log"
grep -E "^\*\*|host.decode images_per_s \[stage=full" "$out/slow-vs-all.md" | tee -a "$log" || true
