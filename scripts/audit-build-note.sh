#!/usr/bin/env bash
# make audit's first screen: before the binary's first build in BUILD_DIR, one line says what is
# built and about how long it takes with JOBS jobs; on a tree that holds the binary it says nothing
# (each file compiled still says so).
# Usage: scripts/audit-build-note.sh BUILD_DIR JOBS
set -euo pipefail
build=${1:?usage: audit-build-note.sh BUILD_DIR JOBS}
jobs=${2:?usage: audit-build-note.sh BUILD_DIR JOBS}
[[ -e "$build/nodeaudit" ]] && exit 0

# CPU seconds of the binary's first build with an empty compile cache, -O2 -g1, unity batches of 16,
# g++ 12 and nvcc 13 on a Debian 12 x86-64 core (README, "The first audit": how it was measured). The
# GPU probes add their CUDA host and device code when the toolkit is found.
host_cpu_s=204
cuda_cpu_s=17

cache=$build/CMakeCache.txt
cpu_s=$host_cpu_s
with="without the GPU probes"
if grep -qx 'NODEAUDIT_GPU_PROBES_BUILT:INTERNAL=ON' "$cache" 2>/dev/null; then
  cpu_s=$((host_cpu_s + cuda_cpu_s))
  with="with the GPU probes"
fi
cores=$(nproc)
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] && ((jobs < cores)) && cores=$jobs
minutes=$(((cpu_s + cores * 60 - 1) / (cores * 60)))
echo "make audit: building the nodeaudit binary alone, $with: about $minutes min on $cores cores with no compile" \
     "cache ($(((cpu_s + 30) / 60)) CPU-minutes measured on Debian 12, README \"The first audit\"); the tests are not built: make test builds them"
