#!/usr/bin/env bash
# The container check's Debian mirror comes from the machine's own apt configuration only
# (scripts/container-check-images.sh): one-line and deb822 entries, options, disabled stanzas and
# comments; with no Debian entry there is no mirror, and making the base image skips with one line.
# Usage: apt_mirror_test.sh REPO_ROOT
set -euo pipefail
repo=${1:?usage: apt_mirror_test.sh REPO_ROOT}
work=$(mktemp -d /tmp/nodeaudit-apt-mirror-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=../../scripts/container-check-images.sh
. "$repo/scripts/container-check-images.sh"
failures=0

apt_dir_with() {  # name, then file=content pairs: an apt directory holding those files
  local dir=$work/$1 pair
  shift
  mkdir -p "$dir/sources.list.d"
  for pair in "$@"; do printf '%s\n' "${pair#*=}" >"$dir/${pair%%=*}"; done
  echo "$dir"
}

expect_mirror() {  # case name, apt dir, expected mirror ("" for none)
  local got
  got=$(apt_mirror "$2")
  if [[ "$got" == "$3" ]]; then echo "ok: $1"; else echo "FAIL: $1: expected '$3', got '$got'"; failures=$((failures + 1)); fi
}

deb822_main=$'Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\nTypes: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main'
expect_mirror "deb822 stanzas" "$(apt_dir_with deb822 "sources.list.d/debian.sources=$deb822_main")" http://mirror.example/debian

disabled=$'Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nEnabled: no\n\n# a comment\nTypes: deb-src deb\nURIs: http://on.example/debian\nSuites: bookworm'
expect_mirror "a disabled stanza is passed over" "$(apt_dir_with disabled "sources.list.d/a.sources=$disabled")" http://on.example/debian

one_line=$'# deb http://commented.example/debian bookworm main\ndeb-src http://src.example/debian bookworm main\ndeb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] https://line.example/debian bookworm main'
expect_mirror "one-line entries with options" "$(apt_dir_with one_line "sources.list=$one_line")" https://line.example/debian

later=$'deb http://trixie.example/debian trixie main\ndeb http://bookworm.example/debian/ bookworm main'
expect_mirror "the bookworm entry before another release's" "$(apt_dir_with later "sources.list.d/x.list=$later")" http://bookworm.example/debian/

other_release=$'deb http://trixie.example/debian trixie main'
expect_mirror "another release's Debian archive" "$(apt_dir_with other_release "sources.list=$other_release")" http://trixie.example/debian

foreign=$'Types: deb\nURIs: https://vendor.example/node_20.x\nSuites: nodistro\nComponents: main'
expect_mirror "no Debian archive: no mirror" "$(apt_dir_with foreign "sources.list.d/vendor.sources=$foreign" "sources.list.d/gone.list.disabled=deb http://gone.example/debian bookworm main")" ""
expect_mirror "no apt configuration: no mirror" "$work/missing" ""

# Making the base image with no mirror: one line naming what is missing, through the caller's skip
# (exit 77, or a failure under NODEAUDIT_EXPECT_CONTAINER=1), and debootstrap never started.
# shellcheck disable=SC2034,SC2317  # apt_dir and the stubs are read and called by ensure_base_image
skip_line=$(
  unset NODEAUDIT_BASE_IMAGE
  apt_dir=$(apt_dir_with empty)
  podman() { return 1; }               # no base image kept from an earlier run
  debootstrap() { echo "debootstrap started"; }
  step() { echo "step: $*"; }
  fail() { echo "fail: $*"; exit 1; }
  skip() { echo "skip: $*"; exit 77; }
  ensure_base_image
) && rc=0 || rc=$?
if [[ $rc -eq 77 && "$skip_line" == "skip: no Debian mirror in this machine's apt sources"* && "$skip_line" != *$'\n'* ]]; then
  echo "ok: no mirror skips in one line"
else
  echo "FAIL: no mirror: expected one skip line and 77, got $rc: $skip_line"; failures=$((failures + 1))
fi
[[ $failures -eq 0 ]]
