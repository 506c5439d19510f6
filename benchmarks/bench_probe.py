"""What the probe costs over a plain forward, measured side by side in one run.

A 12-layer Pre-LN model with d_model 256 on a batch of 16 x 256 tokens, the threads pinned
(resdecay_lib.nn.device.pin_threads; 2 by default). Three calls are timed in rounds:

* plain:        the model's no-grad forward;
* metrics only: ``probe.measure(model, idx, keep_stream=False)``, the per-layer metrics
  computed inside the hooks, the stream never stacked (what a caller who wants only the
  metrics runs);
* whole stream: ``layer_change(residual_stream(model, idx))``, the stream stacked as
  [L+1, B, T, D] float32 and then measured (what the book's chapters keep, for the Gram
  matrix and the other stream readers).

Each round times the three in a new order (a rotation), so that a slow spell of the machine
hits them alike; a round's ratio is its probe time over its own plain forward, and the
median over rounds is printed with the spread (min, quartiles, max). The metrics-only probe
passes if its median ratio is at most 1.05 plain forwards; the script exits 1 otherwise.
The first line names the machine: the CPU's model (resdecay_lib.training.store.cpu_model), the
kernels torch runs on it (torch.backends.cpu.get_cpu_capability) and the threads, since the
ratio depends on them (the hooks' float64 sums, one compiled loop per state, are memory-bound, the
forward compute-bound).

    .venv/bin/python benchmarks/bench_probe.py [--repeats 15] [--threads 2]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch

from resdecay_lib.nn.device import pin_threads
from resdecay_lib.nn.models import build
from resdecay_lib.nn.probe import layer_change, measure, residual_stream
from resdecay_lib.training.store import cpu_model

LIMIT = 1.05


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15, help="rounds (default 15)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    args = ap.parse_args(argv)
    pin_threads(args.threads)
    model = build("pre_ln", n_layer=12, d_model=256, n_head=8, vocab_size=512, block_size=256,
                  seed=0, device="cpu").eval()
    idx = torch.randint(0, 512, (16, 256), generator=torch.Generator().manual_seed(0))

    def plain():
        with torch.no_grad():
            model(idx)

    def metrics_only():
        measure(model, idx, batch_size=16, keep_stream=False)

    def whole_stream():
        layer_change(residual_stream(model, idx))

    calls = {"plain": plain, "metrics only": metrics_only, "whole stream": whole_stream}
    names = list(calls)
    for f in calls.values():          # warm-up: allocator, kernels
        f()
    times = {n: [] for n in names}
    for r in range(args.repeats):
        order = names[r % 3:] + names[:r % 3]
        for n in order:
            t0 = time.perf_counter()
            calls[n]()
            times[n].append(time.perf_counter() - t0)
    plain_t = np.array(times["plain"])
    print(f"CPU: {cpu_model()}; torch {torch.__version__} kernels {torch.backends.cpu.get_cpu_capability()}; "
          f"{torch.get_num_threads()} torch thread(s) of {os.cpu_count()} CPU(s)")
    print(f"12 layers, d 256, 16 x 256 tokens, {args.threads} thread(s), {args.repeats} rounds")
    print(f"{'plain no-grad forward':28s} median {statistics.median(times['plain']) * 1e3:7.1f} ms")
    ratios = {}
    for n in names[1:]:
        ratio = np.array(times[n]) / plain_t
        ratios[n] = float(np.median(ratio))
        q = np.quantile(ratio, [0, 0.25, 0.75, 1])
        print(f"{n:28s} median {statistics.median(times[n]) * 1e3:7.1f} ms; ratio to the plain forward "
              f"{ratios[n]:.3f} (min {q[0]:.3f}, quartiles {q[1]:.3f}-{q[2]:.3f}, max {q[3]:.3f})")
    ok = ratios["metrics only"] <= LIMIT
    print(f"metrics-only probe: ratio {ratios['metrics only']:.3f} (limit {LIMIT}) -> {'ok' if ok else 'TOO SLOW'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
