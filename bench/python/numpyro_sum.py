"""NumPyro enumeration against libmarg on the model of examples/python/numpyro_sum.py.

For each size N (two latents, Binomial(N, .), so m = n = N + 1) and T days, it
times what NUTS evaluates at every step, the jitted log density and its
gradient, with both routes, and records peak memory; each point runs in its
own process (so that an out-of-memory failure of enumeration, which builds an
m x n x T table, ends only that point). Prints a markdown table, writes it to
--out (.md) with a plot (.png), and checks the log-likelihoods agree to 1e-10.

    python bench/python/numpyro_sum.py --sizes 16 32 64 128 256 512 1024 2048 --days 100 \
        --out build/numpyro_sum

Memory: on a GPU, the device's peak_bytes_in_use after the run (jax
memory_stats, which includes what libmarg's pool holds there only when it is
XLA's; libmarg's managed pool is not counted); on the CPU, XLA's memory
analysis of the compiled program (temporaries + arguments + outputs), which
does not count the few result-sized buffers libmarg allocates itself.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def one_point(route, size, days, repeats):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python"))
    import numpyro_sum as ex

    sizes = (size, size)
    y = ex.simulate(days, sizes, [0.3, 0.6], 0)
    y = jax.device_put(y)
    ll = ex.log_likelihood_enumerated if route == "enumeration" else ex.log_likelihood_marg
    f = jax.jit(jax.value_and_grad(lambda th: ll(y, sizes, [th[0], th[1]])))
    th = jnp.array([0.35, 0.55])
    t0 = time.perf_counter()
    value, grad = f(th)
    jax.block_until_ready(grad)
    compile_s = time.perf_counter() - t0
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(f(th))
        best = min(best, time.perf_counter() - t0)
    dev = jax.devices()[0]
    stats = dev.memory_stats() if dev.platform != "cpu" else None
    if stats:
        peak = stats.get("peak_bytes_in_use", 0)
    else:
        # XLA's own account of the compiled program: temporaries, arguments, outputs
        ma = f.lower(th).compile().memory_analysis()
        peak = ma.temp_size_in_bytes + ma.argument_size_in_bytes + ma.output_size_in_bytes
    return {"route": route, "size": size, "days": days, "seconds": best,
            "first_call_seconds": compile_s, "peak_bytes": int(peak),
            "log_likelihood": float(value), "device": f"{dev.platform} {dev.device_kind}"}


def run_point(route, size, days, repeats, timeout):
    cmd = [sys.executable, __file__, "--one", route, str(size), "--days", str(days),
           "--repeats", str(repeats)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"route": route, "size": size, "error": f"timeout {timeout} s"}
    if res.returncode != 0:
        tail = (res.stderr or res.stdout).strip().splitlines()
        oom = any("RESOURCE_EXHAUSTED" in l or "out of memory" in l.lower() or "MemoryError" in l
                  for l in tail)
        return {"route": route, "size": size,
                "error": "out of memory" if oom or res.returncode == -9 else
                (tail[-1] if tail else f"exit {res.returncode}")}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    ap.add_argument("--days", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--out", default="build/numpyro_sum")
    ap.add_argument("--from-json", help="table and plot from an earlier run's .json, no runs")
    ap.add_argument("--one", nargs=2, metavar=("ROUTE", "SIZE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_point(args.one[0], int(args.one[1]), args.days, args.repeats)))
        return

    rows = []
    enum_alive = True
    if args.from_json:
        with open(args.from_json) as fh:
            rows = [(r["size"], r["enumeration"], r["libmarg"]) for r in json.load(fh)]
        args.sizes = []
        args.days = rows[0][2].get("days", args.days)
    for size in args.sizes:
        e = run_point("enumeration", size, args.days, args.repeats, args.timeout) \
            if enum_alive else {"route": "enumeration", "size": size, "error": "skipped (OOM below)"}
        if "error" in e and "memory" in e["error"]:
            enum_alive = False
        m = run_point("libmarg", size, args.days, args.repeats, args.timeout)
        rows.append((size, e, m))
        print(json.dumps(e), json.dumps(m), file=sys.stderr, flush=True)

    device = next((r.get("device") for _, a, b in rows for r in (a, b) if "device" in r), "?")
    lines = [f"Device: {device}; T = {args.days} days; two latents Binomial(N, .), "
             "m = n = N + 1; jitted log density + gradient, best of "
             f"{args.repeats}; peak memory as in the script's docstring.", "",
             "| N | enumeration ms | enumeration peak MiB | libmarg ms | libmarg peak MiB "
             "| speedup | log-lik difference |",
             "|---|---|---|---|---|---|---|"]
    for size, e, m in rows:
        def cell(r, key, scale, fmt):
            return r["error"] if "error" in r else format(r[key] * scale, fmt)
        diff = "-"
        speed = "-"
        if "error" not in e and "error" not in m:
            diff = f"{abs(e['log_likelihood'] - m['log_likelihood']):.1e}"
            speed = f"{e['seconds'] / m['seconds']:.1f}x"
            assert abs(e["log_likelihood"] - m["log_likelihood"]) <= \
                1e-10 * max(1.0, abs(e["log_likelihood"])), (size, e, m)
        lines.append(f"| {size} | {cell(e, 'seconds', 1e3, '.3f')} | "
                     f"{cell(e, 'peak_bytes', 2**-20, '.3f')} | {cell(m, 'seconds', 1e3, '.3f')} | "
                     f"{cell(m, 'peak_bytes', 2**-20, '.3f')} | {speed} | {diff} |")
    text = "\n".join(lines)
    print(text)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".md", "w") as fh:
        fh.write(text + "\n")
    with open(args.out + ".json", "w") as fh:
        json.dump([{"size": s, "enumeration": e, "libmarg": m} for s, e, m in rows], fh, indent=1)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("matplotlib not installed: no plot", file=sys.stderr)
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for route, style in (("enumeration", "o-"), ("libmarg", "s-")):
        pts = [(size, e if route == "enumeration" else m) for size, e, m in rows]
        pts = [(size, r) for size, r in pts if "error" not in r]
        if not pts:
            continue
        xs = [s + 1 for s, _ in pts]
        ax1.loglog(xs, [r["seconds"] * 1e3 for _, r in pts], style, label=route)
        ax2.loglog(xs, [max(r["peak_bytes"], 1) / 2**20 for _, r in pts], style, label=route)
    ax1.set_xlabel("m = n (support of each latent)")
    ax1.set_ylabel("ms per log density + gradient")
    ax2.set_xlabel("m = n")
    ax2.set_ylabel("peak memory (MiB)")
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(f"NumPyro: enumeration vs libmarg, T = {args.days} ({device})")
    fig.tight_layout()
    fig.savefig(args.out + ".png", dpi=120)
    print(f"wrote {args.out}.md, .json, .png")


if __name__ == "__main__":
    main()
