#!/usr/bin/env bash
# host_fabric_vs_netpipe: comm.host-fabric ping-pong against NetPIPE's MPI module (Debian
# netpipe-openmpi, NPopenmpi) on the same launcher line, per size alternating A B A B, printing
# both one-way latencies and bandwidths and the ratio (nodeaudit / NetPIPE). Run by hand.
#   usage: host_fabric_vs_netpipe.sh NODEAUDIT_BINARY [MAX_SIZE_BYTES] [ROUNDS] [TRIAL_MS]
#
# Why the two tools agree only when run like this (NetPIPE 3.7 netpipe.c):
#  - NetPIPE's time is one-way: (end - start) / (2 * nrepeat) per trial, and it prints the
#    MINIMUM of 3 trials. nodeaudit records every repetition; its `min` over 3 repetitions is the
#    same statistic, so the probe runs with --repetitions 3 and its `min` is compared.
#  - NetPIPE picks nrepeat per size from the previous size's time (about 0.25 s per trial), so
#    on a loaded host one slow size makes the next size's trials short and lucky: its printed
#    curve jumps between fast and slow points. Both tools therefore get the same fixed count per
#    size (NetPIPE -n N, nodeaudit --iterations N), chosen so one trial lasts about TRIAL_MS
#    (default 2 ms) on shared memory: short trials are rarely cut by another process, so the
#    minimum of 3 means the same thing in both tools even on a shared machine.
#  - NetPIPE's "Mbps" is 2^20 bits/s (bits / (t * 1024 * 1024)); nodeaudit's GB/s is 1e9 B/s.
#    Both are shown here in GB/s: GB/s = Mbps * 1048576 / 8 / 1e9.
#  - NetPIPE's -o file keeps the time in seconds with 8 decimals (10 ns): at 0.26 us that is
#    +-2%; its Mbps column keeps more digits, so the bandwidth ratio is the finer one there.
#  - NetPIPE perturbs sizes by +-3 B unless -p 0; only powers of two are measured here.
set -euo pipefail
BIN=${1:?nodeaudit binary}
MAX=${2:-1048576}; ROUNDS=${3:-5}; TRIAL_MS=${4:-2}
command -v NPopenmpi >/dev/null || { echo "NPopenmpi not installed (apt-get install netpipe-openmpi)" >&2; exit 77; }
command -v mpirun >/dev/null || { echo "mpirun not installed (apt-get install openmpi-bin)" >&2; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed" >&2; exit 77; }
WORK=$(mktemp -d /tmp/hostfabric-vs-netpipe-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
ROOT=(); [ "$(id -u)" = 0 ] && ROOT=(--allow-run-as-root)

# Round trips per trial: TRIAL_MS over an estimated round trip (0.6 us + 2 * size / 5 GB/s).
iterations_for() { python3 -c "print(max(10, min(5000, round($TRIAL_MS * 1e-3 / (0.6e-6 + 2 * $1 / 5e9)))))"; }

for round in $(seq 1 "$ROUNDS"); do
  size=8
  while [ "$size" -le "$MAX" ]; do
    n=$(iterations_for "$size")
    mpirun "${ROOT[@]}" --oversubscribe -np 2 NPopenmpi -p 0 -l "$size" -u "$size" -n "$n" -o "$WORK/np.$round.$size" \
      >"$WORK/np.$round.$size.log" 2>&1
    # nodeaudit starts the same launcher line itself (mpirun --oversubscribe -np 2), for this one
    # size too: ranks that busy-poll through a long sweep are scheduled worse on a shared host than
    # freshly started ones. A failed probe exits 1; its JSON says why.
    "$BIN" probe comm.host-fabric --min-size "$size" --max-size "$size" --iterations "$n" --repetitions 3 --format json \
      >"$WORK/na.$round.$size.json" 2>"$WORK/na.$round.$size.log" || true
    size=$((size * 2))
  done
done

python3 - "$WORK" "$ROUNDS" "$MAX" "$TRIAL_MS" <<'EOF'
import json, statistics, sys
work, rounds, max_size, trial_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
np_lat, np_bw, na_lat, na_bw, na_med, iters = {}, {}, {}, {}, {}, {}
sizes = []
size = 8
while size <= max_size:
    sizes.append(size); size *= 2
for r in range(1, rounds + 1):
    for size in sizes:
        for line in open(f"{work}/np.{r}.{size}"):
            parts = line.split()
            if len(parts) >= 3 and int(parts[0]) == size:
                np_lat.setdefault(size, []).append(float(parts[2]) * 1e6)
                np_bw.setdefault(size, []).append(float(parts[1]) * 1048576 / 8 / 1e9)
        try:
            probe = json.load(open(f"{work}/na.{r}.{size}.json"))["probes"][0]
        except ValueError:
            sys.exit(f"nodeaudit round {r} size {size} wrote no result: " + open(f"{work}/na.{r}.{size}.log").read()[-2000:])
        if probe["status"] != "ok": sys.exit(f"nodeaudit round {r} size {size}: {probe['status']}: {probe['reason']}")
        iters[size] = probe["params"].get("iterations")
        for m in probe["metrics"]:
            if int(m["labels"]["size"]) != size: continue
            if m["name"] == "pingpong_latency":
                na_lat.setdefault(size, []).append(m["min"]); na_med.setdefault(size, []).append(m["median"])
            elif m["name"] == "pingpong_bw":
                na_bw.setdefault(size, []).append(m["max"])  # the fastest repetition = the min time
med = statistics.median
print(f"# {rounds} rounds A/B per size; each tool: 3 trials of N round trips (~{trial_ms} ms), best trial; "
      "median over rounds")
print(f"{'size_B':>9} {'N':>5} {'NetPIPE_us':>11} {'nodeaudit_us':>13} {'lat_ratio':>9} "
      f"{'NetPIPE_GB/s':>13} {'nodeaudit_GB/s':>15} {'bw_ratio':>8} {'nodeaudit_median_us':>20}")
for size in sizes:
    if size not in np_lat or size not in na_lat: continue
    a_l, b_l, a_b, b_b = med(na_lat[size]), med(np_lat[size]), med(na_bw[size]), med(np_bw[size])
    print(f"{size:>9} {iters[size]!s:>5} {b_l:>11.3f} {a_l:>13.3f} {a_l / b_l:>9.3f} {b_b:>13.4f} {a_b:>15.4f} "
          f"{a_b / b_b:>8.3f} {med(na_med[size]):>20.3f}")
EOF
