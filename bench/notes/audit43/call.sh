#!/usr/bin/env bash
# Round 43's held-out call (H100). Built here first from main (o) and main +
# the rule (m), as round 41's call3.sh says, into build-hyb/a43o and a43m,
# with test_numeric and check_cuda of main + the rule copied beside them;
# then, on the device with build-hyb carried: bash bench/notes/audit43/call.sh
set -euo pipefail
cd build-hyb
S=../bench/notes/audit41/shapes_held43.txt
./a43o < $S > $OUT/held43_old.txt 2>&1
./a43m < $S > $OUT/held43_new.txt 2>&1
./test_numeric "batched: *" > $OUT/tests43.txt 2>&1
./check_cuda > $OUT/check43.txt 2>&1
