"""An observed count that is the sum of discrete latents, in NumPyro, two ways.

Each day t a clinic reports y_t = a_t + b_t + c_t cases from three districts:
a_t ~ Binomial(N_a, theta_a), b_t ~ Binomial(N_b, theta_b),
c_t ~ Binomial(N_c, theta_c); only the total is observed. The rates theta have
Beta(2, 2) priors and are inferred with NUTS.

- ``model_enumerated``: the latents are discrete sample sites that NumPyro
  enumerates (``infer={"enumerate": "parallel"}``, funsor-based); the
  observation is a factor that is 0 where a + b + c = y_t, so enumeration
  builds the joint table of (a, b, c) per day and sums it.
- ``model_marg``: libmarg marginalizes the sum: the PMF of a + b + c is two
  calls of ``marg.jax.convolve`` (an XLA FFI call with a custom VJP, so NUTS
  differentiates through it), and the likelihood of y_t is read from it.

Both give the same log-likelihood (checked here to 1e-10 in float64) and the
same posterior. Run:

    python examples/python/numpyro_sum.py [--days 50] [--sizes 30 40 20] [--samples 500]

Needs jax, numpyro and funsor (pip install ".[test]" funsor) and marg
(pip install . from the repository root).
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS

import marg.jax as mj

jax.config.update("jax_enable_x64", True)


def binomial_pmf(n, theta):
    """Binomial(n, theta) on 0..n as a vector (differentiable in theta)."""
    k = jnp.arange(n + 1)
    return jnp.exp(dist.Binomial(n, theta).log_prob(k))


def model_enumerated(y, sizes):
    thetas = [numpyro.sample(f"theta_{i}", dist.Beta(2.0, 2.0)) for i in range(len(sizes))]
    with numpyro.plate("days", y.shape[0]):
        parts = [
            numpyro.sample(f"x_{i}", dist.Binomial(n, th), infer={"enumerate": "parallel"})
            for i, (n, th) in enumerate(zip(sizes, thetas))
        ]
        total = sum(parts)
        # the observation y = total as a factor: 0 where it holds, and -1e30
        # (not -inf) elsewhere, whose exp is exactly 0 as well; with -inf the
        # gradient of a logsumexp over an all-impossible slice is NaN
        numpyro.factor("y", jnp.where(total == y, 0.0, -1e30))


def model_marg(y, sizes):
    thetas = [numpyro.sample(f"theta_{i}", dist.Beta(2.0, 2.0)) for i in range(len(sizes))]
    pmf = binomial_pmf(sizes[0], thetas[0])
    for n, th in zip(sizes[1:], thetas[1:]):
        pmf = mj.convolve(pmf, binomial_pmf(n, th))  # the law of the running sum
    numpyro.factor("y", jnp.sum(jnp.log(pmf[y])))


def log_likelihood_enumerated(y, sizes, thetas):
    """log p(y | thetas) as NumPyro's enumeration computes it (funsor)."""
    from numpyro.contrib.funsor import enum, log_density

    params = {f"theta_{i}": jnp.asarray(t) for i, t in enumerate(thetas)}
    # one plate: enumerated dimensions start left of it, as NUTS sets them up
    lp, _ = log_density(enum(model_enumerated, first_available_dim=-2), (y, sizes), {}, params)
    prior = sum(dist.Beta(2.0, 2.0).log_prob(t) for t in params.values())
    return lp - prior


def log_likelihood_marg(y, sizes, thetas):
    from numpyro.infer.util import log_density

    params = {f"theta_{i}": jnp.asarray(t) for i, t in enumerate(thetas)}
    lp, _ = log_density(model_marg, (y, sizes), {}, params)
    prior = sum(dist.Beta(2.0, 2.0).log_prob(t) for t in params.values())
    return lp - prior


def simulate(days, sizes, thetas, seed):
    rng = np.random.default_rng(seed)
    return jnp.asarray(sum(rng.binomial(n, t, size=days) for n, t in zip(sizes, thetas)))


def run_nuts(model, y, sizes, samples, seed):
    mcmc = MCMC(NUTS(model), num_warmup=samples, num_samples=samples, progress_bar=False)
    t0 = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), y, sizes)
    elapsed = time.perf_counter() - t0
    return mcmc.get_samples(), elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=50)
    ap.add_argument("--sizes", type=int, nargs="+", default=[30, 40, 20])
    ap.add_argument("--samples", type=int, default=500, help="NUTS warmup and samples each")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sizes = tuple(args.sizes)
    truth = [0.3, 0.6, 0.45, 0.2, 0.7][: len(sizes)]
    y = simulate(args.days, sizes, truth, args.seed)
    print(f"{args.days} days, latents Binomial({', '.join(map(str, sizes))}), "
          f"true rates {truth}")

    for thetas in ([0.5] * len(sizes), truth):
        a = float(log_likelihood_enumerated(y, sizes, thetas))
        b = float(log_likelihood_marg(y, sizes, thetas))
        print(f"log p(y | theta={thetas}): enumeration {a:.12f}, libmarg {b:.12f}, "
              f"difference {abs(a - b):.2e}")
        assert abs(a - b) <= 1e-10 * max(1.0, abs(a)), "the two routes disagree"

    for name, model in (("enumeration", model_enumerated), ("libmarg", model_marg)):
        s, elapsed = run_nuts(model, y, sizes, args.samples, args.seed)
        means = ", ".join(f"{float(jnp.mean(s[f'theta_{i}'])):.3f}" for i in range(len(sizes)))
        print(f"NUTS with {name}: posterior means of theta [{means}] ({elapsed:.1f} s)")


if __name__ == "__main__":
    main()
