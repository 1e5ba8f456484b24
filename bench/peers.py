#!/usr/bin/env python3
"""libmarg beside its peers, in one run: one markdown table and one PNG plot.

Full convolutions of random inputs in (0.01, 1] (the benchmarks' inputs), as
single problems (m = n = 2048, 65536) and batches (16384 x 64, 4096 x 512).
Each peer is timed in this process as the median over bursts of calls (a
burst lasts >= ~20 ms, the device synchronized at its end), and its error
is the largest relative error over sampled outputs against a long double
dot product (numpy.longdouble). libmarg, the published blog kernels and
cuFFT through libmarg's own harness come from Google Benchmark JSON written
by bench_cuda / bench_cpu in the same run (their time is the harness's
median, their error its max relative error).

  gpu: libmarg (bench_cuda), blog kernels v0/v3/v4 (bench_cuda, best of
       blocks 128/256/512), cuFFT (bench_cuda), cuDNN (torch conv1d),
       cuFFT through torch.fft, jax.numpy.convolve, cupy.convolve.
  cpu: libmarg (bench_cpu, one thread; with --lib libmarg.so also through
       its C API in this process, with its error), numpy.convolve,
       scipy.signal.convolve (direct), scipy.signal.fftconvolve.

A peer whose package is missing or that fails drops its column, not the run.

usage: bench/peers.py gpu --marg BENCH_CUDA_JSON [--out DIR] [--types float,double] [--quick]
       bench/peers.py cpu --marg BENCH_CPU_JSON  [--out DIR] [--types float,double] [--quick]
       bench/peers.py gpu --marg GPU_CHECK_LOG --no-peers --date D [--out DIR]
  --quick     the 2048 and 16384 x 64 shapes only (seconds, for tests)
  --no-peers  tabulate and plot libmarg's harness rows alone (libmarg, blog
              kernels, cuFFT), e.g. from the summary a gpu-check run printed
In cpu mode every time is the CPU time of the calling thread (the peers are
single-threaded; libmarg's rows take bench_cpu's cpu_time of its one-thread
cases), so that a shared, loaded machine does not inflate the figures.
"""
import argparse
import datetime
import json
import os
import platform
import sys
import time

np = None  # numpy, imported in main() so that --help needs nothing installed

SHAPES = [("2048", 2048, 1), ("65536", 65536, 1), ("16384x64", 64, 16384), ("4096x512", 512, 4096)]
QUICK = {"2048", "16384x64"}


def inputs(n, batch, dtype, seed):
    rng = np.random.default_rng(seed)
    return (0.01 + 0.99 * rng.random((batch, n))).astype(dtype)


def sampled_error(a, b, out, samples=64):
    """Largest relative error of out (batch x (2n-1)) at sampled outputs."""
    rng = np.random.default_rng(7)
    batch, n = a.shape
    worst = 0.0
    out = np.asarray(out, dtype=np.longdouble).reshape(batch, 2 * n - 1)
    al, bl = a.astype(np.longdouble), b.astype(np.longdouble)
    for _ in range(samples):
        p, j = int(rng.integers(batch)), int(rng.integers(2 * n - 1))
        lo, hi = max(0, j - n + 1), min(j, n - 1)
        ref = np.dot(al[p, lo:hi + 1], bl[p, j - hi:j - lo + 1][::-1])
        worst = max(worst, float(abs(out[p, j] - ref) / ref))
    return worst


CLOCK = time.perf_counter  # cpu mode: time.thread_time (see main)
# PEERS_DEVICE=cpu runs the torch and jax peers on the CPU: a smoke test of
# this harness on a machine without a GPU (its figures are not cuDNN's)
DEVICE = os.environ.get("PEERS_DEVICE", "cuda")


def torch_sync():
    import torch
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def median_us(call, sync, budget_s=0.02, bursts=15):
    """Median time of one call in µs over bursts of calls (warm-up first)."""
    call()
    sync()
    t0 = CLOCK()
    call()
    sync()
    one = max(CLOCK() - t0, 1e-7)
    reps = max(1, min(1000, int(budget_s / one)))
    times = []
    for _ in range(bursts if one < 1 else 3):
        t0 = CLOCK()
        for _ in range(reps):
            call()
        sync()
        times.append((CLOCK() - t0) / reps)
    return 1e6 * float(np.median(times))


# --- GPU peers: each returns (µs, max relative error) ---------------------------------
def peer_cudnn(a, b):
    import torch
    import torch.nn.functional as F
    batch, n = a.shape
    dt = {np.float32: torch.float32, np.float64: torch.float64}[a.dtype.type]
    torch.backends.cudnn.enabled = True
    x = torch.tensor(a, dtype=dt, device=DEVICE).reshape(1, batch, n)
    w = torch.tensor(b[:, ::-1].copy(), dtype=dt, device=DEVICE).reshape(batch, 1, n)
    # conv1d is a correlation: reversed taps and n - 1 zeros each side give
    # the full convolution; groups = batch keeps the problems apart
    f = lambda: F.conv1d(x, w, padding=n - 1, groups=batch)
    us = median_us(f, torch_sync)
    return us, sampled_error(a, b, f().reshape(batch, -1).cpu().numpy())


