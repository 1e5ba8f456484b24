"""marg.convolve for JAX: a jax.custom_vjp over XLA FFI calls, usable under jax.jit.

The handlers run inside XLA (host buffers on the CPU; in a CUDA build, device
buffers on XLA's stream), so no array leaves XLA and no Python runs per call.
"""

import jax
import jax.numpy as jnp

from . import _core

__all__ = ["convolve"]

try:
    _ffi = jax.ffi
except AttributeError:  # jax < 0.4.38
    from jax.extend import ffi as _ffi

if not _core.xla_ffi_targets:
    raise ImportError(
        "marg.jax: this build of marg has no XLA FFI handlers (jaxlib was not found when it "
        "was built); reinstall with jaxlib available: pip install ."
    )

_PLATFORMS = {"cpu": "cpu", "cuda": "CUDA"}
for _name, _capsule in _core.xla_ffi_targets.items():
    _op, _, _platform = _name.rpartition("_")
    _ffi.register_ffi_target(f"marg_{_op}", _capsule, platform=_PLATFORMS[_platform])


def _call(target, a, b, length):
    out = jax.ShapeDtypeStruct(a.shape[:-1] + (length,), a.dtype)
    return _ffi.ffi_call(target, out, vmap_method="broadcast_all")(a, b)


@jax.custom_vjp
def _convolve(p, q):
    return _call("marg_convolve", p, q, p.shape[-1] + q.shape[-1] - 1)


def _fwd(p, q):
    return _convolve(p, q), (p, q)


def _bwd(res, g):
    p, q = res
    return (
        _call("marg_convolve_grad_p", g, q, p.shape[-1]),
        _call("marg_convolve_grad_q", g, p, q.shape[-1]),
    )


_convolve.defvjp(_fwd, _bwd)


def convolve(p, q):
    """Differentiable PMF of x + y over the last axis (float32 or float64); leading axes
    broadcast as a batch (the gradient of a broadcast operand is summed by JAX)."""
    p = jnp.asarray(p)
    q = jnp.asarray(q)
    if p.dtype != q.dtype:
        raise ValueError(f"marg.jax.convolve: dtypes differ ({p.dtype} and {q.dtype})")
    if p.dtype not in (jnp.float32, jnp.float64):
        raise ValueError(f"marg.jax.convolve: dtype must be float32 or float64, not {p.dtype}")
    if p.ndim < 1 or q.ndim < 1:
        raise ValueError("marg.jax.convolve: p and q need a last axis (the support)")
    batch = jnp.broadcast_shapes(p.shape[:-1], q.shape[:-1])
    p = jnp.broadcast_to(p, batch + p.shape[-1:])
    q = jnp.broadcast_to(q, batch + q.shape[-1:])
    return _convolve(p, q)
