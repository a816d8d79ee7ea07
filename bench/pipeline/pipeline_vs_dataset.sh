#!/usr/bin/env bash
# pipeline_vs_dataset: the two speed targets of pipeline.step, measured side by side (a script run
# by hand, not a timed test).
#   usage: pipeline_vs_dataset.sh NODEAUDIT_BINARY DIR [ROUNDS] [WORKERS] [SAMPLES] [SAMPLE_SIZE]
# (a) Loader rate: pipeline.step with compute emulated as zero (--emulate-compute none, no decode,
#     no checkpoints) against storage.dataset on the same data set (same files, same workers and
#     reads in flight), buffered and then O_DIRECT, alternating A B A B; each figure is samples/s,
#     the ratio is pipeline / storage.dataset (target >= 0.95).
# (b) AU with page-cached data: pipeline.step with compute needing 40% of the loader rate measured
#     buffered in (a) (a compute time per step of batch / (0.4 x rate)), once per checkpoint mode, one GPU
#     (--gpus-in-node 1: no all-reduce, whose exposed share would lower AU by design) (target
#     au >= 99%).
# DIR must be on the storage under test; the data set is generated once (--keep-data) and removed
# at the end. Medians over ROUNDS rounds.
set -euo pipefail
BIN=${1:?nodeaudit binary}; DIR=${2:?directory on the storage under test}
ROUNDS=${3:-5}; WORKERS=${4:-4}; SAMPLES=${5:-2000}; SIZE=${6:-110KiB}
BATCH=${BATCH:-256}; QD=${QD:-8}; EPOCHS=${EPOCHS:-10}
command -v jq >/dev/null || { echo "jq not installed" >&2; exit 77; }
WORK=$(mktemp -d "$DIR/pipeline-vs-dataset-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
STEPS=$((1 + EPOCHS * SAMPLES / BATCH))
COMMON=(--path "$WORK" --sample-size "$SIZE" --samples "$SAMPLES" --keep-data)

metric() {  # probe-json metric-name [label=value]
  local filter='.probes[0].metrics[] | select(.name==$n)'
  [ -n "${3:-}" ] && filter="$filter | select(.labels.${3%%=*}==\"${3#*=}\")"
  jq -r --arg n "$2" "$filter | .median" <<<"$1" | head -1
}
dataset_rate() {  # direct
  local out; out=$("$BIN" probe storage.dataset "${COMMON[@]}" --workers "$WORKERS" --queue-depth "$QD" --direct "$1" \
      --repetitions 5 --format json)
  metric "$out" samples_per_s
}
pipeline_json() {  # extra args
  "$BIN" probe pipeline.step "${COMMON[@]}" --workers "$WORKERS" --io-depth "$QD" --batch-size "$BATCH" --steps "$STEPS" \
      --decode none --format json "$@"
}
median() { tr ' ' '\n' | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

"$BIN" probe storage.dataset "${COMMON[@]}" --workers 1 --direct false --repetitions 1 --format json >/dev/null  # generate + warm the cache
for direct in false true; do
  echo "# (a) loader rate, $SAMPLES x $SIZE, $WORKERS workers, $QD reads in flight each, batch $BATCH, $STEPS steps, --direct $direct"
  printf '%-8s %-16s %12s\n' round tool samples/s
  pipe=(); data=(); ratios=()
  for r in $(seq 1 "$ROUNDS"); do
    a=$(metric "$(pipeline_json --emulate-compute none --checkpoint off --direct "$direct")" samples_per_s); pipe+=("$a")
    printf '%-8s %-16s %12.0f\n' "$r" pipeline.step "$a"
    b=$(dataset_rate "$direct"); data+=("$b")
    printf '%-8s %-16s %12.0f\n' "$r" storage.dataset "$b"
    ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN {print a/b}')")
  done
  mp=$(echo "${pipe[@]}" | median); md=$(echo "${data[@]}" | median); mr=$(echo "${ratios[@]}" | median)
  printf 'SUMMARY (a) direct=%s pipeline %.0f samples/s | storage.dataset %.0f samples/s | ratio of medians %.3f | median per-round ratio %.3f\n' \
      "$direct" "$mp" "$md" "$(awk -v a="$mp" -v b="$md" 'BEGIN {print a/b}')" "$mr"
  [ "$direct" = false ] && buffered_rate=$mp
done
mp=$buffered_rate

COMPUTE_S=$(awk -v b="$BATCH" -v r="$mp" 'BEGIN {printf "%.6f", b / (0.4 * r)}')
echo "# (b) AU, compute ${COMPUTE_S}s per step of $BATCH samples (40% of the loader's $mp samples/s)"
printf '%-8s %-12s %8s %20s %12s %8s %8s\n' round checkpoint au au_with_checkpoint data_wait_% comm_% other_%
for mode in off async sync; do
  aus=()
  for r in $(seq 1 "$ROUNDS"); do
    out=$(pipeline_json --compute-time "${COMPUTE_S}s" --checkpoint "$mode" --gpus-in-node 1)
    au=$(metric "$out" au); aus+=("$au")
    printf '%-8s %-12s %8.2f %20.2f %12.3f %8.3f %8.3f\n' "$r" "$mode" "$au" "$(metric "$out" au_with_checkpoint)" \
        "$(metric "$out" stage_busy_pct stage=data_wait)" "$(metric "$out" stage_busy_pct stage=communication)" \
        "$(metric "$out" stage_busy_pct stage=other)"
  done
  printf 'SUMMARY (b) checkpoint=%s median au %.2f %%\n' "$mode" "$(echo "${aus[@]}" | median)"
done
