"""Arrays of other frameworks through DLPack (torch, jax, cupy; host and CUDA):
no copy of the inputs, results in the input's framework on its device, and the
autodiff wrappers marg.torch.convolve and marg.jax.convolve."""

import os

import numpy as np
import pytest

import marg
from conftest import have, random_pmf

# on the GPU machine scripts/gpu-check sets MARG_REQUIRE_FRAMEWORKS=1: a
# missing framework or GPU is then a failure, not a skip
REQUIRE = os.environ.get("MARG_REQUIRE_FRAMEWORKS") == "1"


def need(module):
    if not have(module):
        if REQUIRE:
            pytest.fail(f"{module} is required (MARG_REQUIRE_FRAMEWORKS=1) but not installed")
        pytest.skip(f"{module} is not installed (the GPU machine's gpu-check runs these tests)")
    return __import__(module)


def cuda_devices():
    devices = ["cpu"]
    if os.environ.get("MARG_TEST_CUDA") == "1" or REQUIRE:
        devices.append("cuda")
    return devices


@pytest.fixture(params=cuda_devices())
def device(request):
    if request.param == "cuda" and not marg.cuda_available():
        pytest.fail("MARG_TEST_CUDA/MARG_REQUIRE_FRAMEWORKS set but marg sees no usable GPU")
    return request.param


# ---- torch ----

@pytest.fixture(params=["exchange", "to_dlpack"])
def torch_path(request):
    """Both ways a torch tensor goes: torch's DLPack C exchange API (torch >=
    2.10 publishes it as torch.Tensor.__dlpack_c_exchange_api__) and
    torch.utils.dlpack.to_dlpack with Tensor.new_empty (older torch)."""
    torch = need("torch")
    published = hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
    # marg finds the table exactly where torch publishes one
    assert marg._core._dlpack_exchange_available(torch.zeros(1)) == published
    if request.param == "exchange" and not published:
        pytest.skip(f"torch {torch.__version__} publishes no DLPack C exchange API")
    was = marg._core._set_dlpack_exchange(request.param == "exchange")
    yield request.param
    marg._core._set_dlpack_exchange(was)


def test_torch_zero_copy_and_type(rng, device, torch_path):
    torch = need("torch")
    p = torch.tensor(random_pmf(rng, 7, (3,)), device=device)
    q = torch.tensor(random_pmf(rng, 4, (1,)), device=device)
    assert marg._core._data_ptr(p) == p.data_ptr()
    r = marg.convolve(p, q)
    assert isinstance(r, torch.Tensor) and r.device.type == device and r.dtype == torch.float64
    assert r.shape == (3, 10)
    ref = np.stack([np.convolve(p.cpu().numpy()[b], q.cpu().numpy()[0]) for b in range(3)])
    np.testing.assert_allclose(r.cpu().numpy(), ref, rtol=1e-13)
    out = torch.empty((3, 10), dtype=torch.float64, device=device)
    r2 = marg.convolve(p, q, out=out)
    assert r2 is out and r2.data_ptr() == out.data_ptr()
    np.testing.assert_allclose(out.cpu().numpy(), ref, rtol=1e-13)
    # a strided torch view
    pt = p.t().contiguous().t()
    assert marg._core._data_ptr(pt) == pt.data_ptr()
    np.testing.assert_allclose(marg.convolve(pt, q).cpu().numpy(), ref, rtol=1e-13)
    # a user's subclass of torch.Tensor is torch's: a torch result
    class Sub(torch.Tensor):
        pass

    rs = marg.convolve(p.as_subclass(Sub), q.as_subclass(Sub))
    assert isinstance(rs, torch.Tensor) and rs.device == p.device
    np.testing.assert_allclose(rs.cpu().numpy(), ref, rtol=1e-13)
    # an empty batch gives an empty result of the right shape
    r0 = marg.convolve(p[:0], q)
    assert isinstance(r0, torch.Tensor) and r0.shape == (0, 10) and r0.device == p.device
    if device == "cuda":
        # a new result comes from torch's caching allocator: torch counts it
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        big = marg.convolve(torch.zeros(1 << 16, dtype=torch.float64, device=device), q[0])
        assert torch.cuda.memory_allocated() - before >= big.numel() * 8
        del big


