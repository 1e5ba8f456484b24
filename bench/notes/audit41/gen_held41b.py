# Round 41's second held-out set (seed 4121) for batch_audit::pairs_grad bounded at 512
# outputs: 60 float gradients the rule moves if pairs fits (257-1024 taps x 257-512
# outputs from 340-8192 problems, taps + outputs <= 1150), then 20 it now leaves
# (513-767 outputs, same taps and problems).
import math, random
rng = random.Random(4121)
lu = lambda lo, hi: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
def draw(olo, ohi, n):
    out = []
    while len(out) < n:
        b, t, o = lu(340, 8192), lu(257, 1024), lu(olo, ohi)
        if t + o > 1150 or b * t * o > 3e9: continue
        out.append(f"f g {b} {t} {o}")
    return out
print("\n".join(draw(257, 512, 60) + draw(513, 767, 20)))
