#!/usr/bin/env bash
# The first audit on a fresh Debian 12, timed from nothing to the verdict: a Debian 12 minbase container
# (debootstrap, no compiler, no make, no git) gets git and make, clones this repository's committed
# HEAD and runs `make audit JOBS=2`; every output line is timestamped, and the time is split into
# packages, configure, compile and link, and the audit. The CUDA toolkit is the host's, mounted
# read-only at /usr/local/cuda, as a GPU node's toolkit would be installed; no compile cache.
# Usage: bench/first_audit/first_audit_bench.sh [LOG]   (root, podman, runc; debootstrap for the base)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
log=${1:-/tmp/nodeaudit-first-audit.log}
base=localhost/nodeaudit-container-check-base:debian-12  # scripts/container-check.sh's base image
conf=$(mktemp /tmp/nodeaudit-first-audit-conf.XXXXXX)
trap 'rm -f "$conf"' EXIT
printf '[containers]\ndefault_ulimits = []\n' >"$conf"  # keep the caller's limits (podman's defaults are refused)
podman image exists "$base" ||
  { echo "first_audit_bench: no $base; make it with scripts/container-check.sh (debootstrap), or give one by that name" >&2; exit 2; }
[[ -d /usr/local/cuda ]] || echo "first_audit_bench: no /usr/local/cuda: the GPU probes will not be built" >&2
cuda_mount=()
[[ -d /usr/local/cuda ]] && cuda_mount=(-v /usr/local/cuda:/usr/local/cuda:ro)
echo "first_audit_bench: load before: $(cut -d' ' -f1-3 /proc/loadavg); log: $log"
# seccomp off: io_uring's system calls (the storage probes) are not in podman's default profile.
CONTAINERS_CONF=$conf podman --runtime runc run --rm --ulimit host --security-opt seccomp=unconfined \
  -v "$repo:/src:ro" "${cuda_mount[@]}" -v "$here/in_container.sh:/in_container.sh:ro" \
  --hostname fresh-debian12 "$base" /in_container.sh >"$log" 2>&1 || true
echo "first_audit_bench: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$log" <<'PY'
import sys
t = {}
marks = [("packages done", "install-deps: done"), ("configured", "Build files have been written"),
         ("linked", "Linking CUDA executable nodeaudit"), ("linked", "Linking CXX executable nodeaudit"),
         ("verdict", "Verdict for")]
for line in open(sys.argv[1], errors="replace"):
    parts = line.split(" ", 2)
    if line.startswith("@@"):
        t[parts[1]] = float(parts[2]); continue
    try: ts = float(parts[0])
    except ValueError: continue
    for key, text in marks:
        if text in line and key not in t: t[key] = ts
need = ["start", "prereq", "cloned", "packages done", "configured", "linked", "verdict"]
missing = [k for k in need if k not in t]
if missing:
    sys.exit(f"first_audit_bench: the run did not reach {missing[0]} (see {sys.argv[1]})")
steps = [("apt-get update, git and make", "start", "prereq"), ("clone", "prereq", "cloned"),
         ("packages (install-deps --build-only)", "cloned", "packages done"), ("configure", "packages done", "configured"),
         ("compile and link", "configured", "linked"), ("audit to the verdict", "linked", "verdict"),
         ("all: nothing to the verdict", "start", "verdict")]
for name, a, b in steps:
    print(f"{name:40s} {t[b] - t[a]:7.1f} s")
PY
