#!/usr/bin/env bash
# The goals of `compare` with this node's history and with --confirm, measured on the machine it runs
# on (figures for a report, not a test):
#
# 1. RUNS runs (default 6) of PROBES at the quick level, back to back, into OUT/runs (run1..runN.json).
#    run's closing line (earlier runs of this host, the smallest change a compare with them can call)
#    is kept from each in OUT/closing-lines.txt.
# 2. A/A with --confirm, one run a side: `compare runI runJ --confirm` over the ordered pairs of the
#    first PAIR_RUNS runs (default 5: 20 pairs). Same build, same node: every exit 1 is a false alarm.
#    A pair that would be called regressed re-runs those probes (so this part costs probe time too).
# 3. History of 1, 3 and 5 runs: the last run as the candidate against the K runs before it, given
#    as a folder (`compare --history DIR`): the share of figures unchanged, inconclusive and called.
# 4. A real slowdown: one more run inside a cgroup v1 CPU quota of QUOTA CPUs (default 1.6 of 2,
#    about 20% less CPU time), judged against the last 5 runs as history: caught when compare exits 1
#    naming regressions. The quota run's own figures against the history's medians say how large
#    the slowdown really was (a quota slows only what needs the CPUs it takes away).
# 2, 3 and 4 are judged on the runs as measured, and again on copies with the disturbance marks taken out.
# Runs already in OUT/runs are kept (run again to re-judge them without measuring).
#
# Usage: bench/compare/history_goals.sh OUT_DIR
# Env: NODEAUDIT (default build/nodeaudit), RUNS, PAIR_RUNS, PROBES, DATA_DIR (for storage probes)
set -euo pipefail

out=${1:?usage: history_goals.sh OUT_DIR}
bin=$(realpath "${NODEAUDIT:-build/nodeaudit}")
runs=${RUNS:-6}
pair_runs=${PAIR_RUNS:-5}
probes=${PROBES:-host.memory-bandwidth,host.decode,storage.read}
mkdir -p "$out/runs"
out=$(realpath "$out")
data_dir=${DATA_DIR:-$out/data}
mkdir -p "$data_dir"
log="$out/history_goals.log"
: >"$log"
: >"$out/closing-lines.txt"

quota=${QUOTA:-1.6}
group=/sys/fs/cgroup/cpu/nodeaudit-history-goals-$$
trap 'rmdir "$group" 2>/dev/null || true' EXIT

for i in $(seq 1 "$runs"); do
  [ -f "$out/runs/run$i.json" ] && continue
  "$bin" run --only "$probes" --data-dir "$data_dir" --out "$out/runs/run$i.json" >"$out/run$i.log" 2>&1 || true
  grep -h "earlier runs of this host" "$out/run$i.log" >>"$out/closing-lines.txt" || true
done

# The verdict counts of one compare's Markdown: "unchanged inconclusive called figures".
counts() {
  python3 -c 'import re,sys
t = open(sys.argv[1]).read()
line = next((l for l in t.splitlines() if re.match(r"^\*\*(NO )?REGRESSION\*\*", l)), "")
n = {k: int(v) for v, k in re.findall(r"(\d+) (regressed|improved|unchanged|inconclusive|not judged|incomparable)", line)}
print(n.get("unchanged", 0), n.get("inconclusive", 0), n.get("regressed", 0) + n.get("improved", 0), sum(n.values()))' "$1"
}

# The goals over the runs in $1 (a folder of run1..runN.json), outputs under $2.
judge() {
  local runs_dir=$1 dest=$2 pairs=0 false_alarms=0 reruns=0 rc k h dir u inc called total
  mkdir -p "$dest"
  for i in $(seq 1 "$pair_runs"); do
    for j in $(seq 1 "$pair_runs"); do
      [ "$i" = "$j" ] && continue
      rc=0
      "$bin" compare "$runs_dir/run$i.json" "$runs_dir/run$j.json" --confirm >"$dest/confirm-$i-$j.md" 2>"$dest/confirm-$i-$j.err" || rc=$?
      pairs=$((pairs + 1))
      [ "$rc" = 1 ] && false_alarms=$((false_alarms + 1))
      [ "$rc" = 2 ] && echo "compare $i $j --confirm: exit 2: $(cat "$dest/confirm-$i-$j.err")" >>"$log"
      if grep -q "again on this node" "$dest/confirm-$i-$j.err"; then reruns=$((reruns + 1)); fi
    done
  done
  echo "$3: A/A one run a side with --confirm: $false_alarms of $pairs ordered pairs exit 1 ($reruns pairs re-ran probes)"
  for k in 1 3 5; do
    [ "$k" -ge "$runs" ] && continue
    dir="$dest/history-$k"
    rm -rf "$dir"
    mkdir -p "$dir"
    for h in $(seq $((runs - k)) $((runs - 1))); do cp "$runs_dir/run$h.json" "$dir/"; done
    rc=0
    "$bin" compare --history "$dir" "$runs_dir/run$runs.json" >"$dest/history-$k.md" 2>&1 || rc=$?
    read -r u inc called total < <(counts "$dest/history-$k.md")
    echo "$3: history of $k runs: $u unchanged, $inc inconclusive, $called called, of $total figures (exit $rc)"
  done
}

