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
# (dpkg-dev, bzip2, xz-utils: `apt-get source jemalloc`, which the build
# compiles into its private allocator (cmake/marg_dependencies.cmake); python3
# and python3-numpy: the test that loads libmarg.so with ctypes after numpy;
# python3-venv and python3-dev: the Python package's venv and build;
# doxygen and graphviz: the API reference, checked by scripts/test; fftw: the
# accuracy comparison in bench/accuracy; pkg-config: the consumer tests;
# clang and its runtimes: the libFuzzer targets; clang-format: the format test;
# g++-aarch64-linux-gnu and qemu-user: the CPU suite on other CPUs, scripts/test-cpus;
# openmpi-bin and libopenmpi-dev: examples/sir over MPI ranks, example.sir.mpi)
MARG_PACKAGES=(cmake make g++ libeigen3-dev dpkg-dev bzip2 xz-utils catch2 libbenchmark-dev
  python3 python3-numpy python3-venv python3-dev
  doxygen graphviz libfftw3-dev pkg-config clang libclang-rt-14-dev clang-format libcli11-dev
  g++-aarch64-linux-gnu qemu-user openmpi-bin libopenmpi-dev)

# APT needs a deb-src entry for `apt-get source jemalloc`; when none is
# configured, one is added for each Debian `deb` source already there
marg_add_deb_src() {
  local f added=0
  shopt -s nullglob
  if grep -qsE '^(deb-src |Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/*; then
    shopt -u nullglob
    return 1
  fi
  for f in /etc/apt/sources.list.d/*.sources; do
    grep -q 'debian' "$f" || continue
    sed -E 's/^Types:.*$/Types: deb-src/' "$f" >"/etc/apt/sources.list.d/marg-src-$(basename "$f")"
    added=1
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] && grep -qE '^deb .*debian' "$f" || continue
    grep -E '^deb .*debian' "$f" | sed 's/^deb /deb-src /' >"/etc/apt/sources.list.d/marg-src-$(basename "$f" .list).list"
    added=1
  done
  shopt -u nullglob
  ((added))
}

marg_install_packages() {
  if ! command -v dpkg-query >/dev/null; then
    echo "note: not a Debian system; assuming ${MARG_PACKAGES[*]} are installed" >&2
    return 0
  fi
  local missing=() p update=0
  for p in "${MARG_PACKAGES[@]}"; do
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] ||
      missing+=("$p")
  done
  if ((EUID == 0)) && marg_add_deb_src; then
    echo "added deb-src entries to APT's sources (for apt-get source jemalloc)"
    update=1
  fi
  ((${#missing[@]} == 0 && update == 0)) && return 0
  local sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null || {
      echo "error: missing packages ${missing[*]}; run as root or install them" >&2
      return 1
    }
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  ((${#missing[@]} == 0)) && return 0
  echo "installing Debian packages: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
}

# configure (cheap when the folder exists: CMake keeps its cache and objects)
marg_configure() {
  cmake --preset "$MARG_PRESET" -B "$MARG_BUILD_DIR" -S "$MARG_ROOT" "$@"
}
