#!/usr/bin/env bash
# The prediction model against the job really running on other nodes made on this machine with
# cgroup v1. Per job: learn it once on the whole machine (`learn --audit`); on each node run
# `nodeaudit run` for the job's learned profile and `nodeaudit predict`; then run the job there under
# `nodeaudit learn` and set its measured mean step and data wait beside the prediction.
# Nodes:
#   whole     the machine as it is
#   core1     a cpuset of one CPU
#   quota1.5  1.5 CPUs by CFS quota (cpu.cfs_quota_us 150000 per 100000)
#   slowdisk  its data on an ext4 loop device throttled by blkio (reads: 300 IOPS, 40 MB/s) and a
#             memory cgroup of 1.5 GB that holds less than the token file (2 GB): the page cache
#             cannot keep it
# Jobs: job_images.py (JPEG classification), job_tokens.py (np.memmap token windows),
# job_checkpoint.py (feature shards, torch.save every 4 steps). Each job's device time is a sleep.
# Usage (root, cgroup v1): bench/predict/predict_bench.sh NODEAUDIT PYTHON [OUT_DIR]
#   smaller: STEPS=5 WARMUP=2 IMAGES=200 TOKENS=16777216 JOBS=images NODES="whole core1" predict_bench.sh ...
# Every cgroup, mount, loop device and file it makes is removed on exit, however it exits.
set -euo pipefail
nodeaudit=$(realpath "${1:?usage: predict_bench.sh NODEAUDIT PYTHON [OUT_DIR]}")
python=$(realpath -s "${2:?usage: predict_bench.sh NODEAUDIT PYTHON [OUT_DIR]}")
out=${3:-$PWD/predict-bench-$(date -u +%Y%m%dT%H%M%SZ)}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
work=$(mktemp -d /var/tmp/nodeaudit-predict-bench.XXXXXX)
group=nodeaudit-predict-$$
memory_parent=/sys/fs/cgroup/memory$(awk -F: '$2=="memory"{print $3}' /proc/self/cgroup)
loop=""
steps=${STEPS:-20} warmup=${WARMUP:-5}
images=${IMAGES:-1200} tokens=${TOKENS:-1073741824} jobs=${JOBS:-images tokens checkpoint} nodes=(${NODES:-whole core1 quota1.5 slowdisk})

cleanup() {
  set +e
  for dir in /sys/fs/cgroup/cpuset/$group-* /sys/fs/cgroup/cpu/$group-* /sys/fs/cgroup/blkio/$group-* "$memory_parent"/$group-*; do
    [ -d "$dir" ] || continue
    for pid in $(cat "$dir/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    sleep 0.2
    rmdir "$dir" 2>/dev/null
  done
  mountpoint -q "$work/mnt" && umount "$work/mnt"
  [ -n "$loop" ] && losetup -d "$loop"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

make_nodes() {
  mkdir /sys/fs/cgroup/cpuset/$group-core1
  echo 0 > /sys/fs/cgroup/cpuset/$group-core1/cpuset.cpus
  cat /sys/fs/cgroup/cpuset/cpuset.mems > /sys/fs/cgroup/cpuset/$group-core1/cpuset.mems
  mkdir /sys/fs/cgroup/cpu/$group-quota
  echo 100000 > /sys/fs/cgroup/cpu/$group-quota/cpu.cfs_period_us
  echo 150000 > /sys/fs/cgroup/cpu/$group-quota/cpu.cfs_quota_us
  truncate -s 8G "$work/disk.img"  # the data sets, and the probes' own files beside them
  mkfs.ext4 -q -F "$work/disk.img"
  loop=$(losetup --find --show "$work/disk.img")
  mkdir "$work/mnt" && mount "$loop" "$work/mnt"
  local majmin
  majmin=$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ')
  mkdir /sys/fs/cgroup/blkio/$group-disk
  echo "$majmin 300" > /sys/fs/cgroup/blkio/$group-disk/blkio.throttle.read_iops_device
  echo "$majmin 40000000" > /sys/fs/cgroup/blkio/$group-disk/blkio.throttle.read_bps_device
  mkdir "$memory_parent/$group-disk"
  echo 1536M > "$memory_parent/$group-disk/memory.limit_in_bytes"
}

# in_node NODE COMMAND..: the command in the node's cgroups (its children inherit them).
in_node() {
  local node=$1; shift
  local tasks=()
  case $node in
    whole) ;;
    core1) tasks=(/sys/fs/cgroup/cpuset/$group-core1/cgroup.procs) ;;
    quota1.5) tasks=(/sys/fs/cgroup/cpu/$group-quota/cgroup.procs) ;;
    slowdisk) tasks=(/sys/fs/cgroup/blkio/$group-disk/cgroup.procs "$memory_parent/$group-disk/cgroup.procs") ;;
  esac
  bash -c 'for t in "${@:2:$1}"; do echo $$ > "$t"; done; shift $(($1 + 1)); exec "$@"' _ "${#tasks[@]}" "${tasks[@]}" "$@"
}

