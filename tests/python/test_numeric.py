"""marg.convolve, convolve_grad_p, convolve_grad_q, log_convolve on numpy arrays
against independent references (numpy.convolve in float64 and plain loops)."""

import re
import sys

import numpy as np
import pytest

import marg
from conftest import random_pmf, reference_convolve

SIZES = [(1, 1), (1, 7), (4, 4), (5, 3), (3, 11), (17, 13), (64, 1), (257, 100)]


@pytest.mark.parametrize("m,n", SIZES)
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-13), (np.float32, 1e-5)])
def test_convolve_matches_loop(rng, m, n, dtype, tol):
    p = random_pmf(rng, m).astype(dtype)
    q = random_pmf(rng, n).astype(dtype)
    r = marg.convolve(p, q)
    assert isinstance(r, np.ndarray) and r.dtype == dtype and r.shape == (m + n - 1,)
    ref = reference_convolve(p, q)
    np.testing.assert_allclose(r, ref, rtol=tol * max(m, n), atol=0)
    np.testing.assert_allclose(r, np.convolve(p.astype(np.float64), q.astype(np.float64)),
                               rtol=tol * max(m, n), atol=0)


@pytest.mark.parametrize("m,n", SIZES)
def test_gradients_match_numpy(rng, m, n):
    p, q = random_pmf(rng, m), random_pmf(rng, n)
    g = rng.standard_normal(m + n - 1)
    # df/dp_j = sum_i g_i q_{i-j}: the Jacobian of r = conv(p, q) transposed, built by loops
    jp = np.zeros((m + n - 1, m))
    for j in range(m):
        jp[j:j + n, j] = q
    jq = np.zeros((m + n - 1, n))
    for j in range(n):
        jq[j:j + m, j] = p
    np.testing.assert_allclose(marg.convolve_grad_p(g, q, m), jp.T @ g, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(marg.convolve_grad_q(g, p, n), jq.T @ g, rtol=1e-12, atol=1e-14)


def test_batch_and_broadcast(rng):
    p = random_pmf(rng, 6, (3, 4))
    q = random_pmf(rng, 5, (4,))         # broadcast over the first axis
    r = marg.convolve(p, q)
    assert r.shape == (3, 4, 10)
    for a in range(3):
        for b in range(4):
            np.testing.assert_allclose(r[a, b], np.convolve(p[a, b], q[b]), rtol=1e-13)
    q1 = random_pmf(rng, 5, (1, 1))       # a length-1 batch axis broadcasts (stride 0)
    r1 = marg.convolve(p, q1)
    assert r1.shape == (3, 4, 10)
    for a in range(3):
        for b in range(4):
            np.testing.assert_allclose(r1[a, b], np.convolve(p[a, b], q1[0, 0]), rtol=1e-13)
    g = rng.standard_normal((3, 4, 10))
    gp = marg.convolve_grad_p(g, q, 6)
    gq = marg.convolve_grad_q(g, p, 5)
    assert gp.shape == (3, 4, 6) and gq.shape == (3, 4, 5)
    for a in range(3):
        for b in range(4):
            np.testing.assert_allclose(gp[a, b], np.correlate(g[a, b], q[b], "valid"), rtol=1e-12)
            np.testing.assert_allclose(gq[a, b], np.correlate(g[a, b], p[a, b], "valid"),
                                       rtol=1e-12)


def test_strided_views_are_not_copied(rng):
    base = random_pmf(rng, 21, (4,))
    p = base[:, ::3]                      # stride 3 along the support, non-contiguous batch
    q = np.asfortranarray(random_pmf(rng, 5, (4,)))
    assert marg._core._data_ptr(p) == p.__array_interface__["data"][0]
    assert marg._core._data_ptr(q) == q.__array_interface__["data"][0]
    r = marg.convolve(p, q)
    for b in range(4):
        np.testing.assert_allclose(r[b], np.convolve(p[b], q[b]), rtol=1e-13)


def test_out_is_written_in_place(rng):
    p, q = random_pmf(rng, 7, (2,)), random_pmf(rng, 4, (2,))
    out = np.empty((2, 10))
    r = marg.convolve(p, q, out=out)
    assert r is out and r.__array_interface__["data"][0] == out.__array_interface__["data"][0]
    np.testing.assert_allclose(out[1], np.convolve(p[1], q[1]), rtol=1e-13)
    view = np.zeros((2, 20))[:, ::2]      # a strided output
    marg.convolve(p, q, out=view)
    np.testing.assert_allclose(view[0], np.convolve(p[0], q[0]), rtol=1e-13)
    with pytest.raises(ValueError, match="out must have"):
        marg.convolve(p, q, out=np.empty((2, 9)))


def test_result_owns_its_memory(rng):
    p, q = random_pmf(rng, 5), random_pmf(rng, 3)
    r = marg.convolve(p, q)
    del p, q
    r2 = r.copy()
    r[:] = 0                               # writable, independent of the inputs
    assert r2.sum() == pytest.approx(1.0, rel=1e-14)
    assert sys.getrefcount(r) >= 2


def test_buffer_protocol_and_empty_batch():
    import array

    p = array.array("d", [0.25, 0.75])
    r = marg.convolve(p, np.array([1.0]))
    assert isinstance(r, np.ndarray)
    np.testing.assert_allclose(r, [0.25, 0.75])
    e = marg.convolve(np.zeros((0, 3)), np.ones(2))
    assert e.shape == (0, 4)


def test_log_convolve_matches_log_of_loop(rng):
    a = np.log(random_pmf(rng, 9))
    b = np.log(random_pmf(rng, 6))
    ref = np.log(reference_convolve(np.exp(a), np.exp(b)))
    np.testing.assert_allclose(marg.log_convolve(a, b), ref, rtol=1e-13, atol=1e-13)
    # far below float64's range: exp(-800) underflows, the log-space sum does not
    lo = marg.log_convolve(a - 800.0, b - 800.0)
    np.testing.assert_allclose(lo, ref - 1600.0, rtol=1e-13)


def test_errors_are_python_exceptions():
    with pytest.raises(ValueError, match="float32 or float64"):
        marg.convolve(np.ones(3, dtype=np.int64), np.ones(3, dtype=np.int64))
    with pytest.raises(ValueError, match="dtypes differ"):
        marg.convolve(np.ones(3), np.ones(3, dtype=np.float32))
    with pytest.raises(ValueError, match="do not broadcast"):
        marg.convolve(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="m \\+ n - 1"):
        marg.convolve_grad_p(np.ones(5), np.ones(3), 4)
    with pytest.raises(ValueError, match="positive stride"):
        marg.convolve(np.ones(4)[::-1], np.ones(3))
    with pytest.raises(ValueError):
        marg.convolve(np.ones(0), np.ones(3))     # the library's own check (m >= 1)
    with pytest.raises(TypeError):
        marg.convolve("abc", np.ones(3))
    with pytest.raises(ValueError, match="binomial"):
        marg.binomial(-1, 0.5)                    # the library's message names the call
    assert issubclass(marg.CudaError, RuntimeError)


def test_backend_selection():
    assert marg.current_backend() in ("cpu", "cuda")
    marg.set_backend("cpu")
    try:
        assert marg.current_backend() == "cpu"
        np.testing.assert_allclose(marg.convolve(np.ones(2) / 2, np.ones(2) / 2), [0.25, 0.5, 0.25])
    finally:
        marg.set_backend("automatic")
    with pytest.raises(ValueError, match="backend"):
        marg.set_backend("tpu")
    if not marg.cuda_available():
        with pytest.raises(ValueError):
            marg.set_backend("cuda")


def test_cuda_unusable_reason():
    # a reason exactly when the CUDA backend is refused, and the refusal names it
    reason = marg.cuda_unusable_reason()
    assert marg.cuda_available() == (reason == "")
    if not marg.cuda_compiled():
        assert "no CUDA backend" in reason
    if reason:
        with pytest.raises(ValueError, match=re.escape(reason)):
            marg.set_backend("cuda")
        assert marg.current_backend() == "cpu"


def test_gil_is_released_during_compute(rng):
    # two threads each run a long convolution; with the GIL held they would
    # serialize, and a pure-Python counter in a third thread would not advance
    import threading

    p = random_pmf(rng, 50000)
    stop = threading.Event()
    ticks = [0]

    def count():
        while not stop.is_set():
            ticks[0] += 1

    t = threading.Thread(target=count)
    t.start()
    before = ticks[0]
    marg.convolve(p, p)
    after = ticks[0]
    stop.set()
    t.join()
    assert after - before > 1000


def test_wisdom_text_and_planner_mode():
    # the expected text is the wisdom format's specification, written out
    marg.forget_wisdom()
    try:
        header = ("# libmarg wisdom 1\n# capability multiprocessors features type product taps "
                  "outputs problems operands variant microseconds\n")
        assert marg.wisdom_text() == header
        entry = "89 58 generic float gradient 8 9 12 strided warp"
        marg.import_wisdom_text("# libmarg wisdom 1\n" + entry + " 7\n")
        assert marg.wisdom_text() == header + entry + " 7.000\n"
        with pytest.raises(ValueError, match="line 2"):
            marg.import_wisdom_text(
                "# libmarg wisdom 1\n" + entry.replace("warp", "quick") + " 7\n")
        with pytest.raises(ValueError, match="header"):
            marg.import_wisdom_text(entry + " 7\n")
        assert marg.wisdom_text().count("\n") == 3  # nothing of the bad texts imported
        assert marg.planner_mode() == "estimate"
        marg.set_planner_mode("measure")
        assert marg.planner_mode() == "measure"
        with pytest.raises(ValueError, match="estimate"):
            marg.set_planner_mode("fast")
        with pytest.raises(ValueError, match="estimate"):
            marg.set_planner_mode("deterministic")
    finally:
        marg.set_planner_mode("estimate")
        marg.forget_wisdom()
    assert marg.planner_mode() == "estimate"
    assert marg.wisdom_text().count("\n") == 2


def test_wisdom_file(tmp_path):
    entry = "86 84 generic double convolution 9 10 3 aligned small 12.500\n"
    path = tmp_path / "wisdom.txt"
    marg.forget_wisdom()
    try:
        marg.import_wisdom_text("# libmarg wisdom 1\n" + entry)
        want = marg.wisdom_text()
        assert want.endswith(entry)
        marg.export_wisdom(path)  # os.PathLike
        assert path.read_text() == want
        marg.forget_wisdom()
        assert entry not in marg.wisdom_text()
        marg.import_wisdom(str(path))  # str
        assert marg.wisdom_text() == want
        # paths that cannot be read or written are named
        missing = tmp_path / "missing.txt"
        with pytest.raises(ValueError, match=re.escape(str(missing))):
            marg.import_wisdom(missing)
        nowhere = tmp_path / "no-such-folder" / "w.txt"
        with pytest.raises(ValueError, match=re.escape(str(nowhere))):
            marg.export_wisdom(nowhere)
        assert not nowhere.exists()
        # a bad file: its path and line named, nothing imported
        path.write_text("# libmarg wisdom 1\n" + entry + "90 1 hopper\n")
        marg.forget_wisdom()
        with pytest.raises(ValueError, match=re.escape(str(path)) + ".*line 3"):
            marg.import_wisdom(path)
        assert entry not in marg.wisdom_text()
    finally:
        marg.forget_wisdom()
