"""libmarg from Python: exact marginalization of sums of discrete random variables.

Arrays (numpy, torch, jax, cupy; host or CUDA memory) are taken through DLPack
or the buffer protocol without a copy. The last axis is the support; leading
axes are a batch (a length-1 axis broadcasts). Results come back as the first
operand's array type on its device::

    import numpy as np, marg
    r = marg.convolve(np.array([0.5, 0.5]), np.array([0.2, 0.3, 0.5]))  # PMF of x + y
    x, y = marg.binomial(10, 0.3), marg.poisson(2.0)
    post = marg.condition_on_sum(x, y, 7)       # .log_likelihood .first .second

Autodiff: ``marg.torch.convolve`` (torch.autograd.Function) and
``marg.jax.convolve`` (jax.custom_vjp over an XLA FFI call; jit-able).
"""

from ._core import (
    BatchJointDraws,
    BatchJointDraws32,
    BatchSumPosterior,
    BatchSumPosterior32,
    CudaError,
    Pmf,
    Pmf32,
    PmfBatch,
    PmfBatch32,
    SumPosterior,
    SumPosterior32,
    bernoulli,
    beta_binomial,
    binomial,
    binomial_batch,
    categorical,
    categorical_log,
    condition_on_sum,
    condition_on_sum_log,
    convolve,
    convolve_grad_p,
    convolve_grad_q,
    cuda_available,
    cuda_compiled,
    cuda_unusable_reason,
    current_backend,
    delta,
    export_wisdom,
    forget_wisdom,
    geometric,
    import_wisdom,
    import_wisdom_text,
    log_convolve,
    log_prob_sum,
    log_prob_sum_grad,
    negative_binomial,
    planner_mode,
    poisson,
    sample_given_evidence,
    sample_given_sum,
    set_backend,
    set_planner_mode,
    sum,
    sum_grad,
    uniform_int,
    wisdom_text,
)

__version__ = "0.1.0"

__all__ = [
    "BatchJointDraws", "BatchJointDraws32", "BatchSumPosterior", "BatchSumPosterior32",
    "CudaError", "Pmf", "Pmf32", "PmfBatch", "PmfBatch32", "SumPosterior", "SumPosterior32",
    "bernoulli", "beta_binomial", "binomial", "binomial_batch", "categorical",
    "categorical_log", "condition_on_sum", "condition_on_sum_log", "convolve",
    "convolve_grad_p", "convolve_grad_q", "cuda_available", "cuda_compiled",
    "cuda_unusable_reason", "current_backend", "delta", "export_wisdom", "forget_wisdom",
    "geometric", "import_wisdom", "import_wisdom_text", "log_convolve", "log_prob_sum",
    "log_prob_sum_grad", "negative_binomial", "planner_mode", "poisson", "sample_given_evidence",
    "sample_given_sum", "set_backend", "set_planner_mode", "sum", "sum_grad", "uniform_int",
    "wisdom_text",
]


def __getattr__(name):
    # marg.torch and marg.jax import their framework only when first used
    if name in ("torch", "jax"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'marg' has no attribute {name!r}")