def peer_torch_fft(a, b):
    import torch
    batch, n = a.shape
    dt = {np.float32: torch.float32, np.float64: torch.float64}[a.dtype.type]
    x, y = (torch.tensor(v, dtype=dt, device=DEVICE) for v in (a, b))
    L = 2 * n - 1
    f = lambda: torch.fft.irfft(torch.fft.rfft(x, L) * torch.fft.rfft(y, L), L)
    us = median_us(f, torch_sync)
    return us, sampled_error(a, b, f().cpu().numpy())


def peer_jax(a, b):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    if jax.default_backend() != "gpu" and DEVICE == "cuda":
        raise RuntimeError(f"jax runs on {jax.default_backend()}, not a GPU")
    batch, n = a.shape
    if batch == 1:
        x, y = jnp.asarray(a[0]), jnp.asarray(b[0])
        conv = jax.jit(lambda u, v: jnp.convolve(u, v, mode="full", precision="highest")[None, :])
    elif jax.default_backend() == "cpu":
        raise RuntimeError("XLA's CPU backend expands grouped convolutions (batch^2 memory)")
    else:
        # vmap of jnp.convolve lowers to one convolution of every problem
        # with every other (batch^2 outputs); jnp.convolve's own lowering,
        # with one feature group per problem, keeps them apart
        x = jnp.asarray(a).reshape(1, batch, n)
        y = jnp.asarray(b[:, ::-1].copy()).reshape(batch, 1, n)
        conv = jax.jit(lambda u, v: jax.lax.conv_general_dilated(
            u, v, (1,), [(n - 1, n - 1)], dimension_numbers=("NCH", "OIH", "NCH"),
            feature_group_count=batch, precision=jax.lax.Precision.HIGHEST).reshape(batch, -1))
    out = {}
    f = lambda: out.__setitem__("r", conv(x, y))
    us = median_us(f, lambda: out["r"].block_until_ready())
    return us, sampled_error(a, b, np.asarray(out["r"]))


def peer_cupy(a, b):
    import cupy as cp
    batch, n = a.shape
    if batch > 1:
        raise RuntimeError("cupy.convolve takes one 1-D pair per call")
    x, y = cp.asarray(a[0]), cp.asarray(b[0])
    f = lambda: cp.convolve(x, y)
    us = median_us(f, cp.cuda.Device().synchronize)
    return us, sampled_error(a, b, cp.asnumpy(f())[None, :])


# --- CPU peers ----------------------------------------------------------------------
def peer_numpy(a, b):
    batch, n = a.shape
    f = lambda: [np.convolve(a[p], b[p]) for p in range(batch)]
    us = median_us(f, lambda: None)
    return us, sampled_error(a, b, np.stack(f()))


def peer_scipy_direct(a, b):
    from scipy import signal
    batch, n = a.shape
    f = lambda: [signal.convolve(a[p], b[p], method="direct") for p in range(batch)]
    us = median_us(f, lambda: None)
    return us, sampled_error(a, b, np.stack(f()))


def peer_scipy_fft(a, b):
    from scipy import signal
    f = lambda: signal.fftconvolve(a, b, axes=1)
    us = median_us(f, lambda: None)
    return us, sampled_error(a, b, f())


def peer_marg_c(a, b):
    """libmarg through its C API (libmarg.so by ctypes), CPU backend, one thread."""
    import ctypes
    lib = ctypes.CDLL(LIB)
    lib.marg_set_backend(1)  # MARG_BACKEND_CPU
    batch, n = a.shape
    f32 = a.dtype == np.float32
    fn = lib.marg_convolve_batched_f32 if f32 else lib.marg_convolve_batched_f64
    ptr = ctypes.POINTER(ctypes.c_float if f32 else ctypes.c_double)
    i64 = ctypes.c_int64
    fn.argtypes = [ctypes.c_int, ctypes.c_int, ptr, ctypes.c_int, i64, ptr, ctypes.c_int, i64, ptr,
                   ctypes.c_int, i64, ctypes.c_int, ctypes.c_void_p]
    out = np.zeros((batch, 2 * n - 1), dtype=a.dtype)
    pa, pb, po = (v.ctypes.data_as(ptr) for v in (a, b, out))

    def f():
        if fn(n, n, pa, 1, n, pb, 1, n, po, 1, 2 * n - 1, batch, None) != 0:
            raise RuntimeError("marg_convolve_batched failed")
    us = median_us(f, lambda: None)
    return us, sampled_error(a, b, out)


