"""Memory benchmark: gaussian.simulate streams over k, so its peak memory does not grow with depth.

Measures the peak of traced allocations (tracemalloc; NumPy reports its array buffers to
it) of one ``simulate`` call at depth 16 and at depth 256, same width and number of
streams, prints both and their ratio, and exits non-zero if the ratio exceeds 1.2.

The only memory that may grow with depth is the per-k output (two float64 arrays of
depth - 1 values: 4 KB at depth 256), against a working set of a few (n_samples, d)
arrays (0.8 MB each here). Usage: python benchmarks/bench_simulate_memory.py
"""
from __future__ import annotations

import sys
import tracemalloc

from resdecay_lib.maths.gaussian import simulate

D, N_SAMPLES, SEED = 512, 200, 0
SHALLOW, DEEP = 16, 256
MAX_RATIO = 1.2


def peak_bytes(depth: int) -> int:
    """Peak traced memory (bytes) of one simulate call at this depth."""
    tracemalloc.start()
    try:
        simulate(depth=depth, d=D, n_samples=N_SAMPLES, seed=SEED)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> int:
    simulate(depth=2, d=D, n_samples=N_SAMPLES, seed=SEED)   # warm up: imports, first-use caches
    shallow, deep = peak_bytes(SHALLOW), peak_bytes(DEEP)
    ratio = deep / shallow
    print(f"simulate(d={D}, n_samples={N_SAMPLES}) peak traced memory")
    print(f"  depth {SHALLOW:>4}: {shallow / 2**20:8.2f} MiB")
    print(f"  depth {DEEP:>4}: {deep / 2**20:8.2f} MiB")
    print(f"  ratio: {ratio:.3f} (limit {MAX_RATIO})")
    if ratio > MAX_RATIO:
        print("FAIL: peak memory grows with depth", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
