# Round 40's held-out shapes for the two rules: H1 float gradients of 300-8000
# problems x 193-1024 taps x 768-1023 outputs (mma_grad), C1 the same at 600-767
# outputs (unchanged); H2 double batches of 2-512 problems x 2-48 taps x 6000-65536
# outputs with >= 264 large tiles (large_double_few_taps), C2 the same with fewer
# tiles or 49-64 taps (unchanged). Usage: gen_held.py seed n1 nc1 n2 nc2
import math, random, sys
seed, n1, nc1, n2, nc2 = map(int, sys.argv[1:6])
rng = random.Random(seed)
lu = lambda lo, hi: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
def draw(n, f):
    out = []
    while len(out) < n:
        s = f()
        if s: out.append(s)
    return out
def h1(lo, hi):
    b, t, o = lu(300, 8000), lu(193, 1024), rng.randint(lo, hi)
    return None if b * t * o > 3e9 else f"f g {b} {t} {o}"
def h2(moved):
    op = rng.choice("cg")
    b, o = lu(2, 512), lu(6000, 65536)
    t = lu(2, 48) if moved or rng.random() < 0.5 else rng.randint(49, 64)
    if op == "c" and o < t: return None
    tiles = b * ((o + 511) // 512)
    if b * t * o > 3e9: return None
    if moved != (t <= 48 and tiles >= 264): return None
    return f"d {op} {b} {t} {o}"
lines = draw(n1, lambda: h1(768, 1023)) + draw(nc1, lambda: h1(600, 767)) + \
    draw(n2, lambda: h2(True)) + draw(nc2, lambda: h2(False))
print("\n".join(lines))
