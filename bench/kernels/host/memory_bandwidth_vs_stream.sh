#!/usr/bin/env bash
# memory_bandwidth_vs_stream: host.memory-bandwidth beside two reference tools on the same cores,
# interleaved round by round (nodeaudit, STREAM-style, likwid-bench, then again), printing every
# round and then, per kernel, the best and the median of each tool and nodeaudit's ratios to them,
# and last the goal: nodeaudit's median of each kernel against STREAM's best rate for it.
#   run by hand:  bench/kernels/host/memory_bandwidth_vs_stream.sh build/nodeaudit [ROUNDS] [THREADS]
#   e.g.          bench/kernels/host/memory_bandwidth_vs_stream.sh build/nodeaudit 5 2
# Needs gcc with OpenMP (the STREAM-style reference is compiled here from the few lines below,
# STREAM's kernels and timing rules, not STREAM's source) and likwid-bench (Debian: likwid;
# scripts/install-deps.sh --with-bench installs it). Check `uptime` first: other work on the
# cores is measured too, and the spread printed is the only guard against it.
#
# Like with like:
#   bytes      every tool counts 8 B per array element read or written, no write-allocate traffic:
#              copy/scale/memcpy 16 B, add/triad 24 B per element (STREAM's rule). likwid-bench counts
#              8 B per stream per element, all streams, the same rule: its copy_* kernels are
#              STREAM copy (2 streams), its stream_* kernels are STREAM triad (3 streams: A = B*s + C).
#              likwid's triad_* (A = B + C*D) moves 4 streams, 32 B per element, a different
#              kernel: it is not compared. likwid's MByte/s are 10^6 B/s: divided by 1000 to GB/s.
#   pages      nodeaudit advises its arrays as transparent huge pages; where THP is madvise-only
#              (Debian's default) the peers run on 4 KiB pages, so nodeaudit --huge-pages false is
#              shown too: the like-for-like row for pages.
#   stores     nodeaudit's default stores are non-temporal (streaming), so a store costs no read
#              for ownership; likwid's *_mem_* kernels do the same, its plain ones and gcc's
#              STREAM (gcc emits no streaming stores; copy becomes memcpy, which streams large
#              copies) do not. Both kinds are shown.
#   memcpy     nodeaudit's memcpy kernel is std::memcpy of each thread's slice; STREAM's copy loop
#              is the same kernel, as gcc compiles it to a memcpy call (checked below with nm), so
#              memcpy is compared with STREAM's copy. nodeaudit's copy, scale, add and triad run in
#              the widest vectors the CPU offers (info.isa, printed with the CPU's flags).
#   best       STREAM: the best of its NTIMES iterations (the first left out, as STREAM does);
#              likwid: one figure per run (its iterations together), best of the rounds;
#              nodeaudit: max of its repetitions, best of the rounds.
#   median     STREAM: median of its iterations, median of the rounds; likwid: median of the
#              rounds; nodeaudit: its reported median, median of the rounds.
#   threads    THREADS threads, one per CPU, bound (OMP_PROC_BIND=close, likwid -W N:..:THREADS,
#              nodeaudit pins its own); the arrays 80M elements (640 MB) each for STREAM and
#              nodeaudit (--array-size, so each thread copies the same bytes in both), 2 GB in all
#              for likwid.
#   sizes      glibc's memcpy streams (non-temporal stores) only a copy larger than its
#              x86_non_temporal_threshold (printed below); smaller ones store through the cache,
#              paying a read for ownership per line. STREAM's copy and nodeaudit's memcpy move the
#              same bytes per thread here, so both take the same path. nodeaudit's default arrays
#              (4x the last-level cache, >= 256 MiB) can fall below the threshold per thread.
set -euo pipefail
BIN=${1:?nodeaudit binary}; ROUNDS=${2:-5}; THREADS=${3:-$(nproc)}
STREAM_ELEMENTS=${STREAM_ELEMENTS:-80000000}; STREAM_NTIMES=${STREAM_NTIMES:-20}
command -v likwid-bench >/dev/null || { echo "likwid-bench not installed (apt-get install likwid)" >&2; exit 77; }
command -v jq >/dev/null || { echo "jq not installed" >&2; exit 77; }
command -v gcc >/dev/null || { echo "gcc not installed" >&2; exit 77; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

cat > "$WORK/stream_style.c" <<'C'
/* STREAM's four kernels and timing rules: OpenMP static loops over three arrays, each kernel
   timed alone with omp_get_wtime, NTIMES iterations, the first not counted. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#ifndef N
#define N 80000000
#endif
#ifndef NTIMES
#define NTIMES 20
#endif
static double a[N], b[N], c[N];
static int by_value(const void* x, const void* y) {
  const double p = *(const double*)x, q = *(const double*)y;
  return (p > q) - (p < q);
}
int main(void) {
  const double s = 3.0, bytes[4] = {16.0 * N, 16.0 * N, 24.0 * N, 24.0 * N};
  const char* names[4] = {"copy", "scale", "add", "triad"};
  double t[4][NTIMES];
#pragma omp parallel for schedule(static)
  for (long i = 0; i < N; i++) a[i] = 1.0, b[i] = 2.0, c[i] = 0.0;
  for (int k = 0; k < NTIMES; k++) {
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i++) c[i] = a[i];
    t[0][k] = omp_get_wtime() - t0, t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i++) b[i] = s * c[i];
    t[1][k] = omp_get_wtime() - t0, t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i++) c[i] = a[i] + b[i];
    t[2][k] = omp_get_wtime() - t0, t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i++) a[i] = b[i] + s * c[i];
    t[3][k] = omp_get_wtime() - t0;
  }
  for (int j = 0; j < 4; j++) {
    double rate[NTIMES - 1];
    for (int k = 1; k < NTIMES; k++) rate[k - 1] = bytes[j] / t[j][k] / 1e9;
    qsort(rate, NTIMES - 1, sizeof(double), by_value);
    const int m = NTIMES - 1;
    const double median = m % 2 ? rate[m / 2] : (rate[m / 2 - 1] + rate[m / 2]) / 2;
    printf("%s %.3f %.3f\n", names[j], rate[m - 1], median);
  }
  /* Keeps the arrays live: after k rounds a, b, c hold known values. */
  return a[N / 2] > 0 ? 0 : 1;
}
C
gcc -O3 -march=native -fopenmp -mcmodel=medium -DN="$STREAM_ELEMENTS" -DNTIMES="$STREAM_NTIMES" \
    "$WORK/stream_style.c" -o "$WORK/stream_style"

