# shellcheck shell=bash
# Sourced by container-check.sh: the images it makes, the ones it keeps between runs, and the
# clean-up on every exit path. Expects: label, work, run_tag, step, fail, skip.
# apt_dir, when set, is read instead of /etc/apt for the Debian mirror.
#
# Kept between runs in podman's storage (a machine that keeps them makes the next check cheap):
#   - the Debian 12 base (debootstrap, minutes): recognized by the label this script imported it with,
#     never by its name alone;
#   - the build stage's packages (a layer that changes only with scripts/install-deps.sh or the base),
#     tagged $deps_name so it and its parent layers survive the clean-up.
# Everything else this script builds carries $label.build and is removed at exit: the image under
# test and the layers of this run's sources and compile.

base_name=localhost/nodeaudit-container-check-base:debian-12
base_kind=debootstrap-bookworm-minbase
deps_name=localhost/nodeaudit-container-check:build-deps

# "URI SUITE", one a line, for every enabled `deb` entry of the apt configuration in APT_DIR (default
# /etc/apt): one-line entries (sources.list, sources.list.d/*.list, options in [...] allowed) and deb822
# stanzas (sources.list.d/*.sources: Types, URIs, Suites, Enabled).
apt_deb_entries() {
  local dir=${1:-/etc/apt} file
  for file in "$dir/sources.list" "$dir"/sources.list.d/*.list; do
    [[ -r "$file" ]] || continue
    sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$file" | awk '$1 == "deb" && NF >= 3 {print $2, $3}'
  done
  for file in "$dir"/sources.list.d/*.sources; do
    [[ -r "$file" ]] || continue
    awk 'function flush(  u, s) {
           if (deb && enabled) for (u = 1; u <= nu; u++) for (s = 1; s <= ns; s++) print uris[u], suites[s]
           deb = 0; enabled = 1; nu = 0; ns = 0
         }
         BEGIN { enabled = 1 }
         /^[ \t]*#/ { next }
         /^[ \t]*$/ { flush(); next }
         tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
         tolower($1) == "uris:" { for (i = 2; i <= NF; i++) uris[++nu] = $i }
         tolower($1) == "suites:" { for (i = 2; i <= NF; i++) suites[++ns] = $i }
         tolower($1) == "enabled:" { enabled = tolower($2) != "no" }
         END { flush() }' "$file"
  done
}

# The Debian mirror this machine's apt uses, for debootstrap: the URI of its first `bookworm` entry,
# else of its first Debian archive (a URI ending in /debian, which holds every release). Nothing when
# the apt configuration in APT_DIR (default /etc/apt) names none; no mirror is assumed.
apt_mirror() {
  apt_deb_entries "${1:-/etc/apt}" |
    awk 'release == "" && $2 == "bookworm" {release = $1}
         archive == "" && $1 ~ /\/debian\/?$/ {archive = $1}
         END {if (release != "") print release; else if (archive != "") print archive}'
}

image_label() {  # image, label key -> value ("" when absent)
  podman image inspect --format "{{index .Labels \"$2\"}}" "$1" 2>/dev/null | sed 's/<no value>//'
}

# Sets base, the image to build from: NODEAUDIT_BASE_IMAGE as given, else this script's own
# debootstrap base, made when missing.
ensure_base_image() {
  if [[ -n "${NODEAUDIT_BASE_IMAGE:-}" ]]; then
    podman image exists "$NODEAUDIT_BASE_IMAGE" || fail "NODEAUDIT_BASE_IMAGE=$NODEAUDIT_BASE_IMAGE: no such local image"
    base=$NODEAUDIT_BASE_IMAGE
    return
  fi
  base=$base_name
  if podman image exists "$base_name"; then
    [[ "$(image_label "$base_name" "$label.base")" == "$base_kind" ]] ||
      fail "$base_name exists but was not made by this script (no $label.base=$base_kind label); it is left alone: remove or rename it, or give it as NODEAUDIT_BASE_IMAGE"
    step "base image $base_name (made $(image_label "$base_name" "$label.base-made"), kept from an earlier run)"
    return
  fi
  command -v debootstrap >/dev/null || skip "base image missing and debootstrap not installed (apt-get install debootstrap)"
  local mirror
  mirror=$(apt_mirror "${apt_dir:-/etc/apt}")
  [[ -n "$mirror" ]] || skip "no Debian mirror in this machine's apt sources (/etc/apt/sources.list, sources.list.d/*.list, *.sources) to make the base image from with debootstrap; add one, or give a local Debian 12 image as NODEAUDIT_BASE_IMAGE"
  step "making base image $base_name with debootstrap from $mirror (kept for later runs)"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -5 "$work/debootstrap.log" >&2; fail "debootstrap bookworm from $mirror failed"; }
  tar -C "$work/rootfs" -c . | podman import --quiet --change "LABEL $label.base=$base_kind" \
    --change "LABEL $label.base-made=$(date -u +%F)" - "$base_name" >/dev/null ||
    fail "podman import of the debootstrap tree failed"
  rm -rf --one-file-system "$work/rootfs"
}

# podman build with this script's label on every layer it commits; a failed step's container is
# removed too (--force-rm).
build_labelled() {
  podman build --layers --force-rm --label "$label.build=1" "$@"
}

# The image IDs of an image and its parent layers, one a line.
image_chain() {
  local id
  id=$(podman image inspect --format '{{.Id}}' "$1" 2>/dev/null) || return 0
  while [[ -n "$id" ]]; do
    echo "$id"
    id=$(podman image inspect --format '{{.Parent}}' "$id" 2>/dev/null) || break
  done
}

# Removes every image this script built (label $label.build) but the build stage's packages and the
# image under test when --keep-image asked for it.
remove_built_images() {
  local keep id
  keep=" $(image_chain "$deps_name" | tr '\n' ' ') "
  [[ $keep_image -eq 1 ]] && keep+="$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null) "
  [[ $keep_image -eq 1 ]] || podman rmi "$image" >/dev/null 2>&1 || true
  # Children before parents: podman lists the newest first.
  for id in $(podman images --all --quiet --no-trunc --filter "label=$label.build=1" | awk '!seen[$0]++'); do
    [[ "$keep" == *" ${id#sha256:} "* ]] && continue
    podman rmi "$id" >/dev/null 2>&1 || true
  done
}

# podman build leaves its working containers behind when it is killed. Removed: those on an image
# this script built or on its own base (this run's or a killed run's: the lock makes them all this
# script's), and those on a base the user gave made since containers_before (others may use it).
containers_before=""
note_containers() { containers_before=" $(podman ps --all --external --quiet --no-trunc | tr '\n' ' ') "; }
remove_build_containers() {
  local built base_id id image_id
  built=" $(podman images --all --quiet --no-trunc --filter "label=$label.build=1" | sed 's/^sha256://' | tr '\n' ' ')"
  base_id=$(podman image inspect --format '{{.Id}}' "${base:-}" 2>/dev/null || true)
  while read -r id image_id; do
    [[ -z "$id" ]] && continue
    if [[ "$built" == *" $image_id"* ]] ||
       [[ -n "$base_id" && "$base_id" == "$image_id"* &&
          ( "${base:-}" == "$base_name" || "$containers_before" != *" $id "* ) ]]; then
      podman rm --force "$id" >/dev/null 2>&1 || true
    fi
  done < <(podman ps --all --external --no-trunc --format '{{.ID}} {{.ImageID}}' 2>/dev/null || true)
}

# Unmounts what an interrupted debootstrap left mounted in the scratch folder (its /proc, /sys),
# deepest first, so that removing the folder cannot reach the host's file systems.
unmount_under() {
  local mnt
  for mnt in $(awk -v root="$1/" 'index($2, root) == 1 {print $2}' /proc/self/mounts | sort -r); do
    umount -l "$mnt" 2>/dev/null || true
  done
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  local ids
  ids=$(podman ps --all --quiet --filter "label=$label.run=$run_tag" 2>/dev/null || true)
  # shellcheck disable=SC2086  # one container ID a word
  if [[ -n "$ids" ]]; then podman rm --force $ids >/dev/null 2>&1 || true; fi
  remove_build_containers
  remove_built_images
  unmount_under "$work"
  rm -rf --one-file-system "$work"
  exit "$rc"
}