def test_torch_streams_and_refusals(rng, device, torch_path):
    torch = need("torch")
    p = torch.tensor(random_pmf(rng, 300, (4,)), device=device)
    q = torch.tensor(random_pmf(rng, 200, (1,)), device=device)
    ref = np.stack([np.convolve(p.cpu().numpy()[b], q.cpu().numpy()[0]) for b in range(4)])
    if device == "cuda":
        # on a side stream the work is ordered after the inputs' producer and
        # before the result's consumer on that stream, without a host wait
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            p2 = p * 2.0  # queued on s: marg must run after it
            r = marg.convolve(p2, q)
            r = r * 0.5
        s.synchronize()
        np.testing.assert_allclose(r.cpu().numpy(), ref, rtol=1e-13)
    # float32 stays float32; a non-float dtype and a tensor that needs grad are refused
    r32 = marg.convolve(p.float(), q.float())
    assert r32.dtype == torch.float32
    np.testing.assert_allclose(r32.cpu().numpy(), ref, rtol=2e-5, atol=1e-7)
    with pytest.raises(ValueError, match="float32 or float64"):
        marg.convolve(p.to(torch.int64), q)
    with pytest.raises(ValueError, match="requires grad"):
        marg.convolve(p.clone().requires_grad_(), q)
    with pytest.raises(ValueError, match="dtypes differ"):
        marg.convolve(p, q.float())
    with pytest.raises(ValueError, match="out must have"):
        marg.convolve(p, q, out=torch.empty((4, 498), dtype=torch.float64, device=device))
    # a sparse tensor has no DLPack form
    with pytest.raises(ValueError, match="dense tensor"):
        marg.convolve(p.to_sparse(), q)
    # every other value of the last axis: a stride of 2
    ps = p[:, ::2]
    ref2 = np.stack([np.convolve(ps.cpu().numpy()[b], q.cpu().numpy()[0]) for b in range(4)])
    np.testing.assert_allclose(marg.convolve(ps, q).cpu().numpy(), ref2, rtol=1e-13)


