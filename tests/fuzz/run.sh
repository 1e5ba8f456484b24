#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan + libFuzzer, CPU backend)
# in their own build folder and runs each one for a bounded time, starting
# from the seed corpus in tests/fuzz/corpus/<target> (read only; new inputs
# go to <build>/corpus/<target>). Exits non-zero on the first finding; the
# crashing input is left in <build>/artifacts/.
#
# usage: tests/fuzz/run.sh [seconds per target, default 60] [build folder, default build-fuzz]
# env:   MARG_FUZZ_JOBS (build jobs, default 2), MARG_FUZZ_TARGETS (default "numeric distributions"),
#        MARG_FUZZ_SEED (libFuzzer's -seed, default 1: a CI run repeats the same
#        mutations from the same corpus; 0 lets libFuzzer pick one)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
build=$(realpath -m "${2:-$root/build-fuzz}")
jobs=${MARG_FUZZ_JOBS:-2}
targets=${MARG_FUZZ_TARGETS:-numeric distributions}
san=address,undefined
mkdir -p "$build"

# the library, instrumented for coverage (fuzzer-no-link) and the sanitizers
cmake -S "$root" -B "$build/lib" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMARG_CUDA=OFF -DMARG_SANITIZE=$san \
  -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link -DMARG_BUILD_TESTS=OFF -DMARG_BUILD_EXAMPLES=OFF \
  -DMARG_BUILD_BENCH=OFF -DMARG_INSTALL=OFF >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build/lib" -j"$jobs" --target marg >"$build/build.log" 2>&1 ||
  { tail -50 "$build/build.log"; exit 1; }

flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,$san -fno-sanitize-recover=all
       -I"$root/numeric/include" -I"$root/distributions/include" -I"$root/libmarg/include")
for t in $targets; do
  src=$root/tests/fuzz/fuzz_$t.cpp
  if [[ ! -x $build/fuzz_$t || $src -nt $build/fuzz_$t || $build/lib/libmarg/libmarg.a -nt $build/fuzz_$t ||
        $root/tests/fuzz/fuzz_common.hpp -nt $build/fuzz_$t ]]; then
    clang++ "${flags[@]}" "$src" "$build/lib/libmarg/libmarg.a" -lpthread -ldl -o "$build/fuzz_$t"
  fi
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
for t in $targets; do
  mkdir -p "$build/corpus/$t" "$build/artifacts"
  log=$build/fuzz_$t.log
  start=$(date +%s)
  if "$build/fuzz_$t" -seed="${MARG_FUZZ_SEED:-1}" -max_total_time="$secs" -timeout=20 \
       -rss_limit_mb=4096 -max_len=4096 \
       -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" \
       "$build/corpus/$t" "$root/tests/fuzz/corpus/$t" >"$log" 2>&1; then
    result=ok
  else
    result=FINDING
    status=1
    grep -E "FUZZ FINDING|ERROR: |runtime error|SUMMARY" "$log" | head -20 || true
  fi
  execs=$(grep -oP 'stat::number_of_executed_units:\s*\K[0-9]+' "$log" || echo "?")
  echo "fuzz_$t: $result, $execs executions in $(( $(date +%s) - start )) s, corpus $(ls "$build/corpus/$t" | wc -l) files (log $log)"
done
exit $status
