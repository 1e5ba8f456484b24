"""marg.Pmf, factories, algebra, conditioning, sampling, gradients and PmfBatch
against closed forms and plain loops (math.comb, numpy in float64)."""

import math

import numpy as np
import pytest

import marg
from conftest import random_pmf, reference_convolve


def binom_pmf(n, p):
    return np.array([math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)])


def test_factories_match_closed_forms():
    b = marg.binomial(12, 0.3)
    assert (b.lower, b.upper, b.size, len(b)) == (0, 12, 13, 13)
    np.testing.assert_allclose(b.probs(), binom_pmf(12, 0.3), rtol=1e-13)
    assert b.mean() == pytest.approx(12 * 0.3, rel=1e-13)
    assert b.variance() == pytest.approx(12 * 0.3 * 0.7, rel=1e-12)
    assert b.cdf(3) == pytest.approx(binom_pmf(12, 0.3)[:4].sum(), rel=1e-13)
    assert b.log_prob(5) == pytest.approx(math.log(binom_pmf(12, 0.3)[5]), rel=1e-13)
    assert b.prob(13) == 0.0 and b.log_prob(-1) == -math.inf
    u = marg.uniform_int(-2, 3)
    np.testing.assert_allclose(u.probs(), np.full(6, 1 / 6), rtol=1e-15)
    assert u.lower == -2
    c = marg.categorical([1.0, 3.0], lower=5)
    np.testing.assert_allclose(c.probs(), [0.25, 0.75])
    assert c.lower == 5
    cl = marg.categorical_log([math.log(1.0), math.log(3.0)])
    np.testing.assert_allclose(cl.probs(), [0.25, 0.75], rtol=1e-15)
    assert marg.bernoulli(0.2).prob(1) == pytest.approx(0.2)
    assert marg.delta(7).probs().tolist() == [1.0] and marg.delta(7).lower == 7
    pois = marg.poisson(3.0, tail=1e-15)
    ks = np.arange(pois.lower, pois.upper + 1)
    ref = np.array([math.exp(k * math.log(3.0) - 3.0 - math.lgamma(k + 1)) for k in ks])
    assert 0 < pois.truncated_mass < 1e-14
    np.testing.assert_allclose(pois.probs(), ref / ref.sum(), rtol=1e-12)
    g = marg.geometric(0.4)
    assert g.prob(2) == pytest.approx(0.6**2 * 0.4, rel=1e-12)
    nbin = marg.negative_binomial(3.0, 0.5)
    assert nbin.mean() == pytest.approx(3.0, rel=1e-10)
    bb = marg.beta_binomial(5, 1.0, 1.0)      # uniform on 0..5
    np.testing.assert_allclose(bb.probs(), np.full(6, 1 / 6), rtol=1e-13)
    f = marg.binomial(8, 0.5, dtype="float32")
    assert isinstance(f, marg.Pmf32) and f.probs().dtype == np.float32
    with pytest.raises(ValueError):
        marg.categorical([0.0, 0.0])
    with pytest.raises(ValueError):
        marg.binomial(3, 1.5)
    with pytest.raises(ValueError, match="dtype"):
        marg.binomial(3, 0.5, dtype="int8")


def test_algebra_against_loops():
    x = marg.categorical([0.1, 0.6, 0.3], lower=2)
    y = marg.categorical([0.5, 0.25, 0.25], lower=-1)
    s = x + y
    assert s.lower == 1 and s.upper == 5
    np.testing.assert_allclose(s.probs(), reference_convolve(x.probs(), y.probs()), rtol=1e-14)
    d = x - y
    assert d.lower == 2 - 1 and d.upper == 4 + 1
    np.testing.assert_allclose(d.probs(), reference_convolve(x.probs(), y.probs()[::-1]), rtol=1e-14)
    n = -x
    assert (n.lower, n.upper) == (-4, -2)
    np.testing.assert_allclose(n.probs(), x.probs()[::-1])
    assert (x + 3).lower == 5 and (3 + x).lower == 5 and (x - 3).lower == -1
    assert (10 - x).lower == 6 and (10 - x).prob(6) == pytest.approx(0.3)
    t = marg.sum([x, y, x])
    np.testing.assert_allclose(
        t.probs(), reference_convolve(reference_convolve(x.probs(), y.probs()), x.probs()),
        rtol=1e-14)
    # binomials add: Bin(5, p) + Bin(7, p) = Bin(12, p)
    np.testing.assert_allclose((marg.binomial(5, 0.3) + marg.binomial(7, 0.3)).probs(),
                               binom_pmf(12, 0.3), rtol=1e-12)


