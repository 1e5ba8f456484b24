"""marg.convolve as a torch.autograd.Function: gradients by marg.convolve_grad_p/_q."""

import torch

from . import _core

__all__ = ["convolve", "Convolve"]


def _reduce_to(grad, shape):
    # sums the gradient over the batch axes along which the operand was broadcast
    if grad.shape == shape:
        return grad
    return grad.sum_to_size(shape)


class Convolve(torch.autograd.Function):
    """r = p (*) q over the last axis, leading axes broadcast as a batch."""

    @staticmethod
    def forward(ctx, p, q):
        ctx.save_for_backward(p, q)
        return _core.convolve(p.detach(), q.detach())

    @staticmethod
    def backward(ctx, g):
        p, q = ctx.saved_tensors
        g = g.contiguous()
        gp = gq = None
        if ctx.needs_input_grad[0]:
            gp = _reduce_to(_core.convolve_grad_p(g, q.detach(), p.shape[-1]), p.shape)
        if ctx.needs_input_grad[1]:
            gq = _reduce_to(_core.convolve_grad_q(g, p.detach(), q.shape[-1]), q.shape)
        return gp, gq


def convolve(p, q):
    """Differentiable PMF of x + y: p over x's support, q over y's (float32/float64 tensors,
    host or CUDA); the result has p.shape[-1] + q.shape[-1] - 1 values on its last axis."""
    return Convolve.apply(p, q)
