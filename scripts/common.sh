# Shared by scripts/run and scripts/test (sourced, not run).
# Settings, all optional:
#   MARG_PRESET     configure preset from CMakePresets.json (default: release)
#   MARG_BUILD_DIR  build folder (default: build/<preset>)
#   MARG_JOBS       parallel build and test jobs (default: 2)
set -euo pipefail

MARG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MARG_PRESET=${MARG_PRESET:-release}
MARG_BUILD_DIR=${MARG_BUILD_DIR:-$MARG_ROOT/build/$MARG_PRESET}
MARG_JOBS=${MARG_JOBS:-2}

# Debian packages the build needs; installed only when missing
# (doxygen and graphviz: the API reference, checked by scripts/test; fftw: the
# accuracy comparison in bench/accuracy; pkg-config: the consumer tests;
# clang and its runtimes: the libFuzzer targets; clang-format: the format test)
MARG_PACKAGES=(cmake make g++ libeigen3-dev libjemalloc-dev catch2 libbenchmark-dev
  doxygen graphviz libfftw3-dev pkg-config clang libclang-rt-14-dev clang-format)

marg_install_packages() {
  if ! command -v dpkg-query >/dev/null; then
    echo "note: not a Debian system; assuming ${MARG_PACKAGES[*]} are installed" >&2
    return 0
  fi
  local missing=() p
  for p in "${MARG_PACKAGES[@]}"; do
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] ||
      missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  local sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null || {
      echo "error: missing packages ${missing[*]}; run as root or install them" >&2
      return 1
    }
    sudo=(sudo)
  fi
  echo "installing Debian packages: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
}

# configure (cheap when the folder exists: CMake keeps its cache and objects)
marg_configure() {
  cmake --preset "$MARG_PRESET" -B "$MARG_BUILD_DIR" -S "$MARG_ROOT" "$@"
}
