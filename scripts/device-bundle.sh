#!/usr/bin/env bash
# Builds nodeaudit for a GPU machine that has a driver and the CUDA libraries (cuBLAS, cuBLASLt,
# NCCL: e.g. PyTorch's NVIDIA wheels) but none of the Debian -dev libraries nodeaudit links and no
# package registry. The bundle is self-contained apart from glibc and those CUDA libraries:
#   - Release, CUDA code for CUDA_ARCHS only (default 90: H100/H200), MPI left out (the GPU machine
#     has no MPI to launch ranks with; comm.host-fabric is listed as not built there);
#   - nodeaudit, the test CLI and the GPU-relevant test executables, stripped, at the same relative
#     paths as in the build tree (the tests find the CLI and the fixtures through absolute paths
#     compiled in: scripts/device-run.sh links those paths to the bundle and the checkout);
#   - every other shared library they need (liburing, fmt, hwloc, libjpeg-turbo, toml++, libstdc++,
#     ...) copied into lib/, found through an $ORIGIN run path set as DT_RPATH, which the loader
#     searches before LD_LIBRARY_PATH: the bundle always loads its own copies, and nothing else on
#     the machine (python3, torch) is given them;
#   - manifest.env: what it was built from and which CUDA libraries it expects on the machine.
# The bundle must stay under 60 MiB (a lent machine takes 64 MiB carried): a larger one is refused.
# Usage: scripts/device-bundle.sh [BUNDLE_DIR]    (default .device-bundle, git-ignored)
#        scripts/device-bundle.sh --from-build BUILD_DIR BUNDLE_DIR   (package what BUILD_DIR holds,
#        built already; for the dry run of the bundle on the test build)
# Knobs (environment): BUILD_DIR (default build-device), CUDA_ARCHS (default 90), JOBS.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
from_build=0
if [[ "${1:-}" == --from-build ]]; then
  from_build=1
  BUILD_DIR="${2:?usage: scripts/device-bundle.sh --from-build BUILD_DIR BUNDLE_DIR}"
  shift 2
  [[ -n "${1:-}" ]] || { echo "device-bundle: --from-build needs BUILD_DIR and BUNDLE_DIR" >&2; exit 2; }
fi
bundle="$(realpath -m "${1:-$root/.device-bundle}")"
build="$(realpath -m "${BUILD_DIR:-$root/build-device}")"
limit_bytes=$((60 << 20))
archs="${CUDA_ARCHS:-90}"
jobs="${JOBS:-$(nproc)}"
# The executables the device run needs: the CLI, the test CLI, and the tests that touch GPU code.
tests=(gpu_device_tests gpu_cli_tests gpu_logic_test pipeline_tests pipeline_cli_tests comm_math_test comm_engine_host_test)
targets=(nodeaudit nodeaudit-testbin "${tests[@]}")

say() { printf 'device-bundle: %s\n' "$*"; }
die() { printf 'device-bundle: %s\n' "$*" >&2; exit 2; }

case "$bundle" in
  "$root" | "$root/" | / | "$build"*) die "BUNDLE_DIR $bundle: must be a folder of its own (not the checkout, / or the build folder)" ;;
esac
if [[ -e "$bundle" && ! -f "$bundle/manifest.env" ]]; then
  die "BUNDLE_DIR $bundle exists and is not a bundle made by this script (no manifest.env): refusing to replace it"
fi
if ! command -v patchelf >/dev/null; then
  # Debian's package; installed here as install-deps.sh installs the build's packages.
  command -v apt-get >/dev/null && [[ $(id -u) -eq 0 ]] || die "patchelf is needed to set the bundle's run paths: apt-get install patchelf"
  say "installing patchelf (apt)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q patchelf >/dev/null ||
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q patchelf >/dev/null; } ||
    die "patchelf could not be installed with apt-get: install it and run this again"
fi
command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]] || die "no CUDA toolkit (nvcc) here: the bundle carries the GPU probes"

if ((from_build)); then
  [[ -f "$build/CMakeCache.txt" ]] || die "--from-build $build: not a configured build folder (no CMakeCache.txt)"
  archs="$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt")"
  say "packaging the build in $build as it is (CUDA archs $archs)"
