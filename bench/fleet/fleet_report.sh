#!/usr/bin/env bash
# Times `nodeaudit report --fleet` over a generated fleet (bench/fleet/make_fleet.py): wall time and
# peak resident memory from /usr/bin/time -v, for NODES result files (default 1000), after one
# untimed run so the files are in the page cache (the figure is the report's work, not the disk's).
# Prints the figures and the report's verdict line; exit 1 when the report did not name the planted
# faults it should (10 slow nodes, 4 outlier GPUs, 25 nodes on another driver, 3 skipped files).
#
# Usage: bench/fleet/fleet_report.sh [OUT_DIR]   Env: NODEAUDIT (default build/nodeaudit), NODES
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d /tmp/nodeaudit-fleet-bench.XXXXXX)}
bin=${NODEAUDIT:-build/nodeaudit}
nodes=${NODES:-1000}
mkdir -p "$out"
rm -rf "$out/results" "$out/report.md" "$out/time.txt"
python3 "$here/make_fleet.py" "$out/results" --nodes "$nodes"
echo "$nodes result files: $(du -sh "$out/results" | cut -f1) in $out/results"

"$bin" report --fleet "$out/results" >/dev/null || true  # warm the page cache
rc=0
/usr/bin/time -v "$bin" report --fleet "$out/results" --md "$out/report.md" >/dev/null 2>"$out/time.txt" || rc=$?
wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$out/time.txt")
cpu_s=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$out/time.txt")
rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/time.txt")
# What the binary occupies before reading anything (its code and libraries), to tell apart from the report's own.
/usr/bin/time -v "$bin" --version >/dev/null 2>"$out/time-baseline.txt"
base_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/time-baseline.txt")
echo "report --fleet over $nodes files: exit $rc, wall $wall, CPU ${cpu_s} s, peak RSS $((rss_kb / 1024)) MiB" \
  "($(( (rss_kb - base_kb) / 1024 )) MiB above 'nodeaudit --version', $((base_kb / 1024)) MiB); $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
grep -m1 '^## Verdict' "$out/report.md"
grep -m1 'inputs skipped' "$out/report.md"

slow=$((nodes / 100)) gpus=$(( (nodes + 125) / 250 )) drift=$(( (nodes + 33) / 40 ))
ok=1
for n in $(seq 100 100 "$nodes"); do grep -q "^| $(printf 'node-%04d' "$n") | gpu.gemm tflops" "$out/report.md" || ok=0; done
for n in $(seq 125 250 "$nodes"); do grep -q "^| $(printf 'node-%04d' "$n") | 5 | gpu.gemm tflops" "$out/report.md" || ok=0; done
grep -q "| \`550.90.07\` | .*($drift) |" "$out/report.md" || ok=0
[ "$rc" = 1 ] || ok=0
echo "planted: $slow slow nodes, $gpus outlier GPUs, $drift nodes on driver 550.90.07: $([ $ok = 1 ] && echo all named || echo NOT all named)"
[ $ok = 1 ]
