"""libmarg's pmf handles from Python through ctypes: libmarg.so is loaded at
run time (not linked), as Julia's ccall, R's dyn.load or a JNI wrapper load it.

Two binomial terms, their sum, the likelihood of an observed sum, the
posterior of the first term, a joint draw from caller-supplied uniforms (any
host generator drives the sampler), and one error path; every number is
checked against a closed form computed here with Python's own arithmetic.

usage: python3 handles.py PATH-TO-libmarg.so   (exit status 0 when all checks pass)
"""
import ctypes
import math
import random
import sys

lib = ctypes.CDLL(sys.argv[1])
c_pmf_p = ctypes.c_void_p  # marg_pmf*: opaque
i64, dbl = ctypes.c_int64, ctypes.c_double
P = ctypes.POINTER

lib.marg_last_error_message.restype = ctypes.c_char_p
lib.marg_pmf_binomial_f64.argtypes = [i64, dbl, P(c_pmf_p)]
lib.marg_pmf_add.argtypes = [c_pmf_p, c_pmf_p, P(c_pmf_p)]
lib.marg_pmf_support.argtypes = [c_pmf_p, P(i64), P(i64)]
lib.marg_pmf_probs_f64.argtypes = [c_pmf_p, P(dbl), i64]
lib.marg_pmf_log_prob_sum.argtypes = [c_pmf_p, c_pmf_p, i64, P(dbl)]
lib.marg_pmf_condition_on_sum.argtypes = [c_pmf_p, c_pmf_p, i64, P(dbl), P(c_pmf_p), P(c_pmf_p)]
lib.marg_pmf_prob_f64.argtypes = [c_pmf_p, i64, P(dbl)]
lib.marg_pmf_sample_given_sum.argtypes = [c_pmf_p, c_pmf_p, i64, dbl, P(i64), P(i64)]
lib.marg_pmf_destroy.argtypes = [c_pmf_p]
lib.marg_pmf_destroy.restype = None


class Pmf:
    """Owns one marg_pmf handle; frees it when collected."""

    def __init__(self, handle):
        self.h = handle

    def __del__(self):
        lib.marg_pmf_destroy(self.h)

    def support(self):
        lo, hi = i64(), i64()
        ok(lib.marg_pmf_support(self.h, ctypes.byref(lo), ctypes.byref(hi)))
        return lo.value, hi.value

    def probs(self):
        lo, hi = self.support()
        out = (dbl * (hi - lo + 1))()
        ok(lib.marg_pmf_probs_f64(self.h, out, len(out)))
        return list(out)

    def __add__(self, other):
        return Pmf(make(lambda p: lib.marg_pmf_add(self.h, other.h, p)))


def ok(status):
    if status != 0:
        raise RuntimeError(lib.marg_last_error_message().decode())


def make(call):
    h = c_pmf_p()
    ok(call(ctypes.byref(h)))
    return h


def binomial(n, p):
    return Pmf(make(lambda out: lib.marg_pmf_binomial_f64(n, p, out)))


def binomial_closed(n, p, k):
    return math.comb(n, k) * p**k * (1 - p) ** (n - k) if 0 <= k <= n else 0.0


failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what)


x, y = binomial(30, 0.2), binomial(12, 0.7)
z = x + y
check(z.support() == (0, 42), "support of x + y")
zp = z.probs()
worst = max(abs(zp[k] - sum(binomial_closed(30, 0.2, j) * binomial_closed(12, 0.7, k - j)
                            for j in range(31))) / zp[k] for k in range(43) if zp[k] > 1e-300)
check(worst < 1e-12, f"PMF of x + y (worst relative error {worst:.3g})")

k = 14
want = sum(binomial_closed(30, 0.2, j) * binomial_closed(12, 0.7, k - j) for j in range(31))
ll = dbl()
ok(lib.marg_pmf_log_prob_sum(x.h, y.h, k, ctypes.byref(ll)))
check(abs(ll.value - math.log(want)) < 1e-12, "log P(x + y = 14)")

first, second = c_pmf_p(), c_pmf_p()
ok(lib.marg_pmf_condition_on_sum(x.h, y.h, k, ctypes.byref(ll), ctypes.byref(first),
                                 ctypes.byref(second)))
first, second = Pmf(first.value), Pmf(second.value)
p5 = dbl()
ok(lib.marg_pmf_prob_f64(first.h, 5, ctypes.byref(p5)))
post5 = binomial_closed(30, 0.2, 5) * binomial_closed(12, 0.7, 9) / want
check(abs(p5.value - post5) < 1e-12 * post5, "P(x = 5 | x + y = 14)")

# joint draws given the sum from Python's generator: the frequency of x = 5
rng = random.Random(3)
xv, yv = i64(), i64()
hits, draws = 0, 20000
for _ in range(draws):
    ok(lib.marg_pmf_sample_given_sum(x.h, y.h, k, rng.random(), ctypes.byref(xv), ctypes.byref(yv)))
    check(xv.value + yv.value == k, "a draw sums to k")
    hits += xv.value == 5
sd = math.sqrt(post5 * (1 - post5) / draws)
check(abs(hits / draws - post5) < 5 * sd, f"frequency of x = 5: {hits / draws:.4f} vs {post5:.4f}")

# an error: status 1 (MARG_ERROR_INVALID_ARGUMENT), the message names the value
bad = c_pmf_p()
status = lib.marg_pmf_binomial_f64(5, 1.5, ctypes.byref(bad))
check(status == 1 and b"1.5" in lib.marg_last_error_message() and bad.value is None,
      "binomial(5, 1.5) is refused and writes nothing")

print(f"ctypes handles: log P(x + y = {k}) = {ll.value:.12f}, P(x = 5 | sum) = {p5.value:.6f}, "
      f"{'ok' if failures == 0 else f'{failures} FAILED'}")
sys.exit(0 if failures == 0 else 1)
