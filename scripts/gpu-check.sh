#!/usr/bin/env bash
# On a machine with a GPU: build Release for the local architecture, run the tests, run the GPU and
# communication probes and the training step on the GPUs at quick level and print one table of
# what they measured.
# Usage: scripts/gpu-check.sh   (from anywhere; results go to results/reference/)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-gpu"
out="$root/results/reference"
jobs="$(nproc)"
status=0

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DNODEAUDIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=native
cmake --build "$build" -j "$jobs"

# Tests and probes may fail; keep going so the table is printed, and exit non-zero at the end.
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 300) || status=1
mkdir -p "$out" "$build/scratch"
# pipeline.step reads a generated data set from --data-dir (removed after the run).
"$build/nodeaudit" run --only 'gpu.*,comm.*,pipeline.step' --level quick --data-dir "$build/scratch" --out "$out/" ||
  status=1
# The multi-node path (NCCL bootstrapped over MPI) on this node: one rank per GPU.
if command -v mpirun >/dev/null; then
  gpus="$(nvidia-smi -L 2>/dev/null | wc -l)"
  as_root=(); [[ $(id -u) -eq 0 ]] && as_root=(--allow-run-as-root)
  mpirun "${as_root[@]}" -np "${gpus:-1}" "$build/nodeaudit" probe comm.allreduce --level quick \
    --out "$out/mpi-allreduce-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ).json" || status=1
fi

latest="$(ls -t "$out"/*.json 2>/dev/null | grep -v '/mpi-allreduce-' | head -1 || true)"
if [[ -z "$latest" ]]; then
  echo "gpu-check: no result file in $out" >&2
  exit 1
fi
echo
echo "gpu-check: $latest"
python3 - "$latest" <<'PY' || status=1
import json, sys
doc = json.load(open(sys.argv[1]))
print(f"{'probe':<24} {'status':<10} {'metric':<22} {'labels':<40} {'median':>12} unit")
for p in doc.get("probes", []):
    if not p.get("metrics"):
        print(f"{p['id']:<24} {p['status']:<10} {p.get('reason', '')}")
    for m in p.get("metrics", []):
        labels = ",".join(f"{k}={v}" for k, v in sorted(m.get("labels", {}).items()))
        print(f"{p['id']:<24} {p['status']:<10} {m['name']:<22} {labels:<40} {m.get('median', 0):>12.4g} {m['unit']}")
    for f in p.get("findings", []):
        if f["severity"] != "info":
            print(f"{'':<24} {f['severity']:<10} {f['code']}: {f['message']}")
PY
exit "$status"
