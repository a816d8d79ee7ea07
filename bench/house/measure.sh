#!/usr/bin/env bash
# How the house reads, at one revision, with the same commands before and after a change:
#   bench/house/measure.sh [REV]        (default: the working tree)
# Counts, each with the command that makes it:
#   - result keys: the files under harness/ that spell the result document's keys "probes" and "status";
#   - probe_entry: the files that call it (the entry is built by hand there);
#   - profile keys: for a few profile fields, the files under harness/ and pipeline/ that spell the key;
#   - learn in the CLI: the lines of learn's logic that sit in harness/cli;
#   - duplicates: `struct TempDir` and `run_cli(` definitions in tests/;
#   - rooms: room_includes_test's table (the arrows between pipeline's rooms).
set -euo pipefail
rev=${1:-}
top=$(git rev-parse --show-toplevel)
if [ -n "$rev" ]; then
  tree=$(mktemp -d)
  trap 'rm -rf "$tree"' EXIT
  git -C "$top" archive "$rev" | tar -x -C "$tree"
else
  tree=$top
fi
cd "$tree"
files_spelling() { grep -rlF -- "$1" "${@:2}" 2>/dev/null | wc -l; }
echo "revision: ${rev:-working tree}"
echo "files under harness/ spelling \"probes\": $(files_spelling '"probes"' harness)"
echo "files under harness/ spelling \"status\": $(files_spelling '"status"' harness)"
echo "files calling probe_entry(: $(grep -rlE 'probe_entry\(' --include='*.cpp' harness kernels io comm pipeline hostconfig | wc -l)"
for key in micro_batch_per_gpu flops_per_sample model_efficiency comm_overlap dataset_size device_bytes_per_sample; do
  echo "files under harness/ and pipeline/ spelling \"$key\": $(files_spelling "\"$key\"" harness pipeline)"
done
learn_lines=$(cat harness/cli/*learn* 2>/dev/null | wc -l)
echo "lines of harness/cli/*learn*: $learn_lines"
echo "definitions of struct TempDir in tests/: $(grep -rE '^(struct|class) TempDir \{' tests | wc -l)"
echo "definitions of run_cli( in tests/: $(grep -rE '^(inline )?[A-Za-z:]+ run_cli\(' tests | wc -l)"
echo "pipeline rooms in the include table: $(grep -oE '\{"pipeline[a-z/]*"' tests/rooms/room_includes_test.cpp | tr -d '{"' | tr '\n' ' ')"
echo "probe-room files including the scorer's entry points: $(grep -rlE '#include "harness/score/(score|model|predict|stages|step_prediction)\.hpp"' kernels io comm pipeline hostconfig | wc -l)"
