#!/usr/bin/env bash
# storage_vs_fio: nodeaudit storage probes against fio (io_uring engine) on the same files with
# the same job, alternating A B A B, printing every round, then the medians and their ratio.
#   run by hand:  bench/io/storage_vs_fio.sh build/nodeaudit /path/on/the/disk [FILE_SIZE] [ROUNDS] [RUNTIME_S]
#   e.g.          bench/io/storage_vs_fio.sh build/nodeaudit build/storage-bench 1GiB 5 3
#   or            cmake --build build --target storage_vs_fio
# DIR must be on the storage under test; a test file and a small-file set are created there and
# removed at the end. Knobs (environment): SMALL_FILES (2000), FIO_IOMEM (fio's buffer memory,
# default malloc; shmhuge gives fio huge-page buffers like nodeaudit's THP-advised ones and needs
# free huge pages: /proc/sys/vm/nr_hugepages), JOBS (space-separated subset of: seq1 seq4 rand
# small small-qd1).
# Jobs, both tools with O_DIRECT, the same file, block size, queue depth and job count:
#   seq1/seq4  1 MiB sequential reads, QD16, 1 and 4 workers (fio --numjobs 4 with
#              --offset_increment: each job its own quarter of the file, as nodeaudit's workers;
#              both time-based, both report aggregate bandwidth)
#   rand       4 KiB random reads, QD32, 1 worker
#   small      128 KiB files in random order, each opened, read whole and closed (fio:
#              --openfiles=QD --file_service_type=random, which opens a file, reads its one
#              block and closes it; strace shows one openat and one close per read), QD8; fio
#              reads hard links to nodeaudit's own sample files, so both read the same blocks
#   small-qd1  the same with one file in flight (fio's synchronous open/close leaves it about one
#              read in flight at QD8, so this is the like-for-like latency row)
# Latency: nodeaudit p99 is the median over its windows/epochs of the per-window p99 (per sample:
# open to close); fio's is the p99 of clat over the run (read only, no open/close).
set -euo pipefail
BIN=${1:?nodeaudit binary}; DIR=${2:?directory on the storage under test}
SIZE=${3:-1GiB}; ROUNDS=${4:-3}; RUNTIME=${5:-3}
SMALL_FILES=${SMALL_FILES:-2000}; FIO_IOMEM=${FIO_IOMEM:-malloc}
JOBS=${JOBS:-seq1 seq4 rand small small-qd1}
command -v fio >/dev/null || { echo "fio not installed" >&2; exit 77; }
command -v jq >/dev/null || { echo "jq not installed" >&2; exit 77; }
mkdir -p "$DIR"
WORK=$(mktemp -d "$DIR/storage-vs-fio-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FILE=$WORK/testfile.bin
SIZE_B=$(numfmt --from=iec-i "${SIZE%B}")
fio --name=fill --filename="$FILE" --rw=write --bs=1048576 --size="$SIZE_B" --ioengine=io_uring --direct=1 \
    --refill_buffers=1 --output=/dev/null
# nodeaudit generates (and with --keep-data keeps) its sample files; fio reads hard links to them.
"$BIN" probe storage.dataset --path "$WORK" --sample-size 128KiB --samples "$SMALL_FILES" --workers 1 --queue-depth 1 \
    --keep-data --repetitions 1 --format json >/dev/null
mkdir -p "$WORK/fio-view"
ln "$WORK"/nodeaudit-dataset-131072x"$SMALL_FILES"/f*.bin "$WORK/fio-view/"
sync

metric() { echo "(.metrics[] | select(.name==\"$1\") | .median)"; }
na_read() {  # pattern bs qd workers -> GB/s ops/s p99_us
  "$BIN" probe storage.read --path "$FILE" --pattern "$1" --block-size "$2" --queue-depth "$3" --workers "$4" \
      --direct true --runtime "${RUNTIME}s" --format json |
    jq -r ".probes[0] | [$(metric bandwidth), $(metric iops), $(metric latency_p99)] | @tsv"
}
fio_read() {  # pattern bs qd workers
  local rw=read; [ "$1" = rand ] && rw=randread
  local bs; bs=$(numfmt --from=iec-i "${2%B}")  # bytes: fio reads "1MiB" as 10^6
  local per=$((SIZE_B / $4 / bs * bs))
  fio --name=job --filename="$FILE" --rw=$rw --bs="$bs" --iodepth="$3" --numjobs="$4" --size=$per --offset_increment=$per \
      --ioengine=io_uring --direct=1 --fixedbufs=1 --registerfiles=1 --iomem="$FIO_IOMEM" --time_based=1 \
      --runtime="$RUNTIME" --group_reporting=1 --output-format=json |
    jq -r '.jobs[0].read | [(.bw_bytes / 1e9), .iops, (.clat_ns.percentile["99.000000"] / 1e3)] | @tsv'
}
na_small() {  # qd
  "$BIN" probe storage.dataset --path "$WORK" --sample-size 128KiB --samples "$SMALL_FILES" --workers 1 \
      --queue-depth "$1" --direct true --keep-data --format json |
    jq -r ".probes[0] | [$(metric bandwidth), $(metric samples_per_s), $(metric latency_p99)] | @tsv"
}
fio_small() {  # qd
  fio --name=small --opendir="$WORK/fio-view" --bs=131072 --rw=read --iodepth="$1" --openfiles="$1" \
      --file_service_type=random --ioengine=io_uring --direct=1 --fixedbufs=1 --iomem="$FIO_IOMEM" --time_based=1 \
      --runtime="$RUNTIME" --output-format=json 2>/dev/null | sed -n '/^{/,$p' |
    jq -r '.jobs[0].read | [(.bw_bytes / 1e9), .iops, (.clat_ns.percentile["99.000000"] / 1e3)] | @tsv'
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END{print (v[int((NR+1)/2)]+v[int(NR/2)+1])/2}'; }
TABLE=()
run_job() {  # label na_command fio_command
  local label=$1 na=$2 fio=$3 a b c
  local na_bw="" fio_bw="" na_io="" fio_io="" na_p="" fio_p="" ratios=""
  for r in $(seq 1 "$ROUNDS"); do
    read -r a b c < <($na); na_bw+=" $a"; na_io+=" $b"; na_p+=" $c"
    printf '%-30s %-9s %8.3f GB/s %10.0f /s  p99 %9.0f us\n' "$label #$r" nodeaudit "$a" "$b" "$c"
    local fa; read -r fa b c < <($fio); fio_bw+=" $fa"; fio_io+=" $b"; fio_p+=" $c"
    printf '%-30s %-9s %8.3f GB/s %10.0f /s  p99 %9.0f us\n' "$label #$r" fio "$fa" "$b" "$c"
    ratios+=" $(awk -v x="$a" -v y="$fa" 'BEGIN{print x/y}')"
  done
  local nb fb ni fo np fp rr
  nb=$(echo "$na_bw" | median); fb=$(echo "$fio_bw" | median); ni=$(echo "$na_io" | median); fo=$(echo "$fio_io" | median)
  np=$(echo "$na_p" | median); fp=$(echo "$fio_p" | median); rr=$(echo "$ratios" | median)
  TABLE+=("$(printf '| %s | %.3f (%.0f/s) | %.3f (%.0f/s) | %.2fx | %.2fx | %.0f / %.0f |' \
      "$label" "$nb" "$ni" "$fb" "$fo" "$(awk -v x="$nb" -v y="$fb" 'BEGIN{print x/y}')" "$rr" "$np" "$fp")")
}
for job in $JOBS; do
  case $job in
    seq1) run_job "seq 1MiB QD16 1 worker" "na_read seq 1MiB 16 1" "fio_read seq 1MiB 16 1" ;;
    seq4) run_job "seq 1MiB QD16 4 workers" "na_read seq 1MiB 16 4" "fio_read seq 1MiB 16 4" ;;
    rand) run_job "rand 4KiB QD32 1 worker" "na_read rand 4KiB 32 1" "fio_read rand 4KiB 32 1" ;;
    small) run_job "128KiB files random QD8" "na_small 8" "fio_small 8" ;;
    small-qd1) run_job "128KiB files random QD1" "na_small 1" "fio_small 1" ;;
    *) echo "unknown job $job" >&2; exit 2 ;;
  esac
done
echo
echo "medians of $ROUNDS alternating rounds, ${RUNTIME}s each, fio --iomem=$FIO_IOMEM"
echo "| job | nodeaudit GB/s (IOPS or files/s) | fio GB/s (IOPS or files/s) | ratio of medians | median of per-round ratios | p99 us nodeaudit / fio |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${TABLE[@]}"
