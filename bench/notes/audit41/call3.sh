#!/usr/bin/env bash
# Round 41, call 3 (held out; the rule bounded at 512 outputs). Build here first
# (repo root; X = o for main's library, m for main + the rule at 512):
#   cmake --build build-final -j2 && nvcc -O3 -std=c++20 -arch=sm_90a \
#     -I numeric/src/cuda -I numeric/include -I numeric/src -I build-final/numeric/include \
#     bench/notes/single/audit37.cu build-final/libmarg/libmarg.a \
#     build-final/marg_jemalloc/libmarg_jemalloc.a -ldl -lrt -lpthread -o build-hyb/a41X
# then, on the device (carry build-hyb and the packed build-final of main + the rule):
#   bash bench/notes/audit41/call3.sh
set -euo pipefail
shapes=bench/notes/audit41/shapes_held41b.txt
./build-hyb/a41o < "$shapes" > "$OUT/held41b_old.txt" 2>&1
./build-hyb/a41m < "$shapes" > "$OUT/held41b_new.txt" 2>&1
tar xzf build-pack/gc.tgz
export LD_LIBRARY_PATH=$PWD/build-final/runtime-libs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
./build-final/tests/numeric/test_numeric "batched: *" > "$OUT/tests41b.txt" 2>&1 || true
tail -3 "$OUT/tests41b.txt"