def test_torch_cuda_graph(rng, torch_path):
    """marg.convolve captured in a torch.cuda.graph replays on new inputs: its
    result comes from torch's allocator, which gives the capture's result a
    block that stays the graph's."""
    torch = need("torch")
    if "cuda" not in cuda_devices():
        pytest.skip("CUDA tests need MARG_TEST_CUDA=1 (scripts/gpu-check sets it)")
    p = torch.tensor(random_pmf(rng, 40, (3,)), device="cuda")
    q = torch.tensor(random_pmf(rng, 30, (1,)), device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the default stream, as torch asks
        for _ in range(3):
            marg.convolve(p, q)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        r = marg.convolve(p, q)
        r2 = r * 2.0
    for scale in (0.5, 3.0):
        p.mul_(scale)
        g.replay()
        torch.cuda.synchronize()
        pc, qc = p.cpu().numpy(), q.cpu().numpy()[0]
        ref = np.stack([np.convolve(pc[b], qc) for b in range(3)])
        np.testing.assert_allclose(r.cpu().numpy(), ref, rtol=1e-13)
        np.testing.assert_allclose(r2.cpu().numpy(), 2.0 * ref, rtol=1e-13)


def test_torch_out_of_memory(rng, torch_path):
    """A result torch's allocator cannot give raises torch's own
    OutOfMemoryError, and the next call works."""
    torch = need("torch")
    if "cuda" not in cuda_devices():
        pytest.skip("CUDA tests need MARG_TEST_CUDA=1 (scripts/gpu-check sets it)")
    p = torch.tensor(random_pmf(rng, 1024, (2048,)), device="cuda")  # 16 MiB
    q = torch.tensor(random_pmf(rng, 1024, (1,)), device="cuda")
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    total = torch.cuda.get_device_properties(0).total_memory
    # room for 8 MiB more than torch holds now; the result needs 32 MiB
    torch.cuda.set_per_process_memory_fraction((torch.cuda.memory_reserved() + (8 << 20)) / total)
    try:
        with pytest.raises(torch.OutOfMemoryError):
            marg.convolve(p, q)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
    r = marg.convolve(p[:2], q)
    ref = np.stack([np.convolve(p[b].cpu().numpy(), q[0].cpu().numpy()) for b in range(2)])
    np.testing.assert_allclose(r.cpu().numpy(), ref, rtol=1e-12)


def test_torch_autograd_gradcheck(rng, device, torch_path):
    torch = need("torch")
    import marg.torch as mt

    p = torch.tensor(random_pmf(rng, 5, (2,)), device=device, requires_grad=True)
    q = torch.tensor(random_pmf(rng, 3, (1,)), device=device, requires_grad=True)
    assert torch.autograd.gradcheck(mt.convolve, (p, q), eps=1e-6, atol=1e-9)
    p1 = torch.tensor(random_pmf(rng, 6), device=device, requires_grad=True)
    q1 = torch.tensor(random_pmf(rng, 6), device=device, requires_grad=True)
    assert torch.autograd.gradcheck(mt.convolve, (p1, q1), eps=1e-6, atol=1e-9)
    # against torch's own differentiation of conv1d (an independent route)
    r = mt.convolve(p1, q1)
    w = torch.arange(11.0, dtype=torch.float64, device=device)
    (r * w).sum().backward()
    p2, q2 = p1.detach().clone().requires_grad_(), q1.detach().clone().requires_grad_()
    ref = torch.nn.functional.conv1d(p2.view(1, 1, -1), q2.flip(0).view(1, 1, -1), padding=5)
    (ref.view(-1) * w).sum().backward()
    torch.testing.assert_close(p1.grad, p2.grad)
    torch.testing.assert_close(q1.grad, q2.grad)


# ---- jax ----

def _jax():
    jax = need("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def test_jax_arrays_through_dlpack(rng, device):
    jax = _jax()
    import jax.numpy as jnp

    dev = jax.devices("gpu" if device == "cuda" else "cpu")[0]
    # several sizes: jax copies a host buffer that is not 64-byte aligned when
    # it imports it, so a result wrapped before it is computed reads garbage
    # only for some allocations
    for m in range(1, 17):
        p = jax.device_put(jnp.asarray(random_pmf(rng, m, (2,))), dev)
        q = jax.device_put(jnp.asarray(random_pmf(rng, 3)), dev)
        r = marg.convolve(p, q)
        assert isinstance(r, jax.Array) and r.dtype == jnp.float64 and r.shape == (2, m + 2)
        assert list(r.devices())[0].platform == dev.platform
        pn, qn = np.asarray(p), np.asarray(q)
        np.testing.assert_allclose(np.asarray(r), [np.convolve(pn[b], qn) for b in range(2)],
                                   rtol=1e-13)


def test_jax_ffi_jit_and_grads(rng, device):
    jax = _jax()
    import jax.numpy as jnp
    from jax.test_util import check_grads

    import marg.jax as mj

    dev = jax.devices("gpu" if device == "cuda" else "cpu")[0]
    p = jax.device_put(jnp.asarray(random_pmf(rng, 7, (3,))), dev)
    q = jax.device_put(jnp.asarray(random_pmf(rng, 4)), dev)
    r = jax.jit(mj.convolve)(p, q)
    pn, qn = np.asarray(p), np.asarray(q)
    np.testing.assert_allclose(np.asarray(r), [np.convolve(pn[b], qn) for b in range(3)],
                               rtol=1e-13)
    check_grads(mj.convolve, (p, q), order=1, modes=("rev",), atol=1e-8, rtol=1e-8)
    # a loss under jit and grad, against jnp.convolve differentiated by JAX
    w = jnp.linspace(-1.0, 2.0, 10)

    def loss(f):
        return lambda a, b: jnp.sum(jnp.log(f(a, b) + 1.0) * w)

    ref = lambda a, b: jnp.stack([jnp.convolve(a[i], b) for i in range(3)])
    g1 = jax.jit(jax.grad(loss(mj.convolve), argnums=(0, 1)))(p, q)
    g2 = jax.grad(loss(ref), argnums=(0, 1))(p, q)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-14)
    # under vmap (the FFI call broadcasts the mapped axis)
    v = jax.vmap(mj.convolve, in_axes=(0, None))(p, q)
    np.testing.assert_allclose(np.asarray(v), np.asarray(r), rtol=1e-14)
    # float32
    r32 = jax.jit(mj.convolve)(p.astype(jnp.float32), q.astype(jnp.float32))
    assert r32.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(r32), np.asarray(r), rtol=1e-5)


# ---- cupy ----

def test_cupy_arrays(rng):
    if not (os.environ.get("MARG_TEST_CUDA") == "1" or REQUIRE):
        pytest.skip("cupy needs a GPU (MARG_TEST_CUDA=1 on the GPU machine)")
    cp = need("cupy")
    p = cp.asarray(random_pmf(rng, 9, (2,)))
    q = cp.asarray(random_pmf(rng, 5, (2,)))
    assert marg._core._data_ptr(p) == p.data.ptr
    r = marg.convolve(p, q)
    assert isinstance(r, cp.ndarray)
    pn, qn = cp.asnumpy(p), cp.asnumpy(q)
    np.testing.assert_allclose(cp.asnumpy(r), [np.convolve(pn[b], qn[b]) for b in range(2)],
                               rtol=1e-13)
