# Round 40's second held-out set (seed 4041) for the refit large_double_few_taps:
# 40 double batches (2-512 problems x 2-48 taps x 6000-65536 outputs) whose large
# tiles fill their waves (396 slots: 3 blocks x 132 SMs) to >= 70 %, then 20 below.
import math, random
rng = random.Random(4041)
lu = lambda lo, hi: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
def draw(moved, n):
    out = []
    while len(out) < n:
        op = rng.choice("cg"); b, o, t = lu(2, 512), lu(6000, 65536), lu(2, 48)
        if op == "c" and o < t: continue
        if b * t * o > 3e9: continue
        tiles = b * ((o + 511) // 512); waves = (tiles + 395) // 396
        if (tiles / (waves * 396) >= 0.7) != moved: continue
        out.append(f"d {op} {b} {t} {o}")
    return out
print("\n".join(draw(True, 40) + draw(False, 20)))
