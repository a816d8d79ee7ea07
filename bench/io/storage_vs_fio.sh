#!/usr/bin/env bash
# storage_vs_fio: nodeaudit storage probes against fio (io_uring engine) on the same file with
# the same job, alternating A B A B, printing both figures and the ratio (nodeaudit / fio).
#   usage: storage_vs_fio.sh NODEAUDIT_BINARY DIR [FILE_SIZE] [ROUNDS] [RUNTIME_S]
# DIR must be on the storage under test; a test file and a small-file set are created there and
# removed at the end. Jobs: seq 1 MiB QD16 O_DIRECT with 1 and 4 workers; rand 4 KiB QD32
# O_DIRECT; 128 KiB small files in random order (whole-file reads, QD8, 1 worker).
set -euo pipefail
BIN=${1:?nodeaudit binary}; DIR=${2:?directory on the storage under test}
SIZE=${3:-1GiB}; ROUNDS=${4:-2}; RUNTIME=${5:-5}
SMALL_FILES=${SMALL_FILES:-2000}
command -v fio >/dev/null || { echo "fio not installed" >&2; exit 77; }
command -v jq >/dev/null || { echo "jq not installed" >&2; exit 77; }
WORK=$(mktemp -d "$DIR/storage-vs-fio-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FILE=$WORK/testfile.bin
SIZE_B=$(numfmt --from=iec-i "${SIZE%B}")
fio --name=fill --filename="$FILE" --rw=write --bs=1048576 --size="$SIZE_B" --ioengine=io_uring --direct=1 \
    --refill_buffers=1 --output=/dev/null
mkdir -p "$WORK/small"
for i in $(seq -f %07g 0 $((SMALL_FILES - 1))); do head -c 131072 /dev/urandom >"$WORK/small/f$i.bin"; done
sync

# nodeaudit: median bandwidth GB/s | median iops | median p99 us
na_read() {  # pattern bs qd workers
  "$BIN" probe storage.read --path "$FILE" --pattern "$1" --block-size "$2" --queue-depth "$3" --workers "$4" \
      --direct true --runtime "${RUNTIME}s" --format json |
    jq -r '.probes[0] | [(.metrics[] | select(.name=="bandwidth") | .median), (.metrics[] | select(.name=="iops") | .median),
                          (.metrics[] | select(.name=="latency_p99") | .median)] | @tsv'
}
fio_read() {  # pattern bs qd workers
  local rw=read; [ "$1" = rand ] && rw=randread
  local bs; bs=$(numfmt --from=iec-i "${2%B}")  # bytes: fio reads "1MiB" as 10^6
  local per=$((SIZE_B / $4 / bs * bs))
  fio --name=job --filename="$FILE" --rw=$rw --bs="$bs" --iodepth="$3" --numjobs="$4" --size=$per --offset_increment=$per \
      --ioengine=io_uring --direct=1 --fixedbufs=1 --registerfiles=1 --time_based=1 --runtime="$RUNTIME" --group_reporting=1 \
      --output-format=json |
    jq -r '.jobs[0].read | [(.bw_bytes / 1e9), .iops, (.clat_ns.percentile["99.000000"] / 1e3)] | @tsv'
}
# Small files: nodeaudit's loader over a generated set vs fio reading every file of a set of the
# same shape in random order (one open/read/close per file, as a loader does).
na_small() {
  "$BIN" probe storage.dataset --path "$WORK/small-na" --sample-size 128KiB --samples "$SMALL_FILES" --workers 1 \
      --queue-depth 8 --direct true --repetitions 5 --format json |
    jq -r '.probes[0] | [(.metrics[] | select(.name=="bandwidth") | .median), (.metrics[] | select(.name=="samples_per_s") | .median),
                          (.metrics[] | select(.name=="latency_p99") | .median)] | @tsv'
}
fio_small() {
  fio --name=small --bs=131072 \
      --rw=read --iodepth=8 --ioengine=io_uring --direct=1 --openfiles=8 --file_service_type=random --output-format=json \
      --opendir="$WORK/small" --time_based=1 --runtime="$RUNTIME" | sed -n '/^{/,$p' |
    jq -r '.jobs[0].read | [(.bw_bytes / 1e9), .iops, (.clat_ns.percentile["99.000000"] / 1e3)] | @tsv'
}
mkdir -p "$WORK/small-na"

printf '%-34s %-4s %10s %10s %10s\n' job tool GB/s IOPS p99_us
run_job() {  # label na_command fio_command
  local label=$1 na=$2 fi=$3 a b
  local na_bw=() fio_bw=() na_io=() fio_io=() na_p=() fio_p=()
  for r in $(seq 1 "$ROUNDS"); do
    read -r a b c < <($na); na_bw+=("$a"); na_io+=("$b"); na_p+=("$c")
    printf '%-34s %-4s %10.3f %10.0f %10.0f\n' "$label #$r" A "$a" "$b" "$c"
    read -r a b c < <($fi); fio_bw+=("$a"); fio_io+=("$b"); fio_p+=("$c")
    printf '%-34s %-4s %10.3f %10.0f %10.0f\n' "$label #$r" B "$a" "$b" "$c"
  done
  local mean='{s=0; for(i=1;i<=NF;i++) s+=$i; print s/NF}'
  local nb fb np fp
  nb=$(echo "${na_bw[@]}" | awk "$mean"); fb=$(echo "${fio_bw[@]}" | awk "$mean")
  np=$(echo "${na_p[@]}" | awk "$mean"); fp=$(echo "${fio_p[@]}" | awk "$mean")
  printf 'SUMMARY %-26s nodeaudit %.3f GB/s p99 %.0f us | fio %.3f GB/s p99 %.0f us | ratio %.2fx bw, %.2fx p99\n' \
      "$label" "$nb" "$np" "$fb" "$fp" "$(echo "$nb $fb" | awk '{print $1/$2}')" "$(echo "$np $fp" | awk '{print $1/$2}')"
}
run_job "seq 1MiB QD16 1 worker" "na_read seq 1MiB 16 1" "fio_read seq 1MiB 16 1"
run_job "seq 1MiB QD16 4 workers" "na_read seq 1MiB 16 4" "fio_read seq 1MiB 16 4"
run_job "rand 4KiB QD32 1 worker" "na_read rand 4KiB 32 1" "fio_read rand 4KiB 32 1"
run_job "128KiB small files random" "na_small" "fio_small"
