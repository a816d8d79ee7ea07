#!/usr/bin/env bash
# nodeaudit learn, two figures:
# 1. Overhead: a ResNet-18 job that times its own steps (timed_job.py), run alternately without and
#    with learn ROUNDS times; per round the median of the job's own step times over the steps learn
#    measures (after its warm-up, before its counted step), and the ratio with / without.
# 2. FLOPs per sample from PyTorch's FLOP counter beside the published figures: torchvision ResNet-18
#    (1.814 GMAC) and ResNet-50 (4.089 GMAC) forward multiply-adds x 2 FLOP x 3 for training, and a
#    GPT-2-small-shaped decoder (L=12, d=768, V=50257, T=128) against 6N + 12 L d T per token, N being
#    the matmul weights (12 L d^2 + d V; the embeddings are lookups).
# Usage: learn_bench.sh NODEAUDIT PYTHON [ROUNDS=5] [SIZE=64] [BATCH=16]   (PART=overhead or PART=flops: one of the two)
set -euo pipefail
nodeaudit=${1:?usage: learn_bench.sh NODEAUDIT PYTHON [ROUNDS] [SIZE] [BATCH]}
python=${2:?usage: learn_bench.sh NODEAUDIT PYTHON [ROUNDS] [SIZE] [BATCH]}
rounds=${3:-5} size=${4:-64} batch=${5:-16}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/nodeaudit-learn-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
warmup=5 steps=20
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
median_steps() {  # the job's own step times of steps warmup+1 .. warmup+steps
  python3 -c "
import statistics, sys
t = [float(l.split()[2]) for l in sys.stdin if l.startswith('step_s ') and $warmup < int(l.split()[1]) <= $warmup + $steps]
assert len(t) == $steps, len(t)
print(f'{statistics.median(t):.6f}')"
}
part=${PART:-all}
if [ "$part" != flops ]; then
echo "overhead: ResNet-18 ${size}x${size} batch $batch, OMP_NUM_THREADS=$OMP_NUM_THREADS, $rounds rounds, steps $((warmup + 1))-$((warmup + steps))"
ratios=()
for round in $(seq "$rounds"); do
  without=$("$python" "$here/timed_job.py" "$size" "$batch" $((warmup + steps + 1)) | median_steps)
  with=$("$nodeaudit" learn --warmup $warmup --steps $steps --out "$work/r$round.json" --out-profile "$work/p$round.toml" \
    -- "$python" "$here/timed_job.py" "$size" "$batch" $((warmup + steps + 1)) 2>/dev/null | median_steps)
  ratio=$(python3 -c "print(f'{$with / $without:.4f}')")
  ratios+=("$ratio")
  echo "  round $round: without learn $without s, with learn $with s, ratio $ratio"
done
python3 -c "
import statistics
r = [float(x) for x in '${ratios[*]}'.split()]
print(f'  ratio with/without: median {statistics.median(r):.4f}, min {min(r):.4f}, max {max(r):.4f} over {len(r)} rounds')"
fi
[ "$part" = overhead ] && exit 0

flops() {  # learn's flops_per_sample for a job
  local name=$1; shift
  "$nodeaudit" learn --warmup 0 --steps 1 --out "$work/$name.json" --out-profile "$work/$name.toml" -- "$@" >/dev/null 2>&1
  sed -n 's/^flops_per_sample = \([0-9.e+]*\).*/\1/p' "$work/$name.toml"
}
echo "FLOPs per training sample: learn (PyTorch's FLOP counter) vs published"
for pair in resnet18:1.814e9 resnet50:4.089e9; do
  name=${pair%%:*} macs=${pair#*:}
  measured=$(flops "$name" "$python" "$here/flops_job.py" "$name" 3)
  python3 -c "m=$measured; p=$macs*2*3; print(f'  {\"$name\":9} {m/1e9:8.3f} GFLOP vs {p/1e9:8.3f} ({\"$macs\"} MAC x 2 x 3): ratio {m/p:.4f}')"
done
"$python" -c "import numpy as np; np.random.default_rng(1).integers(0, 50257, 1 << 18).astype(np.uint16).tofile('$work/tokens.bin')"
measured=$(flops gpt2 "$python" "$here/../../tests/harness/learn/train_gpt.py" "$work/tokens.bin" --vocab 50257 --d 768 --layers 12 \
  --heads 12 --context 128 --batch 1 --steps 3)
python3 -c "
L, d, V, T = 12, 768, 50257, 128
n = 12 * L * d * d + d * V
p = (6 * n + 12 * L * d * T) * T
m = $measured
print(f'  gpt2-small {m/1e9:8.3f} GFLOP vs {p/1e9:8.3f} (6N + 12LdT per token, N = {n:,}, T = {T}): ratio {m/p:.4f}')"