likwid_gbps() {  # kernel -> GB/s over its run
  likwid-bench -t "$1" -W "N:2GB:$THREADS" 2>/dev/null | awk '/^MByte\/s:/ {printf "%.3f\n", $2 / 1000}'
}

# One file per series: "<tool> <kernel> <kind>" -> one number per round (kind: best | median).
record() { echo "$4" >> "$WORK/series.$1.$2.$3"; }

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs"
echo "cpu flags (vector, copy): $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'sse2|avx|avx2|avx512f|avx512bw|avx512vl|erms|fsrm' | tr '\n' ' ')"
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
threshold=$(/lib64/ld-linux-x86-64.so.2 --list-tunables 2>/dev/null | awk '/x86_non_temporal_threshold/ {print $2}')
[ -n "$threshold" ] && threshold=$((threshold))
echo "glibc memcpy non-temporal above: ${threshold:-unknown} bytes; per thread here: $((STREAM_ELEMENTS * 8 / THREADS)) bytes"
if nm "$WORK/stream_style" | grep -q ' U memcpy'; then
  echo "stream-style copy: gcc compiled its loop to a memcpy call"
else
  echo "stream-style copy: no memcpy call in the binary (its loop is compiled as a loop)"
fi
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
nodeaudit_round() {  # series name, extra probe options
  "$BIN" probe host.memory-bandwidth --threads "$THREADS" --array-size "$((STREAM_ELEMENTS * 8))" --repetitions 20 \
      --format json "${@:2}" > "$WORK/na.json"
  jq -r '.probes[0].info.isa' "$WORK/na.json" > "$WORK/isa.$1"
  for k in copy scale add triad memcpy; do
    read -r max median < <(jq -r ".probes[0].metrics[] | select(.labels.kernel==\"$k\") | \"\(.max) \(.median)\"" "$WORK/na.json")
    record "$1" "$k" best "$max"; record "$1" "$k" median "$median"
  done
}
for round in $(seq 1 "$ROUNDS"); do
  nodeaudit_round nodeaudit
  nodeaudit_round nodeaudit-4k --huge-pages false
  OMP_NUM_THREADS=$THREADS OMP_PROC_BIND=close OMP_PLACES=cores "$WORK/stream_style" > "$WORK/stream.txt"
  while read -r k best median; do
    record stream "$k" best "$best"; record stream "$k" median "$median"
  done < "$WORK/stream.txt"
  for kernel in copy_avx copy_mem_avx stream_avx stream_mem_avx; do
    gbps=$(likwid_gbps "$kernel")
    record "likwid-$kernel" run best "$gbps"
  done
  last() { printf "%.1f" "$(tail -n1 "$WORK/series.$1")"; }
  echo "round $round (load $(cut -d' ' -f1 /proc/loadavg)): copy/memcpy median nodeaudit $(last nodeaudit.copy.median)/$(last nodeaudit.memcpy.median)," \
       "stream copy best $(last stream.copy.best); triad max/median nodeaudit $(last nodeaudit.triad.best)/$(last nodeaudit.triad.median)," \
       "nodeaudit-4k $(last nodeaudit-4k.triad.best)/$(last nodeaudit-4k.triad.median)," \
       "stream $(last stream.triad.best)/$(last stream.triad.median), likwid stream_mem_avx $(last likwid-stream_mem_avx.run.best)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "nodeaudit's vector set (info.isa): $(sort -u "$WORK"/isa.nodeaudit | tr '\n' ' ')"

