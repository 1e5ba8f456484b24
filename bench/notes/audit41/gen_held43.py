# Round 43's held-out set (seed 4301) for batch_audit::big_grad: 40 float
# gradients the rule moves if pairs or lane fits (257-1024 taps x 513-767
# outputs from 1500-8192 problems, taps + outputs <= 1150), then 12 it leaves
# (the same from 600-1499 problems).
import math, random
rng = random.Random(4301)
lu = lambda lo, hi: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
def draw(blo, bhi, n):
    out = []
    while len(out) < n:
        b, t, o = lu(blo, bhi), lu(257, 1024), lu(513, 767)
        if t + o > 1150 or b * t * o > 3e9: continue
        out.append(f"f g {b} {t} {o}")
    return out
print("\n".join(draw(1500, 8192, 40) + draw(600, 1499, 12)))