if [ ! -f "$out/runs/quota.json" ] && [ -d /sys/fs/cgroup/cpu ]; then
  mkdir "$group"
  echo 100000 >"$group/cpu.cfs_period_us"
  quota_us=$(python3 -c 'import sys; print(int(float(sys.argv[1]) * 100000))' "$quota")
  echo "$quota_us" >"$group/cpu.cfs_quota_us"
  bash -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' _ "$group" \
    "$bin" run --only "$probes" --data-dir "$data_dir" --out "$out/runs/quota.json" >"$out/quota.log" 2>&1 || true
  rmdir "$group"
fi

# The quota run against the last 5 runs: caught (exit 1, regressions named) or not, and each
# figure's change against the history's median.
slowdown() {
  local runs_dir=$1 dest=$2 dir rc
  [ -f "$runs_dir/quota.json" ] || return 0
  dir="$dest/quota-history"
  rm -rf "$dir" && mkdir -p "$dir"
  for h in $(seq $((runs - 4 > 1 ? runs - 4 : 1)) "$runs"); do cp "$runs_dir/run$h.json" "$dir/"; done
  rc=0
  "$bin" compare --history "$dir" "$runs_dir/quota.json" >"$dest/quota.md" 2>&1 || rc=$?
  read -r u inc called total < <(counts "$dest/quota.md")
  echo "$3: quota of $quota CPUs against a history of 5 runs: exit $rc ($([ "$rc" = 1 ] && echo caught || echo NOT caught)); $u unchanged, $inc inconclusive, $called called, of $total figures"
  python3 -c 'import json,sys,statistics
def figures(path):
    doc = json.load(open(path))
    out = {}
    for p in doc["probes"]:
        for m in p.get("metrics", []):
            if "median" in m:
                out[(p["id"], m["name"], json.dumps(m.get("labels", {}), sort_keys=True))] = m["median"]
    return out
history = [figures(f) for f in sys.argv[2:]]
quota = figures(sys.argv[1])
changes = []
for key, value in quota.items():
    before = [h[key] for h in history if key in h]
    if before and statistics.median(before):
        changes.append((value / statistics.median(before) - 1, key))
for change, key in sorted(changes)[:6]:
    print("  %+.1f%% %s %s %s" % (change * 100, *key))' "$runs_dir/quota.json" "$dir"/*.json
}

judge "$out/runs" "$out/as-measured" "as measured"
slowdown "$out/runs" "$out/as-measured" "as measured"
# On a machine other work loads, every probe is marked disturbed and compare judges none of its
# figures; with the marks taken out of copies, the same goals show what the band alone does with
# this node's noise (as rejudge_undisturbed.py does for noise_goals.sh).
mkdir -p "$out/undisturbed-runs"
for i in $(seq 1 "$runs"); do
  python3 -c 'import json,sys
doc = json.load(open(sys.argv[1]))
for probe in doc["probes"]:
    probe.pop("disturbance", None)
    probe.pop("disturbed", None)
json.dump(doc, open(sys.argv[2], "w"))' "$out/runs/run$i.json" "$out/undisturbed-runs/run$i.json"
done
[ -f "$out/runs/quota.json" ] && python3 -c 'import json,sys
doc = json.load(open(sys.argv[1]))
for probe in doc["probes"]:
    probe.pop("disturbance", None)
    probe.pop("disturbed", None)
json.dump(doc, open(sys.argv[2], "w"))' "$out/runs/quota.json" "$out/undisturbed-runs/quota.json"
judge "$out/undisturbed-runs" "$out/undisturbed" "disturbance marks removed"
slowdown "$out/undisturbed-runs" "$out/undisturbed" "disturbance marks removed"