stat_of() {  # file -> "max median min" of the rounds
  sort -g "$1" | awk '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%.2f %.2f %.2f", v[NR], m, v[1]}'
}
best_of() { stat_of "$1" | cut -d' ' -f1; }
median_of() { stat_of "$1" | cut -d' ' -f2; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a / b}'; }

echo
echo "GB/s (10^9 B/s), $ROUNDS rounds, $THREADS threads. best = best of the rounds' bests; median = median of the rounds' medians;"
echo "[min..max] = the spread of that figure over the rounds."
printf "%-6s %-28s %8s %16s %8s %16s   %s\n" kernel tool best "[min..max]" median "[min..max]" "nodeaudit max / best, median / median"
for k in copy scale add triad memcpy; do
  na_best=$(best_of "$WORK/series.nodeaudit.$k.best"); na_median=$(median_of "$WORK/series.nodeaudit.$k.median")
  read -r bmax _ bmin <<< "$(stat_of "$WORK/series.nodeaudit.$k.best")"
  read -r mmax _ mmin <<< "$(stat_of "$WORK/series.nodeaudit.$k.median")"
  printf "%-6s %-28s %8s %16s %8s %16s\n" "$k" "nodeaudit (default)" "$na_best" "[$bmin..$bmax]" "$na_median" "[$mmin..$mmax]"
  read -r b4 _ b4min <<< "$(stat_of "$WORK/series.nodeaudit-4k.$k.best")"
  read -r _ m4 m4min <<< "$(stat_of "$WORK/series.nodeaudit-4k.$k.median")"
  m4max=$(stat_of "$WORK/series.nodeaudit-4k.$k.median" | cut -d' ' -f1)
  printf "%-6s %-28s %8s %16s %8s %16s\n" "" "nodeaudit --huge-pages false" "$b4" "[$b4min..$b4]" "$m4" "[$m4min..$m4max]"
  peers=("stream:$k")
  case $k in
    memcpy) peers=("stream:copy") ;;&
    copy|scale|memcpy) peers+=("likwid-copy_avx:run" "likwid-copy_mem_avx:run") ;;
    add|triad) peers+=("likwid-stream_avx:run" "likwid-stream_mem_avx:run") ;;
  esac
  for peer in "${peers[@]}"; do
    tool=${peer%%:*}; series=${peer##*:}
    best_file="$WORK/series.$tool.$series.best"
    median_file="$WORK/series.$tool.$series.median"
    [ -f "$median_file" ] || median_file=$best_file  # likwid: one figure per run
    read -r pbmax _ pbmin <<< "$(stat_of "$best_file")"
    read -r pmmax pm pmmin <<< "$(stat_of "$median_file")"
    label=$tool; [ "$tool" = stream ] && label="stream-style gcc -O3 $series"
    printf "%-6s %-28s %8s %16s %8s %16s   %s  %s\n" "" "$label" "$pbmax" "[$pbmin..$pbmax]" "$pm" "[$pmmin..$pmmax]" \
        "$(ratio "$na_best" "$pbmax")" "$(ratio "$na_median" "$pm")"
  done
done

# The goal: each kernel's median (median of the rounds' medians) at least STREAM's best rate (best
# of all its iterations in all rounds) for the same kernel and bytes; memcpy against STREAM's copy.
echo
echo "goal: nodeaudit median / stream-style best >= 1.00x; per round: that round's median / the overall STREAM best"
for k in copy scale add triad memcpy; do
  ref=$k; [ "$k" = memcpy ] && ref=copy
  stream_best=$(best_of "$WORK/series.stream.$ref.best")
  na_median=$(median_of "$WORK/series.nodeaudit.$k.median")
  per_round=$(while read -r v; do ratio "$v" "$stream_best"; printf " "; done < "$WORK/series.nodeaudit.$k.median")
  verdict=$(awk -v a="$na_median" -v b="$stream_best" 'BEGIN {print (a >= b ? "met" : "NOT met")}')
  printf "%-6s %8s / %8s (stream %-5s) = %s  %-7s rounds: %s\n" "$k" "$na_median" "$stream_best" "$ref" \
      "$(ratio "$na_median" "$stream_best")" "$verdict" "$per_round"
done
