#!/usr/bin/env bash
# pipeline.step beside DLIO 2.0.0 (MLPerf Storage's emulator, PyTorch reader) on the same setting,
# alternating A/B/C ROUNDS times: FILES files of 64 KiB, batch 32, 2 workers, one epoch, emulated
# compute COMPUTE seconds per step, page cache dropped before every run. A = DLIO (npy files, its
# own generator), B = pipeline.step --loader pytorch (raw files as tensors), C = pipeline.step
# --loader native (--io-depth 1). Prints AU and samples/s per run and the medians.
#   loader-starved: COMPUTE=0.001; compute-bound: COMPUTE=0.25 (then use FILES=1024)
# DLIO comes from PyPI into its own venv (dlio-venv.sh), torch from the torch venv; nothing of it is
# committed. Usage: dlio_side_by_side.sh NODEAUDIT TORCH_VENV [ROUNDS=3] [COMPUTE=0.001] [FILES=4096]
set -euo pipefail
nodeaudit=${1:?usage: dlio_side_by_side.sh NODEAUDIT TORCH_VENV [ROUNDS] [COMPUTE] [FILES]}
torch_venv=${2:?usage: dlio_side_by_side.sh NODEAUDIT TORCH_VENV [ROUNDS] [COMPUTE] [FILES]}
rounds=${3:-3} compute=${4:-0.001} files=${5:-4096}
here=$(cd "$(dirname "$0")" && pwd)
dlio_venv=${DLIO_VENV:-$(dirname "$torch_venv")/dlio-venv}
bash "$here/dlio-venv.sh" "$dlio_venv" "$torch_venv" >&2
work=$(mktemp -d /tmp/nodeaudit-dlio-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/configs/workload" "$work/na"
cat > "$work/configs/workload/loader_ab.yaml" <<YAML
model: loader_ab
framework: pytorch
workflow:
  generate_data: False
  train: True
dataset:
  data_folder: $work/dlio-data
  format: npy
  num_files_train: $files
  num_samples_per_file: 1
  record_length: 65536
  record_length_stdev: 0
train:
  epochs: 1
  computation_time: $compute
reader:
  data_loader: pytorch
  read_threads: 2
  batch_size: 32
  file_shuffle: seed
  sample_shuffle: seed
YAML
dlio() {
  (cd "$work" && "$dlio_venv/bin/dlio_benchmark" --config-dir "$work/configs" workload=loader_ab \
    "hydra.run.dir=$work/dlio-out/$1" "$@" >"$work/dlio-$1.log" 2>&1) || { tail -20 "$work/dlio-$1.log" >&2; exit 1; }
}
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || echo "warning: caches not dropped" >&2; }
dlio gen ++workload.workflow.generate_data=True ++workload.workflow.train=False
steps=$((files / 32 + 1))
step() {  # pipeline.step on the same files' shape; prints "au samples_per_s"
  "$nodeaudit" probe pipeline.step --format json --decode none --sample-size 64KiB --samples "$files" --batch-size 32 \
    --workers 2 --compute-time "${compute}s" --gpus-in-node 1 --steps "$steps" --data-dir "$work/na" --keep-data "$@" |
    python3 -c 'import json,sys; e=json.load(sys.stdin)["probes"][0]; assert e["status"]=="ok", e.get("reason");
m={x["name"]:x["samples"][0] for x in e["metrics"] if not x["labels"]}; print(f"{m[\"au\"]:.2f} {m[\"samples_per_s\"]:.0f}")'
}
step --loader native --io-depth 1 >/dev/null  # makes the files once (kept for the rounds)
printf '%-6s %-34s %-34s %-34s\n' round "DLIO au% samples/s" "pytorch au% samples/s" "native au% samples/s"
for round in $(seq "$rounds"); do
  drop_caches; dlio "r$round"
  a=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["metric"];
print(f"{m[\"train_au_mean_percentage\"]:.2f} {m[\"train_throughput_mean_samples_per_second\"]:.0f}")' "$work/dlio-out/r$round/summary.json")
  drop_caches; b=$(step --loader pytorch --python "$torch_venv/bin/python")
  drop_caches; c=$(step --loader native --io-depth 1)
  printf '%-6s %-34s %-34s %-34s\n' "$round" "$a" "$b" "$c"
  echo "$a $b $c" >>"$work/rows"
done
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
for i, name in enumerate(["DLIO", "pipeline.step pytorch", "pipeline.step native"]):
    au = sorted(r[2 * i] for r in rows); rate = sorted(r[2 * i + 1] for r in rows)
    print(f"{name}: AU median {statistics.median(au):.2f}% (range {au[0]:.2f}-{au[-1]:.2f}), "
          f"samples/s median {statistics.median(rate):.0f} (range {rate[0]:.0f}-{rate[-1]:.0f})")
PY
