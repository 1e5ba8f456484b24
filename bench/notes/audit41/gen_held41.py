# Round 41's held-out set (seed 4111) for batch_audit::pairs_grad: 60 float gradients
# that the rule moves if pairs fits (257-1024 taps x 257-767 outputs from 340-8192
# problems, taps + outputs <= 1150), then 20 it leaves (the same from 200-339 problems).
import math, random
rng = random.Random(4111)
lu = lambda lo, hi: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
def draw(blo, bhi, n):
    out = []
    while len(out) < n:
        b, t, o = lu(blo, bhi), lu(257, 1024), lu(257, 767)
        if t + o > 1150 or b * t * o > 3e9: continue
        out.append(f"f g {b} {t} {o}")
    return out
print("\n".join(draw(340, 8192, 60) + draw(200, 339, 20)))
