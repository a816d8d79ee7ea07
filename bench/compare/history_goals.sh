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
# 2 and 3 are judged on the runs as measured, and again on copies with the disturbance marks taken out.
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

judge "$out/runs" "$out/as-measured" "as measured"
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
judge "$out/undisturbed-runs" "$out/undisturbed" "disturbance marks removed"