else
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  say "configuring $build (Release, CUDA archs $archs, MPI off)"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DNODEAUDIT_CUDA=ON -DNODEAUDIT_MPI=OFF \
    -DNODEAUDIT_BUILD_BENCH=OFF "-DCMAKE_CUDA_ARCHITECTURES=$archs" "${launcher[@]}" >/dev/null
  say "building ${targets[*]}"
  cmake --build "$build" -j "$jobs" --target "${targets[@]}"
fi

# Build next to the final folder and swap at the end, so a failed run never leaves a half bundle.
mkdir -p "$(dirname "$bundle")"
staging="$(mktemp -d "$(dirname "$bundle")/.device-bundle-staging.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/lib"

# glibc comes from the machine (the bundle needs 2.36 or newer); the CUDA libraries and the driver
# come from the machine too. Everything else a bundled executable needs is copied.
from_machine='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libcuda|libcudart|libcublas|libcublasLt|libnccl|libnvidia-ml)\.so'
declare -A copied=()
copy_dependencies() {  # $1: an ELF file
  local soname path
  while read -r soname path; do
    [[ "$soname" =~ $from_machine ]] && continue
    [[ -n "${copied[$soname]:-}" ]] && continue
    [[ -f "$path" ]] || die "$1 needs $soname, which is not found here"
    copied[$soname]=1
    cp -L "$path" "$staging/lib/$soname"
    chmod u+w "$staging/lib/$soname"
    strip --strip-unneeded "$staging/lib/$soname"
    patchelf --force-rpath --set-rpath '$ORIGIN' "$staging/lib/$soname"
  done < <(ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3} $2 == "=>" && $3 == "not" {print $1, "missing"}')
}

executables=()
for target in "${targets[@]}"; do
  file="$(find "$build" -type f -name "$target" -perm -u+x -not -path '*/CMakeFiles/*' | head -n 1)"
  [[ -n "$file" ]] || die "built target $target not found under $build"
  relative="${file#"$build"/}"
  mkdir -p "$staging/$(dirname "$relative")"
  cp "$file" "$staging/$relative"
  strip "$staging/$relative"
  up="$(dirname "$relative" | sed -e 's#[^/][^/]*#..#g' -e 's#^\.\.$#..#')"
  [[ "$(dirname "$relative")" == "." ]] && rpath='$ORIGIN/lib' || rpath="\$ORIGIN/$up/lib"
  patchelf --force-rpath --set-rpath "$rpath" "$staging/$relative"
  copy_dependencies "$file"
  executables+=("$relative")
done
for lib in "$staging"/lib/*; do copy_dependencies "$lib"; done

cuda_libs="$(for relative in "${executables[@]}"; do ldd "$build/$relative"; done |
  awk '{print $1}' | grep -E '^lib(cudart|cublas|cublasLt|nccl)\.so' | sort -u | tr '\n' ' ')"
runtime="$("$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')"
{
  echo "# Written by scripts/device-bundle.sh; read by scripts/device-run.sh."
  echo "BUNDLE_COMMIT=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo -dirty)"
  echo "BUNDLE_BUILT_AT=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "BUNDLE_CUDA_RUNTIME=$runtime"
  echo "BUNDLE_CUDA_ARCHS='$archs'"
  echo "BUNDLE_CUDA_LIBS='${cuda_libs% }'"
  echo "BUNDLE_SOURCE_ROOT=$root"
  echo "BUNDLE_BUILD_DIR=$build"
  echo "BUNDLE_EXECUTABLES='${executables[*]}'"
  echo "BUNDLE_TESTS='$(for t in "${tests[@]}"; do printf '%s ' "$(find "$staging" -type f -name "$t" | sed "s#^$staging/##")"; done | sed 's/ $//')'"
} >"$staging/manifest.env"

size_bytes="$(du -sb "$staging" | cut -f1)"
((size_bytes < limit_bytes)) ||
  die "the bundle would be $((size_bytes >> 20)) MiB, not under the 60 MiB a lent machine carries: build for fewer CUDA archs (CUDA_ARCHS) or leave out tests"
rm -rf "$bundle"
mv "$staging" "$bundle"
trap - EXIT
say "bundle $bundle: $(du -sh "$bundle" | cut -f1) ($(ls "$bundle/lib" | wc -l) libraries); expects from the machine: glibc, ${cuda_libs:-no CUDA library}, the driver"
