# Round 40's region shapes: A double batches of few taps and long outputs (large
# against mid), B float batches of 193-1024 taps and 300-1023 outputs (mma against the
# tiles). Usage: gen_region.py A|B seed n
import math, random, sys
reg, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
lu = lambda lo, hi: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
out = []
while len(out) < n:
    o = rng.choice("cg")
    if reg == "A":
        t, batch, taps, outs = "d", lu(2, 512), lu(2, 256), lu(2048, 65536)
    elif reg == "B":
        t, batch, taps, outs = "f", lu(8, 4000), lu(193, 1024), lu(300, 1023)
    elif o == "c":
        t, batch, taps = "f", lu(200, 1000), lu(160, 512)
        outs = taps + lu(160, 1024) - 1
    else:
        t, batch, taps, outs = "f", lu(300, 8000), lu(200, 1024), lu(250, 1023)
    if o == "c" and outs < taps:
        continue
    if batch * taps * (outs - taps + 1 if o == "c" else outs) > 3e9:
        continue
    out.append(f"{t} {o} {batch} {taps} {outs}")
print("\n".join(out))
