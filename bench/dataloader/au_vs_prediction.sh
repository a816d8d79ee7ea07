#!/usr/bin/env bash
# pipeline.step --loader pytorch's measured AU beside its own predicted_utilization (the scorer on
# the DataLoader's CPU-bound capacity and the emulated GPU's compute), ROUNDS times per setting:
#   h100:      cv-resnet50-imagenet, emulated h100 (the DataLoader starves the GPU)
#   balanced:  the same with --compute-time near one batch's load time (where overlap matters most)
# Prints AU, prediction and the gap per run, then the median and largest gap per setting.
# Usage: au_vs_prediction.sh NODEAUDIT PYTHON [ROUNDS=3] [WORKERS=2] [STEPS=12] [BALANCED_COMPUTE=0.6s]
set -euo pipefail
nodeaudit=${1:?usage: au_vs_prediction.sh NODEAUDIT PYTHON [ROUNDS] [WORKERS] [STEPS] [BALANCED_COMPUTE]}
python=${2:?usage: au_vs_prediction.sh NODEAUDIT PYTHON [ROUNDS] [WORKERS] [STEPS] [BALANCED_COMPUTE]}
rounds=${3:-3} workers=${4:-2} steps=${5:-12} balanced=${6:-0.6s}
work=$(mktemp -d /tmp/nodeaudit-au-pred.XXXXXX)
trap 'rm -rf "$work"' EXIT
run() {  # SETTING [ARGS...]: prints "setting au predicted gap"
  local setting=$1
  shift
  "$nodeaudit" probe pipeline.step --format json --loader pytorch --python "$python" --workload cv-resnet50-imagenet \
    --emulate-compute h100 --workers "$workers" --steps "$steps" --samples 2000 --data-dir "$work" "$@" |
    python3 -c 'import json,sys; e=json.load(sys.stdin)["probes"][0]; assert e["status"]=="ok", e.get("reason");
m={x["name"]:x["samples"][0] for x in e["metrics"] if not x["labels"]}
print("%s %.2f %.2f %.2f" % (sys.argv[1], m["au"], m["predicted_utilization"], m["predicted_utilization"] - m["au"]))' "$setting"
}
for round in $(seq "$rounds"); do
  run h100 | tee -a "$work/rows"
  run balanced --compute-time "$balanced" | tee -a "$work/rows"
done
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for setting in ("h100", "balanced"):
    gaps = [float(r[3]) for r in rows if r[0] == setting]
    au = [float(r[1]) for r in rows if r[0] == setting]
    print(f"{setting}: AU median {statistics.median(au):.2f}%, predicted - measured median {statistics.median(gaps):+.2f} "
          f"points, largest |gap| {max(map(abs, gaps)):.2f} over {len(gaps)} runs")
PY
