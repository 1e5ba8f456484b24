"""Shared helpers: independent references (numpy in float64 / plain loops) and
the array frameworks present on this machine."""

import importlib.util

import numpy as np
import pytest


def have(module):
    return importlib.util.find_spec(module) is not None


def reference_convolve(p, q):
    """r_i = sum_j p_j q_{i-j} for 1-D arrays, a plain loop in Python floats."""
    p = [float(v) for v in p]
    q = [float(v) for v in q]
    r = [0.0] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        for j, b in enumerate(q):
            r[i + j] += a * b
    return np.array(r)


def random_pmf(rng, size, batch=()):
    x = rng.random(batch + (size,))
    return x / x.sum(axis=-1, keepdims=True)


@pytest.fixture
def rng(request):
    seed = abs(hash(request.node.nodeid)) % (2**32)
    print(f"seed {seed}")
    return np.random.default_rng(seed)
