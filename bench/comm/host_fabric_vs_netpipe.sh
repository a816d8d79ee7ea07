#!/usr/bin/env bash
# host_fabric_vs_netpipe: comm.host-fabric ping-pong against NetPIPE's MPI module (Debian
# netpipe-openmpi, NPopenmpi) on the same launcher line, alternating A B A B, printing per size
# both one-way latencies and bandwidths and the ratio (nodeaudit / NetPIPE). Run by hand.
#   usage: host_fabric_vs_netpipe.sh NODEAUDIT_BINARY [MAX_SIZE_BYTES] [ROUNDS] [ITERATIONS]
#
# Why the two tools agree only when run like this (NetPIPE 3.7 netpipe.c):
#  - NetPIPE's time is one-way: (end - start) / (2 * nrepeat) per trial, and it prints the
#    MINIMUM of 3 trials. nodeaudit records every repetition; its `min` over 3 repetitions is the
#    same statistic, so the probe runs with --repetitions 3 and the `min` is compared.
#  - NetPIPE picks nrepeat per size from the previous size's time (about 0.25 s per trial), so
#    on a loaded host one slow size makes the next size's trials short and lucky: the printed
#    curve jumps between fast and slow points. Both tools therefore get a fixed count:
#    NetPIPE -n ITERATIONS, nodeaudit --iterations ITERATIONS.
#  - NetPIPE's "Mbps" is 2^20 bits/s (bits / (t * 1024 * 1024)); nodeaudit's GB/s is 1e9 B/s.
#    Here both are shown in GB/s: GB/s = Mbps * 1048576 / 8 / 1e9.
#  - NetPIPE perturbs sizes by +-3 B unless -p 0, and adds 1.5x points; only the powers of two
#    nodeaudit measures are compared.
set -euo pipefail
BIN=${1:?nodeaudit binary}
MAX=${2:-1048576}; ROUNDS=${3:-3}; ITER=${4:-2000}
command -v NPopenmpi >/dev/null || { echo "NPopenmpi not installed (apt-get install netpipe-openmpi)" >&2; exit 77; }
command -v mpirun >/dev/null || { echo "mpirun not installed (apt-get install openmpi-bin)" >&2; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed" >&2; exit 77; }
WORK=$(mktemp -d /tmp/hostfabric-vs-netpipe-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
ROOT=(); [ "$(id -u)" = 0 ] && ROOT=(--allow-run-as-root)

for round in $(seq 1 "$ROUNDS"); do
  # NetPIPE: size in B, Mbps (2^20 bit/s), one-way seconds per line of its -o file.
  mpirun "${ROOT[@]}" --oversubscribe -np 2 NPopenmpi -p 0 -l 8 -u "$MAX" -n "$ITER" -o "$WORK/np.$round" \
    >"$WORK/np.$round.log" 2>&1
  # nodeaudit starts the same launcher line itself (mpirun --oversubscribe -np 2).
  # (a failed probe exits 1; its JSON still says why, and the table below reports it)
  "$BIN" probe comm.host-fabric --max-size "$MAX" --iterations "$ITER" --repetitions 3 --format json \
    >"$WORK/na.$round.json" 2>"$WORK/na.$round.log" || true
done

python3 - "$WORK" "$ROUNDS" "$ITER" <<'EOF'
import json, statistics, sys
work, rounds, iters = sys.argv[1], int(sys.argv[2]), sys.argv[3]
np_lat, np_bw, na_lat, na_bw, na_med = {}, {}, {}, {}, {}
for r in range(1, rounds + 1):
    for line in open(f"{work}/np.{r}"):
        parts = line.split()
        if len(parts) < 3: continue
        size, mbps, seconds = int(parts[0]), float(parts[1]), float(parts[2])
        np_lat.setdefault(size, []).append(seconds * 1e6)
        np_bw.setdefault(size, []).append(mbps * 1048576 / 8 / 1e9)
    try:
        probe = json.load(open(f"{work}/na.{r}.json"))["probes"][0]
    except ValueError:
        sys.exit(f"nodeaudit round {r} wrote no result: " + open(f"{work}/na.{r}.log").read()[-2000:])
    if probe["status"] != "ok": sys.exit(f"nodeaudit round {r}: {probe['status']}: {probe['reason']}")
    for m in probe["metrics"]:
        size = int(m["labels"]["size"])
        if m["name"] == "pingpong_latency":
            na_lat.setdefault(size, []).append(m["min"])
            na_med.setdefault(size, []).append(m["median"])
        elif m["name"] == "pingpong_bw":
            na_bw.setdefault(size, []).append(m["max"])  # the fastest repetition = the min time
med = statistics.median
print(f"# {rounds} rounds, {iters} round trips per trial, 3 trials; median over rounds of each tool's best trial")
print(f"{'size_B':>9} {'NetPIPE_us':>11} {'nodeaudit_us':>13} {'lat_ratio':>9} "
      f"{'NetPIPE_GB/s':>13} {'nodeaudit_GB/s':>15} {'bw_ratio':>8} {'nodeaudit_median_us':>20}")
for size in sorted(na_lat):
    if size not in np_lat: continue
    a_l, b_l, a_b, b_b = med(na_lat[size]), med(np_lat[size]), med(na_bw[size]), med(np_bw[size])
    print(f"{size:>9} {b_l:>11.3f} {a_l:>13.3f} {a_l / b_l:>9.3f} {b_b:>13.4f} {a_b:>15.4f} {a_b / b_b:>8.3f} "
          f"{med(na_med[size]):>20.3f}")
EOF
