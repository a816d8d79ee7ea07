#!/usr/bin/env bash
# Builds the Containerfile from a local Debian 12 base and audits this machine from inside it with
# podman: the result file on a results volume, the container named in `env`, the cgroup limits
# judged, GPU probes skipped with their reason (and host.dataloader without Python in the image),
# and the bad inputs (a missing results volume, a data dir on the container's own layer).
# The image compiles nodeaudit, so the first run takes many minutes; the base image and the build
# stage's packages stay in podman's storage for the next run (scripts/container-check-images.sh),
# and NODEAUDIT_CONTAINER_CCACHE gives the compile an object cache. Not part of `make test`; .ci/run
# runs it. Exit 0 = every check passed, 77 = cannot run here (reason printed), 1 = a check failed.
#
# Usage: scripts/container-check.sh [--keep-image]
#   NODEAUDIT_BASE_IMAGE         a local Debian 12 image to build from instead of this script's own
#                                (made with debootstrap from the configured apt mirror: no registry)
#   NODEAUDIT_CONTAINER_CCACHE   a host folder the image's compile keeps its ccache in (made if missing)
#   NODEAUDIT_EXPECT_CONTAINER=1 a reason to skip is a failure (CI, which installs podman and runc)
#   PODMAN_RUNTIME               OCI runtime (default runc: crun refuses hybrid v1/v2 cgroup hosts)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
runtime=${PODMAN_RUNTIME:-runc}
label=io.nodeaudit.container-check  # on every image and container this script makes
run_tag=$$
image=localhost/nodeaudit-container-check:run-$run_tag
keep_image=0
case "${1:-}" in
  --keep-image) keep_image=1 ;;
  "") ;;
  *) echo "container-check: unknown option '$1'; expected --keep-image" >&2; exit 2 ;;
esac

started=$(date +%s)
step() { echo "container-check: [$(($(date +%s) - started)) s] $*"; }
fail() { echo "container-check: FAIL: $*" >&2; exit 1; }
skip() {
  [[ "${NODEAUDIT_EXPECT_CONTAINER:-}" == 1 ]] && fail "NODEAUDIT_EXPECT_CONTAINER=1, but: $*"
  echo "container-check: SKIP: $*"
  exit 77
}

command -v podman >/dev/null || skip "podman not installed (apt-get install podman runc debootstrap)"
command -v "$runtime" >/dev/null || skip "OCI runtime $runtime not installed"
command -v python3 >/dev/null || skip "python3 not installed (used to read the result JSON)"
command -v flock >/dev/null || skip "flock not installed (util-linux)"

# One check at a time on this machine: the clean-up removes the images this script built.
exec 9<"$0"
flock 9

# shellcheck source=container-check-images.sh
. "$repo/scripts/container-check-images.sh"
work=$(mktemp -d /tmp/nodeaudit-container-check.XXXXXX)
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Podman's default ulimits are refused where the caller's hard limits are lower; keep the caller's.
# A private containers.conf, so the machine's configuration is left alone.
cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = []
[engine]
runtime = "$runtime"
EOF
export CONTAINERS_CONF="$work/containers.conf"
podman_run() { podman --runtime "$runtime" run --rm --label "$label.run=$run_tag" --ulimit host "$@"; }

ensure_base_image
commit=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
build_args=(-f "$repo/Containerfile" --build-arg "BASE=$base" --build-arg "RUNTIME_BASE=$base")
if [[ -n "${NODEAUDIT_CONTAINER_CCACHE:-}" ]]; then
  mkdir -p "$NODEAUDIT_CONTAINER_CCACHE"
  [[ -e "$NODEAUDIT_CONTAINER_CCACHE/ccache.conf" ]] || echo "max_size = 2G" >"$NODEAUDIT_CONTAINER_CCACHE/ccache.conf"
  build_args+=(--volume "$NODEAUDIT_CONTAINER_CCACHE:/ccache" --build-arg CCACHE_DIR=/ccache)
fi
note_containers
step "build stage's packages: $deps_name (kept while scripts/install-deps.sh and the base stay the same)"
build_labelled "${build_args[@]}" --target build-deps -t "$deps_name" "$repo" >"$work/build-deps.log" 2>&1 ||
  { tail -30 "$work/build-deps.log"; fail "podman build --target build-deps failed (log above)"; }
step "building $image (compiles nodeaudit without CUDA${NODEAUDIT_CONTAINER_CCACHE:+; object cache $NODEAUDIT_CONTAINER_CCACHE})"
build_labelled "${build_args[@]}" --build-arg "GIT_COMMIT=$commit" -t "$image" "$repo" >"$work/build.log" 2>&1 ||
  { tail -30 "$work/build.log"; fail "podman build failed (log above)"; }
grep -m1 -E '^ccache: ' "$work/build.log" || true
step "image built: $(podman image inspect --format '{{.Size}}' "$image") bytes"

mkdir -p "$work/data" "$work/results"
step "audit: run --only 'host.*,storage.*' --level quick --rounds 1 (the container, not noise, is checked), data dir and results bind-mounted, io_uring allowed"
set +e
podman_run --security-opt seccomp=unconfined -v "$work/data:/data" -v "$work/results:/results" "$image" \
  run --only 'host.*,storage.*' --level quick --rounds 1 --data-dir /data --out /results/ >"$work/run.log" 2>&1
