#!/usr/bin/env bash
# Installs the Debian packages nodeaudit builds and tests with. Idempotent: packages already
# present are left alone, and the script says exactly what it installs.
# Usage: scripts/install-deps.sh [--with-bench | --build-only]
#   --with-bench  adds the reference tools used by bench/
#   --build-only  only what building the nodeaudit binary needs (no test, benchmark or report-browser
#                 packages): the container image's build stage uses it
set -euo pipefail

build_packages=(
  cmake make g++ pkg-config git
  liburing-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev libhwloc-dev
  libturbojpeg0-dev libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-venv chromium  # python3-venv: the torch venv host.dataloader is tested with (make torch-venv)
  prometheus  # for promtool: the Prometheus textfile is linted with `promtool check metrics` in the tests
  slurm-wlm munge  # a single-machine Slurm (slurmctld, slurmd, srun) that tests comm/README.md's Slurm lines
  patchelf  # the GPU bundle's run paths (scripts/device-bundle.sh), packaged by its dry-run test
)
bench_packages=(fio libjpeg-turbo-progs netpipe-openmpi likwid jq)
binary_only_packages=(
  cmake make g++ pkg-config
  liburing-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev libhwloc-dev
  libturbojpeg0-dev libopenmpi-dev openmpi-bin
)

wanted=("${build_packages[@]}")
case "${1:-}" in
  --with-bench) wanted+=("${bench_packages[@]}") ;;
  --build-only) wanted=("${binary_only_packages[@]}") ;;
  "") ;;
  *) echo "install-deps: unknown option '$1'; expected --with-bench or --build-only" >&2; exit 2 ;;
esac

missing=()
for pkg in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#wanted[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
# An install can fail on a stale package list; refresh once and retry.
if ! "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; then
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
echo "install-deps: done"
