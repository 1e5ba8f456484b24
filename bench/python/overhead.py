"""Per-call overhead of marg.convolve from Python against the same C++ call.

For each m = n in --sizes, on numpy float64 arrays and, when torch is
installed, float64 torch tensors on the CPU and (where there is a GPU) on CUDA,
three calls on the same memory are timed side by side: marg::convolve<double>
in a C++ loop (marg._core._time_cpp_convolve_arrays with wait=False),
marg.convolve(p, q) and marg.convolve(p, q, out=out). Where torch publishes
its DLPack C exchange API (torch >= 2.10), through which marg takes torch
tensors, a second row per size gives the path of older torch
(torch.utils.dlpack.to_dlpack and Tensor.new_empty), labelled "(to_dlpack)".
The exchange rows also time, in the same rounds, making and releasing one
torch tensor of the result's shape as marg.convolve makes it (C++), and
torch's own p + q from Python, for scale.

After one untimed warm-up round, --rounds interleaved rounds each time one
burst of --burst calls of each of the three, in an order that rotates from
round to round. The timed region is the host's time to issue a burst:
time.perf_counter around a plain loop with the garbage collector off, and the
C++ loop times itself with std::chrono::steady_clock. On CUDA all three run on
torch's current stream; the default burst is fewer calls than CUDA's launch
queue holds, so the host does not wait for the GPU inside it; the GPU is
waited for (torch.cuda.synchronize) after each timed region, before the next
burst. Host arrays need no wait. A row gives the medians over rounds of the
microseconds per call, and each overhead as the median over rounds of the
paired difference (the Python burst's time per call minus the C++ burst's in
the same round) with the interquartile range of that difference.

With --processes N > 1 the script runs itself in N child processes, one after
another, with the same arguments, and prints each child's row and the median
over processes of each column, so that differences between processes show.

    python bench/python/overhead.py [--sizes 4 16 64] [--rounds 40] [--burst 256]
                                    [--processes 1]
"""

import argparse
import gc
import itertools
import json
import operator
import os
import statistics
import subprocess
import sys
from time import perf_counter

import numpy as np

import marg


