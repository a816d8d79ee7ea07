#!/usr/bin/env bash
# The goals of `nodeaudit compare` on this machine, measured (figures for a report, not a test):
#
# 1. A/A: RUNS runs (default 5) of PROBES, back to back, at the quick level (its default rounds) and
#    again with --rounds 3; `compare` over every ordered pair (20 for 5 runs). Every run is the same
#    build on the same node, so every exit 1 is a false alarm. Printed per mode: pairs exiting 1, and
#    the share of figures `unchanged` (not inconclusive, not disturbed) over all pairs.
#    With BEFORE=/path/to/an/older/nodeaudit the same is measured with that binary (its own runs,
#    compared by itself), for the share before and after a change.
# 2. A 20% drop between two single-run results: a quick run measured with --rounds 1, every figure
#    scaled to 0.8 (lower-is-better figures to 1.25): `compare` must exit 1.
# 3. A real slowdown: one quick run under a CPU quota (cgroup v1 cpu.cfs_quota_us, or v2 cpu.max)
#    of SLOW_SHARE (default 0.85) of the CPUs; compared against each A/A quick run: caught when the
#    gate fails with a host.* figure regressed.
#
# Usage: bench/compare/noise_goals.sh OUT_DIR   (root for the cgroup; prints a summary at the end)
# Env: NODEAUDIT (default build/nodeaudit), RUNS, PROBES, DATA_DIR (for storage probes), BEFORE, SLOW_SHARE,
#      MODES (default "quick rounds3")
# REJUDGE="DIR ..." measures nothing: it compares the runs already in each DIR (run1..runN.json of an
# earlier OUT_DIR/after-*) with NODEAUDIT, and with BEFORE when set: two compare rules on the same runs.
set -euo pipefail

out=${1:?usage: noise_goals.sh OUT_DIR}
bin=$(realpath "${NODEAUDIT:-build/nodeaudit}")
runs=${RUNS:-5}
probes=${PROBES:-host.memory-bandwidth,host.decode,storage.read}
slow_share=${SLOW_SHARE:-0.85}
modes=${MODES:-quick rounds3}
mkdir -p "$out"
out=$(realpath "$out")
data_dir=${DATA_DIR:-$out/data}
mkdir -p "$data_dir"
log="$out/noise_goals.log"
: >"$log"

measure() {  # $1 binary, $2 output file, rest: run flags
  local binary=$1 file=$2
  shift 2
  "$binary" run --only "$probes" --data-dir "$data_dir" "$@" --out "$file" >>"$log" 2>&1 || true
}

# Prints "exit1 pairs unchanged figures" over every ordered pair of $2/run*.json, compared by $1.
count_pairs() {
  local binary=$1 dir=$2 exit1=0 pairs=0 unchanged=0 figures=0 rc line u f
  for i in $(seq 1 "$runs"); do
    for j in $(seq 1 "$runs"); do
      [ "$i" = "$j" ] && continue
      rc=0
      "$binary" compare "$dir/run$i.json" "$dir/run$j.json" >"$dir/compare-$i-$j.md" 2>&1 || rc=$?
      pairs=$((pairs + 1))
      [ "$rc" = 1 ] && exit1=$((exit1 + 1))
      [ "$rc" = 2 ] && echo "compare $i $j: bad input (exit 2)" >&2
      line=$(grep -m1 -E '^\*\*(NO )?REGRESSION\*\*' "$dir/compare-$i-$j.md" || true)
      read -r u f < <(python3 -c 'import re,sys
t = sys.argv[1]
n = {k: int(v) for v, k in re.findall(r"(\d+) (regressed|improved|unchanged|inconclusive|not judged|incomparable)", t)}
print(n.get("unchanged", 0), sum(n.values()))' "$line")
      unchanged=$((unchanged + u))
      figures=$((figures + f))
    done
  done
  echo "$exit1 $pairs $unchanged $figures"
}

a_a() {  # $1 binary, $2 label, rest: run flags
  local binary=$1 label=$2 exit1 pairs unchanged figures start
  shift 2
  local dir="$out/$label"
  mkdir -p "$dir"
  start=$(date +%s)
  for i in $(seq 1 "$runs"); do
    echo "$label: run $i of $runs ..." | tee -a "$log"
    measure "$binary" "$dir/run$i.json" "$@"
  done
  echo "$label: $runs runs took $(( $(date +%s) - start )) s" | tee -a "$log"
  read -r exit1 pairs unchanged figures < <(count_pairs "$binary" "$dir")
  echo "$label: A/A pairs exiting 1: $exit1 of $pairs; figures unchanged: $unchanged of $figures" \
       "($(awk -v u="$unchanged" -v f="$figures" 'BEGIN { printf "%.0f", f ? 100 * u / f : 0 }')%)" | tee -a "$log"
  echo "$label: disturbed figures over all pairs: $(cat "$dir"/compare-*.md | grep -c '| disturbed |' || true)" | tee -a "$log"
}

if [ -n "${REJUDGE:-}" ]; then
  for dir in $REJUDGE; do
    for binary in "$bin" ${BEFORE:+"$(realpath "$BEFORE")"}; do
      read -r exit1 pairs unchanged figures < <(count_pairs "$binary" "$dir")
      echo "$dir by $binary: A/A pairs exiting 1: $exit1 of $pairs; figures unchanged: $unchanged of $figures;" \
           "disturbed: $(cat "$dir"/compare-*.md | grep -c '| disturbed |' || true)" | tee -a "$log"
    done
  done
  exit 0
fi

for mode in $modes; do
  case $mode in
    quick) a_a "$bin" after-quick --level quick ;;
    rounds3) a_a "$bin" after-rounds3 --level quick --rounds 3 ;;
  esac
  if [ -n "${BEFORE:-}" ]; then
    case $mode in
      quick) a_a "$(realpath "$BEFORE")" before-quick --level quick ;;
      rounds3) a_a "$(realpath "$BEFORE")" before-rounds3 --level quick --rounds 3 ;;
    esac
  fi
