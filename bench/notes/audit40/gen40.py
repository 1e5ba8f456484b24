# Round 40's random shapes (round 32's distribution, a new seed): float and double,
# convolutions and gradients, log-uniform 1-16384 problems (20 % single problems),
# 2-4096 taps, 8-65536 outputs, at most 3e9 multiply-adds. Prints audit37.cu's input
# lines "f|d c|g batch taps outputs".
import math, random, sys
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 20261123 + 40)
n = int(sys.argv[2]) if len(sys.argv) > 2 else 150
lu = lambda lo, hi: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
out = []
while len(out) < n:
    t = rng.choice("fd"); o = rng.choice("cg")
    batch = 1 if rng.random() < 0.2 else lu(1, 16384)
    taps, outs = lu(2, 4096), lu(8, 65536)
    if o == "c" and outs < taps:
        continue
    macs = batch * taps * (outs - taps + 1 if o == "c" else outs)
    if macs > 3e9:
        continue
    out.append(f"{t} {o} {batch} {taps} {outs}")
print("\n".join(out))