LIB = None  # --lib: libmarg.so for the "libmarg (C API)" column
GPU_PEERS = [("cuDNN (torch conv1d)", peer_cudnn), ("cuFFT (torch.fft)", peer_torch_fft),
             ("jax.numpy.convolve", peer_jax), ("cupy.convolve", peer_cupy)]
CPU_PEERS = [("numpy.convolve", peer_numpy), ("scipy direct", peer_scipy_direct),
             ("scipy fftconvolve", peer_scipy_fft)]


def versions(mode):
    mods = ["numpy", "scipy"] if mode == "cpu" else ["torch", "jax", "cupy"]
    got = []
    for m in mods:
        try:
            got.append(f"{m} {__import__(m).__version__}")
        except Exception:  # noqa: BLE001 - a missing package only drops its column
            got.append(f"{m} missing")
    return ", ".join(got)


def log_rows(path):
    """The same rows from a scripts/gpu-check log (its printed summary table)."""
    import re
    rows, ctx = {}, {}
    pat = re.compile(r"^(\S+)/convolve\s+(float|double)\s+(\S+)\s+([\d.]+)\s+\S+\s+\S+\s+([\d.e+-]+)\s")
    for line in open(path):
        if line.startswith("NVIDIA") and "device" not in ctx:
            ctx["device"] = line.split(",")[0].strip()
        m = pat.match(line)
        if not m or m.group(3) not in {s[0] for s in SHAPES}:
            continue
        impl, t, s, us, err = m.group(1), m.group(2), m.group(3), float(m.group(4)), float(m.group(5))
        col = {"marg": "libmarg"}.get(impl, "blog (best)" if impl.startswith("blog_") else
                                      "cuFFT (C++)" if impl == "cufft" else None)
        cur = rows.setdefault((t, s), {}).get(col)
        if col and (cur is None or us < cur[0]):
            rows[(t, s)][col] = (us, err)
    return rows, ctx


def marg_rows(path, mode):
    """{(type, shape): {column: (µs, err)}} from a bench_cuda / bench_cpu JSON."""
    if mode == "gpu" and not path.endswith(".json"):
        return log_rows(path)
    d = json.load(open(path))
    rows = {}
    for b in d["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        name = b["name"]
        if mode == "gpu":
            parts = [p for p in name.split("/") if not p.startswith(("iterations:", "manual_time"))]
            if len(parts) != 4 or parts[1] != "convolve":
                continue
            impl, _, t, s = parts
            col = {"marg": "libmarg"}.get(impl, "blog (best)" if impl.startswith("blog_") else
                                          "cuFFT (C++)" if impl == "cufft" else None)
            if col is None:
                continue
            val = (b["us"], b.get("max_rel_err", float("nan")))
            cur = rows.setdefault((t, s), {}).get(col)
            if cur is None or val[0] < cur[0]:
                rows[(t, s)][col] = val
        else:
            # BM_marg<float, product::convolve>/n:65536/threads:1/real_time
            if not name.startswith(("BM_marg<", "BM_marg_batched<")) or "convolve" not in name:
                continue
            t = "float" if "<float" in name else "double"
            kv = dict(p.split(":") for p in name.split("/")[1:] if ":" in p)
            s = kv["n"] if "batch" not in kv else f"{kv['batch']}x{kv['n']}"
            th = int(kv.get("threads", 1))
            if th != 1:
                continue  # CPU time of the calling thread says nothing of a multi-threaded call
            us = b["cpu_time"] * {"ms": 1e3, "us": 1.0, "ns": 1e-3, "s": 1e6}[b.get("time_unit", "ns")]
            col = "libmarg, 1 thread" if th == 1 else f"libmarg, {th} threads"
            rows.setdefault((t, s), {})[col] = (us, float("nan"))
    return rows, d.get("context", {})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["gpu", "cpu"])
    ap.add_argument("--marg", help="bench_cuda / bench_cpu JSON of the same run")
    ap.add_argument("--out", default=".")
    ap.add_argument("--types", default="float,double")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--device", help="device name for the table (default: from the JSON or log)")
    ap.add_argument("--date", help="date of the run (default: from the JSON, else today)")
    ap.add_argument("--lib", help="cpu mode: libmarg.so, timed (and its error measured) through the C API")
    ap.add_argument("--no-peers", action="store_true",
                    help="tabulate --marg alone (e.g. a recorded gpu-check log) without timing peers here")
    args = ap.parse_args()
    global CLOCK, np
    import numpy as np
    if args.mode == "cpu":
        CLOCK = time.thread_time
    os.makedirs(args.out, exist_ok=True)
    table, ctx = ({}, {})
    if args.marg:
        try:
            table, ctx = marg_rows(args.marg, args.mode)
        except Exception as e:  # noqa: BLE001 - the peers still run without libmarg's rows
            print(f"libmarg rows: {type(e).__name__}: {e}", file=sys.stderr)
    peers = [] if args.no_peers else GPU_PEERS if args.mode == "gpu" else CPU_PEERS
    if args.lib and args.mode == "cpu" and not args.no_peers:
        global LIB
        LIB = os.path.abspath(args.lib)
        # one thread, so that the calling thread's CPU time is the call's
        os.environ["MARG_NUM_THREADS"] = "1"
        peers = [("libmarg (C API), 1 thread", peer_marg_c)] + peers
    shapes = [s for s in SHAPES if not args.quick or s[0] in QUICK]
    for tname in args.types.split(","):
        dtype = {"float": np.float32, "double": np.float64}[tname]
        for label, n, batch in shapes:
            a, b = inputs(n, batch, dtype, 1), inputs(n, batch, dtype, 2)
            for col, fn in peers:
                if args.mode == "cpu" and col == "scipy direct" and n * n * batch > 2**31:
                    continue  # minutes per call; numpy.convolve is the same direct loop
                try:
                    table.setdefault((tname, label), {})[col] = fn(a, b)
                    print(f"{col:<28}{tname:<7}{label:<10}{table[(tname, label)][col][0]:>12.2f} us",
                          file=sys.stderr)
                except Exception as e:  # noqa: BLE001 - a missing peer drops its column
                    print(f"{col}: {tname} {label}: {type(e).__name__}: {str(e)[:160]}", file=sys.stderr)
    write(args, table, ctx, shapes)


