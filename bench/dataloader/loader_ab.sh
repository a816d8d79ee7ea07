#!/usr/bin/env bash
# host.dataloader beside a DataLoader loop timed by hand (hand_loop.py) over the same JPEG files,
# workers, batch and transform, alternating A/B ROUNDS times; prints each pair and the ratios'
# median and spread. The files are made once by host.dataloader (--keep-data) and removed at the end.
# LEVEL quick times 6 batches, standard 20 (the probe's window; hand_loop.py is given the same).
# Usage: loader_ab.sh NODEAUDIT PYTHON [WORKERS=2] [BATCH=64] [ROUNDS=3] [LEVEL=standard]
set -euo pipefail
nodeaudit=${1:?usage: loader_ab.sh NODEAUDIT PYTHON [WORKERS] [BATCH] [ROUNDS] [LEVEL]}
python=${2:?usage: loader_ab.sh NODEAUDIT PYTHON [WORKERS] [BATCH] [ROUNDS] [LEVEL]}
workers=${3:-2} batch=${4:-64} rounds=${5:-3} level=${6:-standard}
case $level in quick) batches=6 ;; standard) batches=20 ;; *) echo "LEVEL: quick or standard, not $level" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/nodeaudit-loader-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The level's timed batches after 2 of warm-up, as hand_loop.py is told below.
probe() {
  "$nodeaudit" probe host.dataloader --format json --level "$level" --python "$python" --workers "$workers" \
    --batch "$batch" --decoders pil --files $(((batches + 2) * batch > 1024 ? (batches + 2) * batch : 1024)) \
    --data-dir "$work" "$@" |
    python3 -c 'import json,sys; e=json.load(sys.stdin)["probes"][0]; assert e["status"]=="ok", e;
print([m["samples"][0] for m in e["metrics"] if m["name"]=="samples_per_s"][0])'
}
probe --keep-data >/dev/null
dir=$(ls -d "$work"/jpegs-* | head -1)
ratios=()
for round in $(seq "$rounds"); do
  a=$(probe)
  b=$("$python" "$here/hand_loop.py" "$dir" "$workers" "$batch" "$batches")
  ratio=$(python3 -c "print(f'{$a / $b:.3f}')")
  ratios+=("$ratio")
  echo "round $round: host.dataloader $a samples/s, hand-timed loop $b samples/s, ratio $ratio"
done
python3 -c "import statistics,sys; r=sorted(map(float,sys.argv[1:])); print(f'ratio median {statistics.median(r):.3f}, range {r[0]:.3f}-{r[-1]:.3f} over {len(r)} rounds')" "${ratios[@]}"