data_root() { [ "$1" = slowdisk ] && echo "$work/mnt/data" || echo "$work/data"; }

make_data() {
  for root in "$work/data" "$work/mnt/data"; do
    mkdir -p "$root/images" "$root/shards" "$root/checkpoints" "$root/scratch"
    "$python" "$here/make_images.py" "$root/images" "$images"
    "$python" -c "import numpy as np, sys; np.random.default_rng(3).integers(0, 4096, int(sys.argv[2]), dtype=np.uint16).tofile(sys.argv[1])" "$root/tokens.bin" "$tokens"
    "$python" -c "
import numpy as np, sys
rng = np.random.default_rng(5)
for i in range(2000): np.save('%s/%05d.npy' % (sys.argv[1], i), rng.standard_normal(4096, dtype=np.float32))" "$root/shards"
  done
  sync
}

job_command() {  # job_command JOB NODE
  local root; root=$(data_root "$2")
  case $1 in
    images) echo "$python $here/job_images.py $root/images --batch 32" ;;
    tokens) echo "$python $here/job_tokens.py $root/tokens.bin" ;;
    checkpoint) echo "$python $here/job_checkpoint.py $root/shards $root/checkpoints" ;;
  esac
}

# A data set that fits the node's free memory is read from the page cache after the first epoch:
# read it once in the node, as a job's first epoch does, so the measured steps are the steady ones.
warm_data() {  # warm_data JOB NODE
  local root; root=$(data_root "$2")
  case $1 in
    images) in_node "$2" bash -c "cat $root/images/*/* > /dev/null" ;;
    checkpoint) in_node "$2" bash -c "cat $root/shards/* > /dev/null" ;;
    # On slowdisk the token file does not fit the node's page cache: each run starts with none of it
    # cached (its pages dropped; written outside the node's memory cgroup, they would otherwise be
    # served from the machine's cache for as long as they stay there).
    tokens) if [ "$2" = slowdisk ]; then
              "$python" -c "import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)" "$root/tokens.bin"
            else
              cat "$root/tokens.bin" > /dev/null
            fi ;;
  esac
}

make_nodes
make_data
for job in $jobs; do
  warm_data "$job" whole
  # shellcheck disable=SC2046
  "$nodeaudit" learn --warmup "$warmup" --steps "$steps" --audit --data-dir "$work/data/scratch" --out "$out/$job-learned.json" \
    -- $(job_command "$job" whole) > "$out/$job-learned.log" 2>&1
  for node in "${nodes[@]}"; do
    in_node "$node" "$nodeaudit" run --profile "$out/$job-learned.toml" --python "$python" \
      --only host.decode,host.dataloader,storage.dataset,storage.checkpoint --data-dir "$(data_root "$node")/scratch" \
      --out "$out/$job-node-$node.json" > "$out/$job-node-$node.log" 2>&1 || true
  done
  # The prediction for the runs below: their measured steps, each run's data as warm_data leaves it
  # (a data set that does not fit the page cache starts cold and fills it as the run goes).
  "$nodeaudit" predict "$out/$job-learned.json" $(for n in "${nodes[@]}"; do echo "$out/$job-node-$n.json"; done) \
    --steps "$steps" --warmup "$warmup" --format json > "$out/$job-predicted.json"
  for node in "${nodes[@]}"; do
    warm_data "$job" "$node"
    # shellcheck disable=SC2046
    in_node "$node" "$nodeaudit" learn --warmup "$warmup" --steps "$steps" --out "$out/$job-measured-$node.json" \
      -- $(job_command "$job" "$node") > "$out/$job-measured-$node.log" 2>&1 || true
  done
done
"$python" "$here/predict_table.py" "$out" | tee "$out/table.md"
