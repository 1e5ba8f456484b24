#!/usr/bin/env bash
# Round 41, call 2 (held out) for branch round41-pairs-grad. Build here first
# (repo root; X = old for main's library, new for the branch's):
#   cmake --build build-final -j2 && nvcc -O3 -std=c++20 -arch=sm_90a \
#     -I numeric/src/cuda -I numeric/include -I numeric/src -I build-final/numeric/include \
#     bench/notes/single/audit37.cu build-final/libmarg/libmarg.a \
#     build-final/marg_jemalloc/libmarg_jemalloc.a -ldl -lrt -lpthread -o build-hyb/a41X
# then, on the device (carry build-hyb and the branch's packed build-final):
#   bash bench/notes/audit41/call2.sh
set -euo pipefail
shapes=bench/notes/audit41/shapes_held41.txt
./build-hyb/a41o < "$shapes" > "$OUT/held_old.txt" 2>&1
./build-hyb/a41n < "$shapes" > "$OUT/held_new.txt" 2>&1
tar xzf build-pack/gc.tgz
export LD_LIBRARY_PATH=$PWD/build-final/runtime-libs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
./build-final/tests/numeric/test_numeric "batched: *" > "$OUT/tests.txt" 2>&1 || true
tail -3 "$OUT/tests.txt"
