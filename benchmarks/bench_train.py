"""Speed of the library's training step, in one run, against two yardsticks.

1. A minimal reference loop of the same model, written here: the same batches, forward,
   cross-entropy, backward, AdamW step, nothing else (no clipping, no schedule, no NaN
   check, no progress bar). Ratio: library tokens/s over reference tokens/s (goal >= 0.95).
2. A matrix-multiply peak measured here, now, on the same thread count: the FLOP/s of a
   2048 x 2048 float32 matmul. Ratio: the library's achieved FLOP/s over that peak.

Training FLOPs per token: 6 N (N the parameters the tokens pass through: every matrix,
the token embedding excluded since it is a lookup) + 12 L T d for attention scores and
their weighted sums, forward and backward (Kaplan et al. 2020, arXiv:2001.08361, Table 1).

Library and reference runs alternate over several rounds and each keeps its fastest
round, so a noisy neighbour on a shared machine slows both alike. The library's AdamW runs
with ``fused=True`` (one kernel for the whole update; it agrees with the reference's default
loop to float32 rounding, see tests/training/test_train.py) and its clipping with ``foreach=True``; ``--compile`` also times the reference loop with ``torch.compile`` (its
first step, the compilation, is reported apart; measured on 2026-12-01 at the sweep's
configuration, 6 layers: 200 s to compile and 1.6 times slower per step than eager on this
CPU, so the library does not compile). Run:

    python benchmarks/bench_train.py [--threads 1] [--layers 6] [--steps 20] [--rounds 3] [--compile]
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace

import torch
import torch.nn.functional as F

from resdecay_lib.training.data import load_corpus, train_batch
from resdecay_lib.nn.device import manual_seed_all, pin_threads
from resdecay_lib.nn.models import build
from resdecay_lib.training.plan import TrainConfig
from resdecay_lib.training.train import train


def reference_loop(cfg: TrainConfig, vocab_size: int, batches, compiled: bool = False) -> float:
    """Seconds for the minimal loop over ``batches`` (model built outside the clock).

    ``compiled``: the model through ``torch.compile``; the first batch (the compilation) is
    run outside the clock, and its time stored in ``reference_loop.compile_s``."""
    manual_seed_all(cfg.seed)
    model = build(cfg.arch, cfg.n_layer, cfg.d_model, cfg.n_head, vocab_size, cfg.block_size,
                  seed=cfg.seed, device="cpu")
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(cfg.beta1, cfg.beta2),
                            weight_decay=cfg.weight_decay)
    if compiled:
        model = torch.compile(model)
        t0 = time.perf_counter()
        x, y = batches[0]
        logits = model(x)
        F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)).backward()
        opt.zero_grad(set_to_none=True)
        reference_loop.compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for x, y in batches:
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return time.perf_counter() - t0


def library_loop(cfg: TrainConfig) -> float:
    """Seconds for ``train(cfg)`` (model built outside the clock, as in the reference)."""
    corpus = load_corpus()
    manual_seed_all(cfg.seed)
    model = build(cfg.arch, cfg.n_layer, cfg.d_model, cfg.n_head, corpus.vocab.size,
                  cfg.block_size, seed=cfg.seed, device="cpu")
    t0 = time.perf_counter()
    train(cfg, model=model, progress=False)
    return time.perf_counter() - t0


def matmul_peak(threads: int, n: int = 2048, reps: int = 5) -> float:
    """FLOP/s of the fastest of ``reps`` n x n float32 matmuls (2 n^3 FLOPs each)."""
    pin_threads(threads)
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b  # warm-up
    best = min(_timed(lambda: a @ b) for _ in range(reps))
    return 2 * n ** 3 / best


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def flops_per_token(model, cfg: TrainConfig) -> float:
    n = sum(p.numel() for name, p in model.named_parameters()
            if p.dim() >= 2 and not name.startswith(("wte", "wpe")))
    return 6 * n + 12 * cfg.n_layer * cfg.block_size * cfg.d_model


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--compile", action="store_true", help="also time torch.compile (minutes)")
    args = ap.parse_args(argv)
    cfg = replace(TrainConfig(), n_layer=args.layers, steps=args.steps, warmup=2,
                  threads=args.threads, block_size=64, batch_size=16)
    pin_threads(cfg.threads)
    corpus = load_corpus()
    batches = [train_batch(corpus.train, s, cfg.batch_size, cfg.block_size, cfg.seed)
               for s in range(cfg.steps)]
    library_loop(replace(cfg, steps=2))  # warm-up of both paths (allocator, kernels)
    reference_loop(cfg, corpus.vocab.size, batches[:2])
    t_lib, t_ref = [], []
    for _ in range(args.rounds):
        t_lib.append(library_loop(cfg))
        t_ref.append(reference_loop(cfg, corpus.vocab.size, batches))
    tokens = cfg.steps * cfg.batch_size * cfg.block_size
    lib_tps, ref_tps = tokens / min(t_lib), tokens / min(t_ref)
    model = build(cfg.arch, cfg.n_layer, cfg.d_model, cfg.n_head, corpus.vocab.size,
                  cfg.block_size, device="cpu")
    fpt = flops_per_token(model, cfg)
    peak = matmul_peak(cfg.threads)
    print(f"model: {cfg.arch}, {cfg.n_layer} layers, d_model {cfg.d_model}, batch "
          f"{cfg.batch_size} x {cfg.block_size}, {cfg.steps} steps x {args.rounds} rounds, "
          f"{cfg.threads} thread(s)")
    print(f"{'':28s}{'tokens/s':>12s}{'GFLOP/s':>10s}{'ratio':>8s}")
    print(f"{'reference loop (AdamW only)':28s}{ref_tps:12.0f}{ref_tps * fpt / 1e9:10.2f}{1.0:8.3f}")
    print(f"{'library train()':28s}{lib_tps:12.0f}{lib_tps * fpt / 1e9:10.2f}{lib_tps / ref_tps:8.3f}")
    if args.compile:
        t_c = min(reference_loop(cfg, corpus.vocab.size, batches, compiled=True) for _ in range(args.rounds))
        c_tps = tokens / t_c
        print(f"{'reference, torch.compile':28s}{c_tps:12.0f}{c_tps * fpt / 1e9:10.2f}{c_tps / ref_tps:8.3f}"
              f"   (compilation: {reference_loop.compile_s:.0f} s)")
    print(f"{'2048^2 fp32 matmul peak':28s}{'':12s}{peak / 1e9:10.2f}{1.0:8.3f}")
    print(f"library / reference tokens/s: {lib_tps / ref_tps:.3f} (goal >= 1.0)")
    print(f"library FLOP/s / matmul peak: {lib_tps * fpt / peak:.3f}")


if __name__ == "__main__":
    main()
