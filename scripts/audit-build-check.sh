#!/usr/bin/env bash
# Checks that `make audit` builds what the audit runs and nothing else, so a change that makes it
# build the tests again (a test target made a dependency of the binary, the audit building every
# target) fails CI instead of passing unnoticed:
#   1. a tree the audit configures first leaves the tests and benchmarks out, so the audit needs
#      none of their packages, and compiles the binary's libraries in unity batches;
#   2. on a tree configured with every target (as `make test` leaves it), `make audit-build` builds
#      the `nodeaudit` binary and no test or benchmark object or executable.
# Cheap with a warm compile cache: the tree sits beside build/, so ccache's relative paths hit the
# objects `make test` compiled. Exit 0 = both hold, 1 = one does not (what was built is named).
# Usage: scripts/audit-build-check.sh   (from anywhere; JOBS as for make)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
tree=$(mktemp -d "$repo/build-audit-check.XXXXXX")
trap 'rm -rf "$tree"' EXIT
rel=${tree#"$repo"/}
say() { echo "audit-build-check: $*"; }
fail() { echo "audit-build-check: FAIL: $*" >&2; exit 1; }

quiet_make() {  # make TARGET with the tree as BUILD_DIR; its output only when it fails
  make --no-print-directory "$1" BUILD_DIR="$rel" JOBS="${JOBS:-2}" >"$tree/make-$1.log" 2>&1 ||
    { tail -20 "$tree/make-$1.log"; fail "make $1 BUILD_DIR=$rel failed (log above)"; }
}

quiet_make audit-configure
for option in NODEAUDIT_BUILD_TESTS NODEAUDIT_BUILD_BENCH; do
  grep -qx "$option:BOOL=OFF" "$tree/CMakeCache.txt" ||
    fail "a tree make audit configures first has $(grep "^$option:" "$tree/CMakeCache.txt" || echo "$option unset"): it should be OFF, so the audit needs no test or benchmark package"
done
grep -qx "NODEAUDIT_UNITY_BUILD:BOOL=ON" "$tree/CMakeCache.txt" ||
  fail "a tree make audit configures first has $(grep "^NODEAUDIT_UNITY_BUILD:" "$tree/CMakeCache.txt" || echo "NODEAUDIT_UNITY_BUILD unset"): the binary's libraries should compile in unity batches (less than half the CPU time of file by file)"
say "a first audit configures no test or benchmark target, and compiles the binary's libraries in unity batches"

quiet_make configure
quiet_make audit-build
[[ -x "$tree/nodeaudit" ]] || fail "make audit-build left no $rel/nodeaudit"
# Objects of the tests and benchmarks live under the tree's tests/ and bench/ (one folder per
# target); an executable anywhere else but the binary (and CMake's compiler checks) is one too many.
extra=$( { find "$tree/tests" "$tree/bench" -type f \( -name '*.o' -o -perm -u+x \) 2>/dev/null
          find "$tree" -type f -perm -u+x ! -path "$tree/nodeaudit" ! -path "$tree/CMakeFiles/*" \
            -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print; } | sed "s|^$tree/||" | sort -u)
[[ -z "$extra" ]] || fail "make audit-build built more than the binary: $(echo "$extra" | head -5 | tr '\n' ' ')($(echo "$extra" | wc -l) in all)"
say "make audit-build built $rel/nodeaudit and no test or benchmark target ($(find "$tree" -name '*.o' | wc -l) objects)"