rc=$?
set -e
cat "$work/run.log"
[[ $rc -eq 0 || $rc -eq 1 ]] || fail "nodeaudit run exited $rc (0 or 1 expected: 1 is a finding, not a crash)"
result=$(ls "$work/results"/*.json 2>/dev/null | head -1)
[[ -n "$result" ]] || fail "no result file in the results volume"
python3 - "$result" <<'EOF' || fail "result checks failed (above)"
import json, sys
doc = json.load(open(sys.argv[1]))
c = doc["env"]["container"]
assert c["detected"] is True, f"container not detected: {c}"
assert c["runtime"] == "podman", f"runtime {c['runtime']!r}, expected podman"
assert doc["env"]["data_dir"]["on_container_layer"] is False, "the bind-mounted data dir was taken for the overlay"
probes = {p["id"]: p for p in doc["probes"]}
for pid in ("host.config", "storage.read", "host.dataloader"):
    assert pid in probes, f"{pid} missing from the run"
bad = [f"{p['id']}: {p['status']} {p.get('reason', '')}" for p in probes.values() if p["status"] not in ("ok", "skipped")]
assert not bad, "probes did not finish: " + "; ".join(bad)
assert probes["storage.read"]["status"] == "ok", f"storage.read: {probes['storage.read']['status']} {probes['storage.read'].get('reason')}"
# The image has no Python: the loader probe's default interpreter is missing, a skip with the reason.
dl = probes["host.dataloader"]
assert dl["status"] == "skipped" and "python3 is not on PATH" in dl.get("reason", ""), f"host.dataloader: {dl['status']} {dl.get('reason')}"
print("container-check: result", sys.argv[1].split("/")[-1], "-", len(probes), "probes,",
      sum(p["status"] == "ok" for p in probes.values()), "ok; container", c["runtime"], "evidence:", "; ".join(c["evidence"]))
EOF

step "default seccomp profile: storage probes skip and say how to allow io_uring"
podman_run -v "$work/data:/data" "$image" run --only storage.read --level quick --data-dir /data --format json \
  --out /tmp/ >"$work/seccomp.json" 2>"$work/seccomp.log" || true
python3 - "$work/seccomp.json" <<'EOF' || { cat "$work/seccomp.log"; fail "seccomp check failed (above)"; }
import json, sys
p = json.load(open(sys.argv[1]))["probes"][0]
if p["status"] == "ok":
    print("container-check: this engine's default seccomp profile allows io_uring; storage.read ran")
else:
    assert "seccomp=unconfined" in p.get("reason", ""), f"storage.read {p['status']} without the seccomp hint: {p.get('reason')}"
    print("container-check: storage.read skipped:", p["reason"])
EOF

step "GPU probes in a GPU-less container are skipped with the reason"
podman_run -v "$work/results:/results" "$image" run --only 'gpu.*' --level quick --format json --out /results/gpu.json >/dev/null 2>"$work/gpu.log" || true
python3 - "$work/results/gpu.json" <<'EOF' || { cat "$work/gpu.log"; fail "GPU probe checks failed (above)"; }
import json, sys
probes = json.load(open(sys.argv[1]))["probes"]
assert probes, "no gpu.* probe planned"
for p in probes:
    assert p["status"] == "skipped" and p.get("reason"), f"{p['id']}: {p['status']} without a skip reason"
print("container-check:", len(probes), "GPU probes skipped, e.g.", probes[0]["id"] + ":", probes[0]["reason"])
EOF

step "cgroup limits: --cpus 1 --memory 2g are what env records"
if podman_run --cpus 1 --memory 2g "$image" env --format json >"$work/limits.json" 2>"$work/limits.log"; then
  python3 - "$work/limits.json" <<'EOF' || fail "limit checks failed (above)"
import json, sys
c = json.load(open(sys.argv[1]))["container"]
assert c["cpu_limit"] == 1.0, f"cpu_limit {c['cpu_limit']}, expected 1.0 ({c})"
assert c["memory_limit_bytes"] == 2 << 30, f"memory_limit_bytes {c['memory_limit_bytes']}, expected 2 GiB"
assert c["usable_cores"] == 1 and c["usable_ram_bytes"] == 2 << 30, f"usable figures {c}"
print("container-check: limits", c["cpu_limit"], "CPU from", c["cpu_limit_source"], "and", c["memory_limit_bytes"], "bytes from", c["memory_limit_source"])
EOF
else
  # Rootless podman on cgroup v1 cannot set limits; that is the engine's refusal, not nodeaudit's.
  echo "container-check: limits not checked: podman refused --cpus/--memory: $(tail -1 "$work/limits.log")"
fi

step "bad input: --out /results/ without a results volume stops before measuring"
set +e
podman_run "$image" run --only 'host.config' --out /results/ >"$work/noout.log" 2>&1
rc=$?
set -e
[[ $rc -eq 2 ]] || { cat "$work/noout.log"; fail "missing results volume exited $rc, expected 2"; }
grep -q "does not exist" "$work/noout.log" || { cat "$work/noout.log"; fail "no clear error for the missing results volume"; }
grep -q "host.config" "$work/noout.log" && { cat "$work/noout.log"; fail "a probe ran before the error"; }
echo "container-check: $(cat "$work/noout.log")"

step "bad input: a data dir on the container's own layer is warned about"
podman_run --entrypoint /bin/sh "$image" -c 'mkdir -p /scratch && nodeaudit env --data-dir /scratch' >"$work/overlay.log" 2>&1 ||
  { cat "$work/overlay.log"; fail "nodeaudit env --data-dir /scratch failed"; }
grep -q "writable layer" "$work/overlay.log" || { cat "$work/overlay.log"; fail "no warning for a data dir on the overlay"; }
grep "writable layer" "$work/overlay.log"

step "all checks passed"