def write(args, table, ctx, shapes):
    cols = []
    for cells in table.values():
        cols += [c for c in cells if c not in cols]
    cols.sort(key=lambda c: (not c.startswith("libmarg"), c))
    ref = next((c for c in cols if c.startswith("libmarg")), None)
    device = args.device or (ctx.get("device") if args.mode == "gpu" else None)
    device = device or f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"
    date = (args.date or ctx.get("date") or datetime.datetime.now(datetime.timezone.utc).isoformat())[:10]
    clock = "CPU time of the calling thread" if args.mode == "cpu" else "wall clock"
    vers = "" if args.no_peers else f"; {versions(args.mode)}"
    lines = [f"Device: {device}; date: {date}{vers}.", "",
             f"µs per call (median, {clock}); in brackets the time over libmarg's"
             + (f" ({ref})" if ref else "") + "; then the max relative error.", "",
             "| type | shape | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for tname in args.types.split(","):
        for label, _, _ in shapes:
            cells = table.get((tname, label), {})
            base = cells.get(ref, (None,))[0] if ref else None
            out = []
            for c in cols:
                if c not in cells:
                    out.append("-")
                    continue
                us, err = cells[c]
                s = f"{us:,.0f}" if us >= 1000 else f"{us:.4g}"
                if base and c != ref:
                    s += f" ({us / base:.3g}x)"
                if err == err:  # not NaN
                    s += f", {err:.1e}"
                out.append(s)
            lines.append(f"| {tname} | {label} | " + " | ".join(out) + " |")
    md = os.path.join(args.out, f"peers_{args.mode}.md")
    open(md, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(md, file=sys.stderr)
    try:
        plot(args, table, cols, shapes, device, date)
    except Exception as e:  # noqa: BLE001 - the table stands without the plot
        print(f"plot: {type(e).__name__}: {e}", file=sys.stderr)


def plot(args, table, cols, shapes, device, date):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    types = args.types.split(",")
    fig, axes = plt.subplots(1, len(types), figsize=(6 * len(types), 4.5), squeeze=False)
    for ax, tname in zip(axes[0], types):
        width = 0.8 / max(1, len(cols))
        for i, c in enumerate(cols):
            xs, ys = [], []
            for k, (label, _, _) in enumerate(shapes):
                cell = table.get((tname, label), {}).get(c)
                if cell:
                    xs.append(k + i * width)
                    ys.append(cell[0])
            ax.bar(xs, ys, width, label=c)
        ax.set_yscale("log")
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(shapes))])
        ax.set_xticklabels([s[0] for s in shapes])
        ax.set_ylabel("µs per call (log)")
        ax.set_title(f"full convolution, {tname}")
        ax.legend(fontsize=7)
    fig.text(0.01, 0.005, f"{device}; {date}; bench/peers.py {' '.join(sys.argv[1:])}",
             fontsize=7, family="monospace")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    png = os.path.join(args.out, f"peers_{args.mode}.png")
    fig.savefig(png, dpi=110)
    print(png, file=sys.stderr)


if __name__ == "__main__":
    main()
