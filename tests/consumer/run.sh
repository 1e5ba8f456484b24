#!/usr/bin/env bash
# Builds and runs the consumer projects against libmarg.
#   run.sh installed BUILD_DIR WORK_DIR   install BUILD_DIR into WORK_DIR/prefix, then
#                                         find_package (static and shared) and pkg-config
#   run.sh subdirectory SOURCE_DIR WORK_DIR   add_subdirectory of the sources (CPU-only build)
set -euo pipefail
mode=$1 from=$2 work=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
jobs=${MARG_JOBS:-2}
rm -rf "$work" && mkdir -p "$work"
build() {  # name project-dir cmake-args...
  local name=$1 dir=$2
  shift 2
  cmake -S "$here/$dir" -B "$work/$name" -DCMAKE_BUILD_TYPE=Release "$@" >"$work/$name.log" 2>&1 ||
    { cat "$work/$name.log"; exit 1; }
  cmake --build "$work/$name" --parallel "$jobs" >>"$work/$name.log" 2>&1 ||
    { cat "$work/$name.log"; exit 1; }
}
case $mode in
  installed)
    cmake --install "$from" --prefix "$work/prefix" >"$work/install.log"
    for link in marg shared; do
      build "cxx-$link" cxx -DCMAKE_PREFIX_PATH="$work/prefix" -DMARG_LINK=$link
      build "c-$link" c -DCMAKE_PREFIX_PATH="$work/prefix" -DMARG_LINK=$link
      "$work/cxx-$link/consumer"
      "$work/c-$link/consumer_c"
    done
    # the shared library must not bring jemalloc's malloc into the program
    if nm -D --defined-only "$work"/prefix/lib*/libmarg.so | grep -qwE "malloc|free|mallocx"; then
      echo "libmarg.so exports an allocator symbol" >&2
      exit 1
    fi
    # pkg-config, plain compiler command lines (shared, then static)
    export PKG_CONFIG_PATH="$(dirname "$(find "$work/prefix" -name marg.pc)")"
    cc -std=c99 -Wall -Wextra -Werror "$here/c/main.c" $(pkg-config --cflags --libs marg) -lm -o "$work/pc-shared"
    LD_LIBRARY_PATH="$(pkg-config --variable=libdir marg)" "$work/pc-shared"
    # static: the archive in place of -lmarg, linked by the C++ driver for its runtime
    libdir=$(pkg-config --variable=libdir marg)
    cc -std=c99 -Wall -Wextra -Werror -c "$here/c/main.c" $(pkg-config --cflags marg) -o "$work/main.o"
    c++ "$work/main.o" $(pkg-config --static --libs marg | sed "s|-lmarg|$libdir/libmarg.a|") \
      -lm -o "$work/pc-static"
    "$work/pc-static"
    # the complete C example of docs/embedding.md, as a reader would copy it
    awk '/^```c$/{on=1; next} /^```$/{on=0} on' "$here/../../docs/embedding.md" >"$work/embedding.c"
    cc -std=c99 -Wall -Wextra -Werror "$work/embedding.c" $(pkg-config --cflags --libs marg) -lm \
      -o "$work/embedding"
    LD_LIBRARY_PATH="$libdir" "$work/embedding"
    ;;
  subdirectory)
    build cxx-subdir cxx -DMARG_SOURCE_DIR="$from" -DMARG_CUDA=OFF
    "$work/cxx-subdir/consumer"
    build c-subdir c -DMARG_SOURCE_DIR="$from" -DMARG_CUDA=OFF
    "$work/c-subdir/consumer_c"
    # tests, examples and benchmarks default to off under add_subdirectory
    if [ -e "$work/cxx-subdir/marg/tests" ] || [ -e "$work/cxx-subdir/marg/bench" ]; then
      echo "tests or bench were configured under add_subdirectory" >&2
      exit 1
    fi
    ;;
  *) echo "usage: run.sh installed|subdirectory FROM WORK" >&2; exit 2 ;;
esac
echo "consumer $mode: ok"