def timed(loop):
    """Runs loop() (which times itself) with the garbage collector off."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return loop()
    finally:
        if enabled:
            gc.enable()


def burst_py(conv, p, q, k):
    def loop():
        it = itertools.repeat(None, k)
        t0 = perf_counter()
        for _ in it:
            conv(p, q)
        return (perf_counter() - t0) / k

    return timed(loop)


def burst_out(conv, p, q, out, k):
    def loop():
        it = itertools.repeat(None, k)
        t0 = perf_counter()
        for _ in it:
            conv(p, q, out=out)
        return (perf_counter() - t0) / k

    return timed(loop)


def measure(p, q, out, rounds, k, stream=None, sync=None, result=False):
    """Seconds per call, one value per round, keyed cpp (the C++ loop), py
    (marg.convolve) and out (with out=); with `result` also result (making
    and releasing a new torch tensor as marg.convolve makes its result
    through torch's DLPack C exchange API) and add (torch's own p + q, for
    scale)."""
    cpp_time = marg._core._time_cpp_convolve_arrays
    conv = marg.convolve
    bursts = {
        "cpp": lambda: timed(lambda: cpp_time(p, q, out, k, stream, wait=False)),
        "py": lambda: burst_py(conv, p, q, k),
        "out": lambda: burst_out(conv, p, q, out, k),
    }
    if result:
        bursts["result"] = lambda: timed(lambda: marg._core._time_dlpack_exchange_result(out, k))
        bursts["add"] = lambda: burst_py(operator.add, p, q, k)
    calls = list(bursts)
    times = {c: [] for c in calls}
    for r in range(-1, rounds):  # round -1 warms up and is not kept
        for j in range(len(calls)):
            c = calls[(r + j) % len(calls)]
            t = bursts[c]()
            if sync:
                sync()  # after the timed region, before the next burst
            if r >= 0:
                times[c].append(t)
    return times


def summarize(kind, n, times):
    med = {c: statistics.median(t) for c, t in times.items()}
    row = {"arrays": kind, "n": n, **med}
    for c in ("py", "out"):
        d = [a - b for a, b in zip(times[c], times["cpp"])]
        q1, q3 = np.percentile(d, [25, 75])
        row[f"d_{c}"] = statistics.median(d)
        row[f"iqr_{c}"] = [float(q1), float(q3)]
    return row


def run(args):
    marg.set_backend("cpu")
    rows = []
    for n in args.sizes:
        p = np.full(n, 1.0 / n)
        q = np.full(n, 1.0 / n)
        out = np.empty(2 * n - 1)
        rows.append(summarize("numpy", n, measure(p, q, out, args.rounds, args.burst)))
    try:
        import torch
    except ImportError:
        return rows
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() and marg.cuda_available() else [])
    exchange = marg._core._dlpack_exchange_available(torch.zeros(1))
    for dev in devices:
        cuda = dev == "cuda"
        marg.set_backend("automatic" if cuda else "cpu")
        stream = torch.cuda.current_stream().cuda_stream if cuda else None
        sync = torch.cuda.synchronize if cuda else None
        # torch's DLPack C exchange API where torch publishes it, and the
        # path of older torch (to_dlpack, new_empty) beside it
        paths = [True] if not exchange else [True, False]
        for n in args.sizes:
            p = torch.full((n,), 1.0 / n, dtype=torch.float64, device=dev)
            q = torch.full((n,), 1.0 / n, dtype=torch.float64, device=dev)
            out = torch.empty(2 * n - 1, dtype=torch.float64, device=dev)
            for use in paths:
                was = marg._core._set_dlpack_exchange(use)
                try:
                    times = measure(p, q, out, args.rounds, args.burst, stream, sync,
                                    result=use and exchange)
                finally:
                    marg._core._set_dlpack_exchange(was)
                label = f"torch {dev}" + ("" if use else " (to_dlpack)")
                rows.append(summarize(label, n, times))
    marg.set_backend("cpu")
    return rows


def us(x):
    return f"{x * 1e6:.3f}"


def iqr(r):
    return f"{r[0] * 1e6:.3f} to {r[1] * 1e6:.3f}" if r else ""


def cells(row):
    return [us(row["cpp"]), us(row["py"]), us(row["d_py"]), iqr(row.get("iqr_py")),
            us(row["out"]), us(row["d_out"]), iqr(row.get("iqr_out")),
            us(row["result"]) if row.get("result") is not None else "",
            us(row["add"]) if row.get("add") is not None else ""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 16, 64])
    ap.add_argument("--rounds", type=int, default=40, help="interleaved rounds (default 40)")
    ap.add_argument("--burst", type=int, default=256,
                    help="calls per timed burst, fewer than CUDA's launch queue holds (default 256)")
    ap.add_argument("--processes", type=int, default=1,
                    help="run in N child processes, one after another (default 1: this one)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # a child's output
    args = ap.parse_args()
    if args.rounds < 1 or args.burst < 1 or args.processes < 1:
        ap.error("--rounds, --burst and --processes must be at least 1")

    if args.processes == 1:
        rows = run(args)
        if args.json:
            print(json.dumps(rows))
            return
        procs = None
    else:
        child = [sys.executable, os.path.abspath(__file__), "--sizes", *map(str, args.sizes),
                 "--rounds", str(args.rounds), "--burst", str(args.burst), "--json"]
        # a child's rows are its last line of output
        procs = [json.loads(subprocess.run(child, stdout=subprocess.PIPE, text=True,
                                           check=True).stdout.splitlines()[-1])
                 for _ in range(args.processes)]

    print("backend: cpu for host arrays, automatic (CUDA) for CUDA tensors on torch's current "
          f"stream; microseconds per call, median of {args.rounds} interleaved rounds of "
          f"{args.burst} calls each (host time to issue them); overhead: median of the "
          "per-round differences from the C++ call, with their interquartile range; new torch "
          "result: making and releasing one torch tensor of the result's shape as marg.convolve "
          "makes it (torch's allocator through its DLPack C exchange API), timed in C++; torch "
          "p + q: torch's own addition of the two operands into a new tensor, from Python")
    head = ["C++ marg::convolve", "marg.convolve", "overhead", "overhead IQR", "with out=",
            "overhead", "overhead IQR", "new torch result", "torch p + q"]
    if procs is None:
        print("| arrays | m = n | " + " | ".join(head) + " |")
        print("|---" * (2 + len(head)) + "|")
        for row in rows:
            print(f"| {row['arrays']} | {row['n']} | " + " | ".join(cells(row)) + " |")
        return
    print("| arrays | m = n | process | " + " | ".join(head) + " |")
    print("|---" * (3 + len(head)) + "|")
    for i in range(len(procs[0])):
        group = [rows[i] for rows in procs]
        for k, row in enumerate(group, 1):
            print(f"| {row['arrays']} | {row['n']} | {k} | " + " | ".join(cells(row)) + " |")
        med = {c: statistics.median(r[c] for r in group)
               for c in ("cpp", "py", "d_py", "out", "d_out", "result", "add") if c in group[0]}
        print(f"| {group[0]['arrays']} | {group[0]['n']} | median | " + " | ".join(cells(med))
              + " |")


if __name__ == "__main__":
    main()
