#!/usr/bin/env python3
"""CuPy on the expressions of `spade-bench cwise`, for the same-run comparison BENCHMARKS.md asks.

usage: bench/cwise_cupy.py [--n N] [--double] [--reps 20]
Prints one line per case: median ms over --reps runs (CUDA events, after 5 warm-ups) and GB/s
with the same byte counts as spade-bench cwise.
"""

import argparse
import statistics

import cupy as cp


def timed(fn, reps):
    for _ in range(5):
        fn()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 26)
    ap.add_argument("--double", action="store_true")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    dtype = cp.float64 if a.double else cp.float32
    size = cp.dtype(dtype).itemsize
    rng = cp.random.default_rng(1)
    x, y, w = (rng.random(a.n, dtype=dtype) * 2 - 1 for _ in range(3))
    out = cp.empty_like(x)

    @cp.fuse()
    def fused(x, y, w):
        return 2 * x + 3 * y - cp.sqrt(cp.abs(w)) * x

    @cp.fuse()
    def deep(x, y, w):
        return cp.tanh(cp.exp(-x * x) * 0.5 + cp.maximum(y, w)) / 3

    def report(name, ms, arrays):
        print(f"  cupy {name:<40} {ms:9.4f} ms {arrays * size * a.n / (ms * 1e-3) / 1e9:7.0f} GB/s")

    print(f"cupy {cp.__version__}: n = {a.n} {'double' if a.double else 'float'}")
    report("cp.fuse 2x+3y-sqrt(|w|)x", timed(lambda: fused(x, y, w), a.reps), 4)
    report("unfused 2x+3y-sqrt(|w|)x", timed(lambda: 2 * x + 3 * y - cp.sqrt(cp.abs(w)) * x, a.reps), 4)
    report("cp.fuse tanh(exp(-x^2)/2+max(y,w))/3", timed(lambda: deep(x, y, w), a.reps), 4)
    halves = cp.empty(a.n, dtype=cp.float16)
    cast_ms = timed(lambda: cp.copyto(halves, x, casting="same_kind"), a.reps)
    print(f"  cupy {'copyto float16 <- x':<40} {cast_ms:9.4f} ms {(size + 2) * a.n / (cast_ms * 1e-3) / 1e9:7.0f} GB/s")
    widen_ms = timed(lambda: cp.copyto(out, halves), a.reps)
    print(f"  cupy {'copyto x <- float16':<40} {widen_ms:9.4f} ms {(size + 2) * a.n / (widen_ms * 1e-3) / 1e9:7.0f} GB/s")
    report("cp.sum(x) + copy back", timed(lambda: float(cp.sum(x)), a.reps), 1)
    report("cp.sum((2x+3y)**2) unfused", timed(lambda: float(cp.sum((2 * x + 3 * y) ** 2)), a.reps), 2)
    del out


if __name__ == "__main__":
    main()