done

# 2. A 20% drop between two single-run results.
measure "$bin" "$out/single.json" --level quick --rounds 1
python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for p in d["probes"]:
    for m in p.get("metrics", []):
        f = 0.8 if m.get("better") == "higher" else 1.25
        for k in ("median", "mean", "min", "max", "p5", "p95", "stdev"):
            if isinstance(m.get(k), (int, float)): m[k] *= f
        m["ci95"] = [x * f for x in m.get("ci95", [])]
        m["samples"] = [x * f for x in m.get("samples", [])]
        if "round_medians" in m: m["round_medians"] = [x * f for x in m["round_medians"]]
json.dump(d, open(sys.argv[2], "w"))' "$out/single.json" "$out/single-20pct-slower.json"
rc=0
"$bin" compare "$out/single.json" "$out/single-20pct-slower.json" >"$out/single-drop.md" 2>&1 || rc=$?
echo "20% drop between two single-run results: compare exit $rc (goal 1)" | tee -a "$log"
grep -m1 -E '^\*\*' "$out/single-drop.md" | tee -a "$log" || true

# 3. The slowdown under a CPU quota.
[ -d "$out/after-quick" ] || { echo "no quick A/A runs to compare the slow run with" | tee -a "$log"; exit 0; }
cpus=$(nproc)
period=100000
quota=$(awk -v s="$slow_share" -v c="$cpus" -v p="$period" 'BEGIN { printf "%d", s * c * p }')
if [ -d /sys/fs/cgroup/cpu ] && [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
  cg=/sys/fs/cgroup/cpu/nodeaudit-noise-$$
  mkdir "$cg"
  echo "$period" >"$cg/cpu.cfs_period_us"
  echo "$quota" >"$cg/cpu.cfs_quota_us"
else
  cg=/sys/fs/cgroup/nodeaudit-noise-$$
  mkdir "$cg"
  echo "$quota $period" >"$cg/cpu.max"
fi
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
echo "slow run: quota $quota us per $period us ($slow_share of $cpus CPUs) in $cg" | tee -a "$log"
sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$cg" "$bin" run --only "$probes" --data-dir "$data_dir" \
  --level quick --out "$out/slow.json" >>"$log" 2>&1 || true
caught=0
for i in $(seq 1 "$runs"); do
  rc=0
  "$bin" compare "$out/after-quick/run$i.json" "$out/slow.json" >"$out/slow-vs-$i.md" 2>&1 || rc=$?
  if [ "$rc" = 1 ] && grep -q "^| host\.[a-z-]* .* | regression" "$out/slow-vs-$i.md"; then caught=$((caught + 1)); fi
done
echo "slowdown under the quota caught (exit 1, a host.* figure regressed): $caught of $runs" | tee -a "$log"
grep -h -E "^\| host\.decode images_per_s \[stage=full" "$out/slow-vs-1.md" | cut -c1-300 | tee -a "$log" || true
