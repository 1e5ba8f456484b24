"""Per-call overhead of marg.convolve from Python against the same C++ call.

Times marg.convolve(p, q) on numpy float64 arrays (and torch tensors on the CPU
and, where there is a GPU, on CUDA, when torch is installed) with timeit, and
marg::convolve<double> on the same memory in a C++ loop
(marg._core._time_cpp_convolve_arrays), side by side, for small m = n. On CUDA
both run on torch's current stream, as marg.convolve does for torch tensors,
and are waited for once after the loop.

    python bench/python/overhead.py [--sizes 4 16 64] [--calls 200000]
"""

import argparse
import timeit

import numpy as np

import marg


def best_of(fn, calls, repeat=5, sync=None):
    def loop():
        for _ in range(calls):
            fn()
        if sync:
            sync()

    return min(timeit.repeat(loop, number=1, repeat=repeat)) / calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 16, 64])
    ap.add_argument("--calls", type=int, default=200000)
    args = ap.parse_args()
    marg.set_backend("cpu")
    rows = []
    for n in args.sizes:
        p = np.full(n, 1.0 / n)
        q = np.full(n, 1.0 / n)
        out = np.empty(2 * n - 1)
        cpp = min(marg._core._time_cpp_convolve_arrays(p, q, out, args.calls) for _ in range(5))
        py = best_of(lambda: marg.convolve(p, q), args.calls)
        py_out = best_of(lambda: marg.convolve(p, q, out=out), args.calls)
        rows.append(("numpy", n, cpp, py, py_out))
    try:
        import torch

        # each framework row is timed against the C++ call on the same memory
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() and marg.cuda_available() else [])
        for dev in devices:
            if dev == "cuda":
                marg.set_backend("automatic")
            for n in args.sizes:
                p = torch.full((n,), 1.0 / n, dtype=torch.float64, device=dev)
                out = torch.empty(2 * n - 1, dtype=torch.float64, device=dev)
                calls = args.calls // 10
                cuda = dev == "cuda"
                stream = torch.cuda.current_stream().cuda_stream if cuda else None
                sync = torch.cuda.synchronize if cuda else None
                cpp = min(marg._core._time_cpp_convolve_arrays(p, p, out, calls, stream)
                          for _ in range(5))
                py = best_of(lambda: marg.convolve(p, p), calls, sync=sync)
                py_out = best_of(lambda: marg.convolve(p, p, out=out), calls, sync=sync)
                rows.append((f"torch {dev}", n, cpp, py, py_out))
            marg.set_backend("cpu")
    except ImportError:
        pass
    print("backend: cpu for host arrays, automatic (CUDA) for CUDA tensors on torch's current "
          "stream; microseconds per call (best of 5)")
    print("| arrays | m = n | C++ marg::convolve | marg.convolve | overhead | with out= | overhead |")
    print("|---|---|---|---|---|---|---|")
    for kind, n, cpp, py, py_out in rows:
        print(f"| {kind} | {n} | {cpp * 1e6:.3f} | {py * 1e6:.3f} | {(py - cpp) * 1e6:.3f} "
              f"| {py_out * 1e6:.3f} | {(py_out - cpp) * 1e6:.3f} |")


if __name__ == "__main__":
    main()
