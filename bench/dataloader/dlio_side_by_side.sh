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
nodeaudit=$(realpath "$nodeaudit") torch_venv=$(realpath "$torch_venv")
here=$(cd "$(dirname "$0")" && pwd)
dlio_venv=$(realpath -m "${DLIO_VENV:-$(dirname "$torch_venv")/dlio-venv}")
bash "$here/dlio-venv.sh" "$dlio_venv" "$torch_venv" >&2
work=$(mktemp -d /tmp/nodeaudit-dlio-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/configs/workload" "$work/na" "$work/shim/tensorflow"
# DLIO 2.0.0 imports TensorFlow at start-up even for the PyTorch reader (its profiler factory); this
# stand-in satisfies the import and fails loudly if anything on the measured path touches it.
cat > "$work/shim/tensorflow/__init__.py" <<'PY'
def __getattr__(name):
    raise RuntimeError(f"tensorflow.{name} used: this bench runs DLIO's PyTorch path only")
PY
# A second variant: DLIO with the one per-sample debug line that formats its whole index map (every
# file, on every sample, even with debug logging off) removed, from a copy of the installed package.
mkdir -p "$work/shim-patched"
cp -r "$work/shim/tensorflow" "$work/shim-patched/"
cp -r "$("$dlio_venv/bin/python" -c 'import dlio_benchmark, os; print(os.path.dirname(dlio_benchmark.__file__))')" \
  "$work/shim-patched/dlio_benchmark"
sed -i 's/^\( *\)logging.debug(f"{self.global_index_map}")/\1pass/' "$work/shim-patched/dlio_benchmark/reader/reader_handler.py"
if grep -q 'logging.debug(f"{self.global_index_map}")' "$work/shim-patched/dlio_benchmark/reader/reader_handler.py"; then
  echo "the DLIO patch did not apply" >&2
  exit 1
fi
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
dlio() {  # SHIM NAME [OVERRIDES...]: one DLIO run, its summary in $work/dlio-out/NAME
  local shim=$1 name=$2
  shift 2
  (cd "$work" && PYTHONPATH="$work/$shim" "$dlio_venv/bin/python" -m dlio_benchmark.main --config-dir "$work/configs" workload=loader_ab \
    "hydra.run.dir=$work/dlio-out/$name" "$@" >"$work/dlio-$name.log" 2>&1) || { tail -20 "$work/dlio-$name.log" >&2; exit 1; }
}
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || echo "warning: caches not dropped" >&2; }
dlio shim gen ++workload.workflow.generate_data=True ++workload.workflow.train=False
steps=$((files / 32 + 1))
step() {  # pipeline.step on the same files' shape; prints "au samples_per_s"
  "$nodeaudit" probe pipeline.step --format json --decode none --sample-size 64KiB --samples "$files" --batch-size 32 \
    --workers 2 --compute-time "${compute}s" --gpus-in-node 1 --steps "$steps" --data-dir "$work/na" --keep-data "$@" |
    python3 -c 'import json,sys; e=json.load(sys.stdin)["probes"][0]; assert e["status"]=="ok", e.get("reason");
m={x["name"]:x["samples"][0] for x in e["metrics"] if not x["labels"]}; print("%.2f %.0f" % (m["au"], m["samples_per_s"]))'
}
step --loader native --io-depth 1 >/dev/null  # makes the files once (kept for the rounds)
summary() {
  python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["metric"];
print("%.2f %.0f" % (m["train_au_mean_percentage"], m["train_throughput_mean_samples_per_second"]))' "$work/dlio-out/$1/summary.json"
}
printf '%-6s %-22s %-22s %-22s %-22s\n' round "DLIO au% samples/s" "DLIO-patched" "pytorch au% samples/s" \
  "native au% samples/s"
for round in $(seq "$rounds"); do
  drop_caches; dlio shim "r$round"; a=$(summary "r$round")
  drop_caches; dlio shim-patched "p$round"; p=$(summary "p$round")
  drop_caches; b=$(step --loader pytorch --python "$torch_venv/bin/python")
  drop_caches; c=$(step --loader native --io-depth 1)
  printf '%-6s %-22s %-22s %-22s %-22s\n' "$round" "$a" "$p" "$b" "$c"
  echo "$a $p $b $c" >>"$work/rows"
done
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
for i, name in enumerate(["DLIO 2.0.0", "DLIO without the index-map debug line", "pipeline.step --loader pytorch",
                          "pipeline.step --loader native"]):
    au = sorted(r[2 * i] for r in rows); rate = sorted(r[2 * i + 1] for r in rows)
    print(f"{name}: AU median {statistics.median(au):.2f}% (range {au[0]:.2f}-{au[-1]:.2f}), "
          f"samples/s median {statistics.median(rate):.0f} (range {rate[0]:.0f}-{rate[-1]:.0f})")
PY