def test_conditioning_hard_and_soft():
    x, y = marg.binomial(6, 0.4), marg.categorical([0.2, 0.5, 0.3], lower=1)
    p, q = binom_pmf(6, 0.4), np.array([0.2, 0.5, 0.3])
    k = 5
    joint = np.array([[p[i] * q[j] if i + 1 + j == k else 0.0 for j in range(3)]
                      for i in range(7)])
    z = joint.sum()
    assert marg.log_prob_sum(x, y, k) == pytest.approx(math.log(z), rel=1e-14)
    post = marg.condition_on_sum(x, y, k)
    assert post.log_likelihood == pytest.approx(math.log(z), rel=1e-14)
    np.testing.assert_allclose(
        [post.first.prob(i) for i in range(7)], joint.sum(axis=1) / z, rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(
        [post.second.prob(j + 1) for j in range(3)], joint.sum(axis=0) / z, rtol=1e-13)
    assert marg.condition_on_sum(x, y, 100).log_likelihood == -math.inf
    assert marg.condition_on_sum(x, y, 100).first.empty
    # soft evidence over the support 1..9 of x + y
    L = np.linspace(0.1, 1.0, 9)
    soft = marg.condition_on_sum(x, y, L.tolist())
    full = np.array([[p[i] * q[j] * L[i + j] for j in range(3)] for i in range(7)])
    assert soft.log_likelihood == pytest.approx(math.log(full.sum()), rel=1e-13)
    np.testing.assert_allclose(soft.first.probs(), full.sum(axis=1) / full.sum(), rtol=1e-12)
    np.testing.assert_allclose(soft.second.probs(), full.sum(axis=0) / full.sum(), rtol=1e-12)
    slog = marg.condition_on_sum_log(x, y, np.log(L).tolist())
    assert slog.log_likelihood == pytest.approx(soft.log_likelihood, rel=1e-13)


def test_sampling_frequencies():
    x, y = marg.binomial(4, 0.5), marg.binomial(4, 0.5)
    rng = np.random.default_rng(1)
    draws = [marg.sample_given_sum(x, y, 4, rng) for _ in range(4000)]
    assert all(a + b == 4 for a, b in draws)
    # given x + y = 4 with equal binomials, x is hypergeometric(8, 4, 4)
    hyp = np.array([math.comb(4, j) * math.comb(4, 4 - j) for j in range(5)]) / math.comb(8, 4)
    freq = np.bincount([a for a, _ in draws], minlength=5) / 4000
    np.testing.assert_allclose(freq, hyp, atol=0.03)
    s = [marg.binomial(10, 0.3).sample(rng) for _ in range(4000)]
    assert abs(np.mean(s) - 3.0) < 0.1
    with pytest.raises(ValueError, match="impossible"):
        marg.sample_given_sum(x, y, 50, rng)


def test_gradients_against_finite_differences():
    x, y = marg.categorical([0.2, 0.5, 0.3]), marg.categorical([0.6, 0.4])
    g = np.array([1.0, -2.0, 0.5, 3.0])
    gp, gq = marg.sum_grad(x, y, g.tolist())
    np.testing.assert_allclose(gp, [g[j:j + 2] @ [0.6, 0.4] for j in range(3)], rtol=1e-14)
    np.testing.assert_allclose(gq, [g[j:j + 3] @ [0.2, 0.5, 0.3] for j in range(2)], rtol=1e-14)
    lp, lq = marg.log_prob_sum_grad(x, y, 2)
    z = 0.5 * 0.4 + 0.3 * 0.6
    np.testing.assert_allclose(lp, [0.0, 0.4 / z, 0.6 / z], rtol=1e-14)
    np.testing.assert_allclose(lq, [0.3 / z, 0.5 / z], rtol=1e-14)


def test_pmf_batch_log_probs():
    # rows {t, 1 - t} + themselves: products below the type's range keep
    # their logs (closed forms in exact arithmetic through math.log)
    for cls, t, tol in ((marg.PmfBatch, 1e-200, 1e-14), (marg.PmfBatch32, 1e-30, 1e-6)):
        x = cls(np.array([[t, 1 - t], [0.25, 0.75]], dtype=np.float64 if tol < 1e-10 else np.float32))
        t = float(x.probs()[0, 0])              # the stored value
        s = x + x
        assert s.row_has_log_probs(0) and not s.row_has_log_probs(1)
        lp = s.log_probs()
        assert s.probs()[0, 0] == 0 and np.isfinite(lp[0]).all()
        want = [2 * math.log(t), math.log(2) + math.log(t) + math.log1p(-t), 2 * math.log1p(-t)]
        for k in range(2):
            assert lp[0, k] == pytest.approx(want[k], rel=tol)
            assert s.log_prob(0, k) == pytest.approx(want[k], rel=tol)
        np.testing.assert_allclose(lp[1], np.log([0.0625, 0.375, 0.5625]), rtol=tol)
        assert s.log_prob(0, 7) == -math.inf


def test_pmf_batch(rng):
    vals = random_pmf(rng, 5, (4,))
    xb = marg.PmfBatch(vals, lowers=[0, 1, 2, 3])
    yb = marg.PmfBatch([marg.binomial(3, 0.5)])          # one row shared by every row
    assert (xb.batch, xb.length, len(xb)) == (4, 5, 4)
    np.testing.assert_allclose(xb.probs(), vals, rtol=1e-15)
    s = xb + yb
    assert s.length == 8
    for b in range(4):
        np.testing.assert_allclose(s.probs()[b], np.convolve(vals[b], binom_pmf(3, 0.5)),
                                   rtol=1e-13)
        assert s.row(b).lower == b
    ks = [3, 4, 5, 100]
    ll = marg.log_prob_sum(xb, yb, ks)
    for b in range(3):
        ref = sum(vals[b][i] * binom_pmf(3, 0.5)[ks[b] - b - i]
                  for i in range(5) if 0 <= ks[b] - b - i <= 3)
        assert ll[b] == pytest.approx(math.log(ref), rel=1e-13)
    assert ll[3] == -math.inf
    post = marg.condition_on_sum(xb, yb, ks)
    np.testing.assert_allclose(post.log_likelihood, ll, rtol=1e-13)
    assert post.first.row(0).mean() <= 3
    L = rng.random((4, 8))
    soft = marg.condition_on_sum(xb, yb, L)
    for b in range(4):
        ref = np.convolve(vals[b], binom_pmf(3, 0.5)) @ L[b]
        assert soft.log_likelihood[b] == pytest.approx(math.log(ref), rel=1e-12)
    g = rng.standard_normal((4, 8))
    gp, gq = marg.sum_grad(xb, yb, g)
    assert gp.shape == (4, 5) and gq.shape == (4, 4)
    for b in range(4):
        np.testing.assert_allclose(gp[b], np.correlate(g[b], binom_pmf(3, 0.5), "valid"),
                                   rtol=1e-12)
    draws = marg.sample_given_sum(xb, yb, ks, np.random.default_rng(0))
    for b in range(3):
        assert draws.first[b] + draws.second[b] == ks[b]
    assert draws.log_likelihood[3] == -math.inf
    ev = marg.sample_given_evidence(xb, yb, L, np.random.default_rng(0))
    np.testing.assert_allclose(ev.log_likelihood, soft.log_likelihood, rtol=1e-12)
    bb = marg.binomial_batch([10, 20], [0.3, 0.6])
    row = bb.row(0).probs()                               # padded to the longer row
    lo = bb.row(0).lower
    np.testing.assert_allclose(row[:11 - lo], binom_pmf(10, 0.3)[lo:], rtol=1e-12)
    assert not row[11 - lo:].any()
    d = marg.PmfBatch(np.array([[1.0, 3.0]]), normalize=True)
    np.testing.assert_allclose(d.probs(), [[0.25, 0.75]])
    assert (-xb).row(1).upper == -1
    samples = xb.sample(np.random.default_rng(2), per_row=3)
    assert samples.shape == (12,)
