"""What the probe costs: capture the whole stream and compute layer_change, against a plain forward.

A 12-layer Pre-LN model with d_model 256 on a batch of 16 x 256 tokens, 2 threads pinned
(resdecay_lib.device.pin_threads). The two measurements are interleaved (plain forward,
probe, plain forward, probe, ...) so that a slow spell of the machine hits both, and the
ratio of the medians is printed. The probe passes if it costs at most 1.15 plain forwards;
the script exits 1 otherwise.

    .venv/bin/python benchmarks/bench_probe.py [--repeats 9]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from resdecay_lib.device import pin_threads
from resdecay_lib.models import build
from resdecay_lib.probe import layer_change, residual_stream

LIMIT = 1.15


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args(argv)
    pin_threads(2)
    model = build("pre_ln", n_layer=12, d_model=256, n_head=8, vocab_size=512, block_size=256,
                  seed=0, device="cpu").eval()
    idx = torch.randint(0, 512, (16, 256), generator=torch.Generator().manual_seed(0))

    def plain():
        with torch.no_grad():
            model(idx)

    def probe():
        layer_change(residual_stream(model, idx))

    plain(), probe()  # warm-up: allocator, kernels
    t_plain, t_probe = [], []
    for _ in range(args.repeats):
        for f, acc in ((plain, t_plain), (probe, t_probe)):
            t0 = time.perf_counter()
            f()
            acc.append(time.perf_counter() - t0)
    mp, mq = statistics.median(t_plain), statistics.median(t_probe)
    ratio = mq / mp
    print(f"plain no-grad forward   median {mp * 1e3:7.1f} ms  ({args.repeats} runs)")
    print(f"stream + layer_change   median {mq * 1e3:7.1f} ms  ({args.repeats} runs)")
    print(f"ratio {ratio:.3f} (limit {LIMIT}) -> {'ok' if ratio <= LIMIT else 'TOO SLOW'}")
    return 0 if ratio <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
