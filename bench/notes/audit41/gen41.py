# Round 41's exploration region Q: float gradients (grad_p) beyond pairs_dispatch's
# bounds, 257-1024 taps x 257-767 outputs from 300-8192 problems (log-uniform), work
# (problems x taps x outputs) up to 3e9. Usage: gen41.py seed n
import math, random, sys
seed, n = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
lu = lambda lo, hi: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
out = []
while len(out) < n:
    b, t, o = lu(300, 8192), lu(257, 1024), lu(257, 767)
    if b * t * o > 3e9:
        continue
    out.append(f"f g {b} {t} {o}")
print("\n".join(out))
