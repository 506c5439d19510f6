"""Train the zoo's character models, measure them before and after, and sweep a grid.

One run (:func:`train_run`) trains ``models.build(cfg.arch, ...)`` on the Shakespeare
corpus of :mod:`resdecay_lib.data` with AdamW (decoupled weight decay on matrices and
embeddings only), a linear warm-up then a cosine decay to ``min_lr_frac * lr``, and
gradient-norm clipping; the batch of step s is a pure function of (seed, s).

Reproducibility: on the CPU the run pins its thread count (``cfg.threads``, via
:func:`resdecay_lib.device.pin_threads`), because float32 reductions split by thread and
the last bits of a trained model depend on the thread count; with the count pinned, a run
gives the same bits on any machine of the same CPU family, whatever its core count.

Checkpoints (``torch.save``; loaded with ``torch.load(..., weights_only=True)``) hold the
model, the optimiser, the scheduler, torch's RNG states, the step (which is the data
position: batches are indexed by step) and the loss history, so a run stopped after n
steps and resumed ends with parameters bit-identical to an uninterrupted run. A
non-finite loss stops the run with :class:`NonFiniteLoss` naming the step; the
checkpoint on disk is then the last one written before it, from finite parameters.

:func:`run_result` trains one configuration and returns a JSON-ready dict with what the
book's Chapters 7 and 8 read: per-layer change metrics and the block-output Gram matrix at
initialisation and after training, validation losses (per evaluation window), the loss
with each block removed, and provenance. :func:`sweep` runs a grid from a TOML file,
writing one result file per run atomically and skipping finished runs.

Command line::

    python -m resdecay_lib train --arch pre_ln --n-layer 6 --steps 150 --out run.json
    python -m resdecay_lib sweep configs/train_sweep.toml [--shard 0/2]
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import numbers
import os
import platform
import subprocess
import sys
import time
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm  # the plain bar: quiet (disable=None) when stderr is not a terminal

from . import __version__
from .data import cache_dir, eval_windows, load_corpus, train_batch
from .device import manual_seed_all, pin_threads, resolve_device

__all__ = ["TrainConfig", "NonFiniteLoss", "TrainState", "lr_factor", "train", "evaluate",
           "ablation_losses", "measure", "run_result", "write_json_atomic", "sweep_runs",
           "sweep", "register_cli", "RESULT_SCHEMA"]

#: version of the result-file layout
RESULT_SCHEMA = 1


@dataclass(frozen=True)
class TrainConfig:
    """One training run. Defaults: the book's stored sweep (configs/train_sweep.toml), but
    ``threads``: the library's default; the sweep runs two one-thread processes side by side."""
    arch: str = "pre_ln"          # a key of models.ARCHS
    n_layer: int = 6
    d_model: int = 64
    n_head: int = 4
    block_size: int = 64          # context length in characters
    batch_size: int = 16
    steps: int = 150
    lr: float = 3e-3              # peak learning rate
    warmup: int = 15              # linear warm-up steps
    min_lr_frac: float = 0.1      # cosine decays to min_lr_frac * lr at the last step
    weight_decay: float = 0.1     # on matrices and embeddings only (not biases, not LayerNorm)
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0        # max global gradient norm; 0 turns clipping off
    seed: int = 0                 # initialisation and data order
    threads: int = 2              # CPU threads, pinned (results depend on it in the last bits)
    device: str = "auto"          # "auto": CUDA when present, else the CPU; or "cpu", "cuda"
    eval_windows: int = 64        # validation windows for losses (fixed, the same for every run)
    measure_windows: int = 32     # validation windows fed to the probe
    corpus: str = "shakespeare"

    def __post_init__(self):
        from .models import ARCHS
        if self.arch not in ARCHS:
            raise ValueError(f"arch must be one of {sorted(ARCHS)}, got {self.arch!r}")
        for name in ("n_layer", "d_model", "n_head", "block_size", "batch_size", "steps",
                     "threads", "eval_windows", "measure_windows"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, numbers.Integral) or self.warmup < 0:
            raise ValueError(f"warmup must be a non-negative integer, got {self.warmup!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr must be a positive finite number, got {self.lr!r}")
        if not 0 <= self.min_lr_frac <= 1:
            raise ValueError(f"min_lr_frac must lie in [0, 1], got {self.min_lr_frac!r}")
        if not self.weight_decay >= 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay!r}")
        if not self.grad_clip >= 0:
            raise ValueError(f"grad_clip must be >= 0 (0: no clipping), got {self.grad_clip!r}")
        for name in ("beta1", "beta2"):
            if not 0 <= getattr(self, name) < 1:
                raise ValueError(f"{name} must lie in [0, 1), got {getattr(self, name)!r}")
        if self.corpus != "shakespeare":
            raise ValueError(f"corpus must be 'shakespeare' (the only training corpus), got {self.corpus!r}")

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        unknown = set(d) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"unknown TrainConfig fields {sorted(unknown)}; valid: "
                             f"{[f.name for f in dataclasses.fields(cls)]}")
        return cls(**d)

    def run_name(self) -> str:
        return f"{self.arch}_L{self.n_layer}_s{self.seed}"


class NonFiniteLoss(RuntimeError):
    """The training loss became NaN or infinite; ``step`` is the step that produced it."""

    def __init__(self, step: int, loss: float, checkpoint: Path | None, last_good: int | None):
        self.step, self.loss, self.checkpoint, self.last_good = step, loss, checkpoint, last_good
        where = (f"; the last good checkpoint ({checkpoint}, step {last_good}) is kept"
                 if checkpoint is not None and last_good is not None else "")
        super().__init__(f"non-finite training loss {loss} at step {step}{where}")


def lr_factor(step: int, cfg: TrainConfig) -> float:
    """Learning-rate multiplier at ``step`` (0-based): linear warm-up, then cosine to min_lr_frac.

    factor(s) = (s + 1) / warmup for s < warmup; else
    min_lr_frac + (1 - min_lr_frac) (1 + cos(pi p)) / 2 with p = (s - warmup) / max(1, steps - warmup - 1).
    """
    if step < cfg.warmup:
        return (step + 1) / cfg.warmup
    p = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup - 1))
    return cfg.min_lr_frac + (1 - cfg.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * p))


def _build_model(cfg: TrainConfig, vocab_size: int, device):
    from .models import build
    return build(cfg.arch, cfg.n_layer, cfg.d_model, cfg.n_head, vocab_size, cfg.block_size,
                 seed=cfg.seed, device=device)


def _optimizer(model, cfg: TrainConfig):
    decay = [p for p in model.parameters() if p.dim() >= 2]     # matrices and embeddings
    no_decay = [p for p in model.parameters() if p.dim() < 2]   # biases, LayerNorm gains
    groups = [{"params": decay, "weight_decay": cfg.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(s, cfg))
    return opt, sched


def _loss(model, x, y):
    """Mean next-character cross-entropy (nats). Module-level so tests can inject a NaN."""
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))


@dataclass
class TrainState:
    """What :func:`train` returns: the trained model and the per-step training losses."""
    model: torch.nn.Module
    train_loss: list
    step: int
    wall_s: float


def _save_checkpoint(path: Path, step, model, opt, sched, train_loss, cfg):
    state = {"step": int(step), "model": model.state_dict(), "optimizer": opt.state_dict(),
             "scheduler": sched.state_dict(), "rng_cpu": torch.get_rng_state(),
             "rng_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
             "train_loss": torch.tensor(train_loss, dtype=torch.float64),
             "config": asdict(cfg)}
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)  # atomic: a crash mid-write leaves the previous checkpoint


def train(cfg: TrainConfig, checkpoint: str | Path | None = None, checkpoint_every: int = 100,
          stop_after: int | None = None, progress: bool | None = None,
          model: torch.nn.Module | None = None) -> TrainState:
    """Train (or resume) one run.

    Parameters
    ----------
    checkpoint : path, optional
        Where to keep the run's checkpoint. If the file exists, the run resumes from it
        (its config must equal ``cfg``). Written every ``checkpoint_every`` steps, at
        ``stop_after`` and at the end.
    stop_after : int, optional
        Stop after this many steps in total (for splitting a run; ``cfg.steps`` still sets
        the schedule).
    progress : bool or None
        tqdm bar; None shows it only on a terminal.
    model : nn.Module, optional
        Start from this model instead of building one (must match ``cfg``).
    """
    t0 = time.perf_counter()
    dev = resolve_device(cfg.device)
    if dev.type == "cpu":
        pin_threads(cfg.threads)
    if isinstance(checkpoint_every, bool) or not isinstance(checkpoint_every, numbers.Integral) \
            or checkpoint_every < 1:
        raise ValueError(f"checkpoint_every must be a positive integer, got {checkpoint_every!r}")
    if stop_after is not None and not (isinstance(stop_after, numbers.Integral) and 0 < stop_after):
        raise ValueError(f"stop_after must be a positive integer or None, got {stop_after!r}")
    corpus = load_corpus(cfg.corpus)
    manual_seed_all(cfg.seed)
    if model is None:
        model = _build_model(cfg, corpus.vocab.size, dev)
    opt, sched = _optimizer(model, cfg)
    start, train_loss = 0, []
    ckpt = Path(checkpoint) if checkpoint is not None else None
    last_good = None
    if ckpt is not None and ckpt.exists():
        state = torch.load(ckpt, map_location=dev, weights_only=True)
        if state["config"] != asdict(cfg):
            raise ValueError(f"checkpoint {ckpt} belongs to another config: {state['config']}")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng_cpu"])
        if state["rng_cuda"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["rng_cuda"])
        start, train_loss = int(state["step"]), state["train_loss"].tolist()
        last_good = start
    end = cfg.steps if stop_after is None else min(cfg.steps, stop_after)
    model.train()
    bar = tqdm(range(start, end), initial=start, total=end, desc=cfg.run_name(),
               disable=(None if progress is None else not progress), leave=False)
    for step in bar:
        x, y = train_batch(corpus.train, step, cfg.batch_size, cfg.block_size, cfg.seed)
        loss = _loss(model, x.to(dev), y.to(dev))
        value = float(loss.detach())
        if not math.isfinite(value):
            bar.close()
            raise NonFiniteLoss(step, value, ckpt if last_good is not None else None, last_good)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        sched.step()
        train_loss.append(value)
        if step % 10 == 0:
            bar.set_postfix(loss=f"{value:.3f}")
        done = step + 1
        if ckpt is not None and (done % checkpoint_every == 0 or done == end):
            _save_checkpoint(ckpt, done, model, opt, sched, train_loss, cfg)
            last_good = done
    bar.close()
    model.eval()
    return TrainState(model, train_loss, end, time.perf_counter() - t0)


# ----------------------------------------------------------------------------- evaluation

@torch.no_grad()
def _window_losses(model, x, y, chunk: int = 32) -> np.ndarray:
    """Mean cross-entropy of each window (sequence): float64 [n]."""
    dev = next(model.parameters()).device
    out = []
    for i in range(0, len(x), chunk):
        logits = model(x[i:i + chunk].to(dev))
        ce = F.cross_entropy(logits.transpose(1, 2), y[i:i + chunk].to(dev), reduction="none")
        out.append(ce.double().mean(1).cpu())
    return torch.cat(out).numpy()


def evaluate(model, x, y) -> dict:
    """Loss over fixed windows: mean, standard error over windows, and per-window values."""
    per = _window_losses(model, x, y)
    return {"mean": float(per.mean()), "se": float(per.std(ddof=1) / math.sqrt(len(per))),
            "per_window": per.tolist()}


def ablation_losses(model, x, y) -> dict:
    """Loss with block k removed (a forward hook returns the block's input), k = 1..L.

    Returns per-k mean losses, the increase over the intact model and its standard error
    over windows (paired: the same windows with and without the block), and the per-window
    increases ``delta_per_window`` [L][n] (for bootstrap fits over windows).
    """
    base = _window_losses(model, x, y)
    loss, delta, delta_se, per_window = [], [], [], []
    for block in model.blocks:
        handle = block.register_forward_hook(lambda m, args, out: args[0])
        try:
            per = _window_losses(model, x, y)
        finally:
            handle.remove()
        d = per - base
        loss.append(float(per.mean()))
        delta.append(float(d.mean()))
        delta_se.append(float(d.std(ddof=1) / math.sqrt(len(d))))
        per_window.append(_sig(d, 5))
    return {"loss": loss, "delta": delta, "delta_se": delta_se, "delta_per_window": per_window}


def _gram(stream: torch.Tensor) -> np.ndarray:
    """Gram matrix of the stream's summands, per coordinate, of the centred vectors.

    Summands: u_0 = x_1 (the stream entering block 1: the embedding) and u_k = x_{k+1} - x_k
    (block k's output), k = 1..L; each centred over its D coordinates (LayerNorm removes the
    mean). G_ij = mean over tokens of <u_i, u_j> / D: [L+1, L+1] float64. G_kk is block k's
    output variance; G_ij / sqrt(G_ii G_jj) the correlation of two summands.
    """
    x = stream.double()                                  # (L+1, B, T, D)
    u = torch.cat([x[:1], x[1:] - x[:-1]], 0)            # summands (L+1, B, T, D)
    u = u - u.mean(-1, keepdim=True)
    u = u.reshape(u.shape[0], -1, u.shape[-1])           # (L+1, N, D)
    n, d = u.shape[1], u.shape[2]
    g = torch.einsum("ind,jnd->ij", u, u) / (n * d)
    return g.numpy()


def _sig(a, digits=6):
    """Round to ``digits`` significant digits, for small JSON (nested lists; NaN -> None)."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 0:
        v = float(a)
        return float(f"{v:.{digits}g}") if math.isfinite(v) else None
    return [_sig(v, digits) for v in a]


def measure(model, x) -> dict:
    """Probe the model on windows ``x``: per part of the stream, per-layer metrics and Gram.

    Parts: ``{"stream"}`` for one-stream placements; ResiDual has ``"post_ln"`` (x_a, what
    its sublayers read) and ``"dual"`` (x_d). For each part: the metrics of
    :func:`resdecay_lib.probe.layer_change` (means, standard errors, per-sequence omega_sq)
    and :func:`_gram` of the summands.
    """
    from .models import stream_parts
    from .probe import layer_change, residual_stream
    was_training = model.training
    model.eval()
    try:
        stream = residual_stream(model, x)
    finally:
        model.train(was_training)
    out = {}
    for part, sl in stream_parts(model).items():
        s = stream[..., sl]
        lc = layer_change(s)
        rec = {}
        for m in lc.METRICS:
            rec[m] = _sig(getattr(lc, m))
            rec[m + "_se"] = _sig(getattr(lc, m + "_se"))
        rec["omega_sq_per_sequence"] = _sig(lc.per_sequence["omega_sq"])
        rec["gram"] = _sig(_gram(s))
        out[part] = rec
    return out


# ----------------------------------------------------------------------------- one result

def code_version() -> str:
    """``git describe --always --dirty`` of the library's repository, else the package version."""
    try:
        here = Path(__file__).resolve().parent
        out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=here,
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            return "git:" + out.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return "resdecay_lib " + __version__


def _provenance(cfg: TrainConfig) -> dict:
    dev = resolve_device(cfg.device)
    return {"code_version": code_version(),
            "library_versions": {"python": platform.python_version(), "torch": torch.__version__,
                                 "numpy": np.__version__},
            "device": (torch.cuda.get_device_name(dev) if dev.type == "cuda"
                       else f"cpu ({platform.machine()}, {platform.processor() or 'unknown'})"),
            "threads": cfg.threads if dev.type == "cpu" else None,
            "platform": platform.platform()}


def run_result(cfg: TrainConfig, checkpoint: str | Path | None = None,
               progress: bool | None = None, checkpoint_every: int = 100) -> dict:
    """Train one run and return its JSON-ready result (see the module docstring)."""
    t0 = time.perf_counter()
    dev = resolve_device(cfg.device)
    if dev.type == "cpu":
        pin_threads(cfg.threads)
    corpus = load_corpus(cfg.corpus)
    pydoc = load_corpus("pydoc")
    xv, yv = eval_windows(corpus.val, cfg.eval_windows, cfg.block_size)
    xm, _ = eval_windows(corpus.val, cfg.measure_windows, cfg.block_size)
    xp, yp = eval_windows(pydoc.val, cfg.eval_windows, cfg.block_size)

    manual_seed_all(cfg.seed)
    model = _build_model(cfg, corpus.vocab.size, dev)
    model.eval()
    init = {"measure": measure(model, xm), "val_loss": evaluate(model, xv, yv)}
    try:
        state = train(cfg, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                      progress=progress, model=model)
    except NonFiniteLoss as exc:  # a diverged run is a result too: record where it failed
        return {"schema": RESULT_SCHEMA, "name": cfg.run_name(), "config": asdict(cfg),
                "seed": cfg.seed, **_provenance(cfg), "status": "non_finite",
                "failed_step": exc.step, "init": init,
                "wall_time_s": round(time.perf_counter() - t0, 1)}
    model = state.model
    trained = {"measure": measure(model, xm), "val_loss": evaluate(model, xv, yv),
               "pydoc_loss": evaluate(model, xp, yp), "ablation": ablation_losses(model, xv, yv)}
    return {"schema": RESULT_SCHEMA, "name": cfg.run_name(), "config": asdict(cfg),
            "seed": cfg.seed, **_provenance(cfg), "status": "ok",
            "n_params": sum(p.numel() for p in model.parameters()),
            "train_loss": _sig(state.train_loss, 5),
            "init": init, "trained": trained,
            "wall_time_s": round(time.perf_counter() - t0, 1)}


def write_json_atomic(obj, path: str | Path) -> None:
    """Write JSON to ``path`` through a temporary file and ``os.replace`` (never half-written)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


# ----------------------------------------------------------------------------- sweeps

def load_sweep(path: str | Path) -> dict:
    """Read a sweep's TOML: ``name``, ``out`` (folder), ``archs``, ``depths``, ``seeds``, ``[base]``."""
    with open(path, "rb") as f:
        spec = tomllib.load(f)
    for key in ("out", "archs", "depths", "seeds"):
        if key not in spec:
            raise ValueError(f"sweep file {path} lacks the key {key!r}")
    return spec


def sweep_runs(spec: dict) -> list[TrainConfig]:
    """The grid placements x depths x seeds: seed by seed, deepest first within a seed.

    That order finishes one complete seed of the grid before the next starts, and the
    longest runs before the short ones, so a sweep cut short by time still has every
    configuration once.
    """
    base = dict(spec.get("base", {}))
    return [TrainConfig.from_dict({**base, "arch": a, "n_layer": int(L), "seed": int(s)})
            for s in spec["seeds"] for L in sorted(spec["depths"], reverse=True)
            for a in spec["archs"]]


def sweep(spec_or_path, root: str | Path = ".", shard: tuple[int, int] = (0, 1),
          progress: bool | None = None, log=print) -> list[Path]:
    """Run every configuration of the sweep that has no result file yet.

    Each run writes ``<root>/<out>/<arch>_L<n_layer>_s<seed>.json`` atomically; a run whose
    file exists (with the same config) is skipped, so an interrupted sweep started again
    loses nothing. A run killed half-way resumes from its checkpoint in
    ``$RESDECAY_CACHE/checkpoints/<out>-<hash of its path>/`` (removed once the result is
    written).
    ``shard=(i, n)`` runs every n-th configuration starting at i (for parallel processes).
    """
    spec = load_sweep(spec_or_path) if not isinstance(spec_or_path, dict) else spec_or_path
    i, n = shard
    if not (isinstance(n, int) and n >= 1 and isinstance(i, int) and 0 <= i < n):
        raise ValueError(f"shard must be (i, n) with 0 <= i < n, got {shard!r}")
    out = Path(root) / spec["out"]
    # one checkpoint folder per output folder (its resolved path), so sweeps never share one
    key = hashlib.sha1(str(out.resolve()).encode()).hexdigest()[:10]
    ckdir = cache_dir() / "checkpoints" / f"{str(spec['out']).replace('/', '_')}-{key}"
    ckdir.mkdir(parents=True, exist_ok=True)
    written = []
    runs = sweep_runs(spec)[i::n]
    for j, cfg in enumerate(runs):
        path = out / f"{cfg.run_name()}.json"
        if path.exists():
            stored = json.loads(path.read_text())["config"]
            if stored != asdict(cfg):
                raise ValueError(f"{path} holds another config than the sweep asks for; "
                                 f"remove it to rerun: {stored}")
            log(f"[{j + 1}/{len(runs)}] {cfg.run_name()}: done, skipped")
            continue
        log(f"[{j + 1}/{len(runs)}] {cfg.run_name()}: training")
        ck = ckdir / f"{cfg.run_name()}.pt"
        res = run_result(cfg, checkpoint=ck, progress=progress, checkpoint_every=50)
        write_json_atomic(res, path)
        ck.unlink(missing_ok=True)
        written.append(path)
        log(f"[{j + 1}/{len(runs)}] {cfg.run_name()}: {res['status']}, {res['wall_time_s']:.0f} s")
    return written


# ----------------------------------------------------------------------------- command line

def _cmd_train(args) -> int:
    fields = {f.name: f for f in dataclasses.fields(TrainConfig)}
    kw = {k: getattr(args, k) for k in fields if getattr(args, k, None) is not None}
    cfg = TrainConfig.from_dict(kw)
    res = run_result(cfg, checkpoint=args.checkpoint)
    if res["status"] != "ok":
        print(f"{cfg.run_name()}: non-finite loss at step {res['failed_step']}", file=sys.stderr)
    if args.out:
        write_json_atomic(res, args.out)
    if res["status"] != "ok":
        return 1
    print(f"{cfg.run_name()}: val loss {res['trained']['val_loss']['mean']:.4f} "
          f"(init {res['init']['val_loss']['mean']:.4f}), {res['wall_time_s']:.0f} s"
          + (f", written to {args.out}" if args.out else ""))
    return 0


def _cmd_sweep(args) -> int:
    i, n = (int(v) for v in args.shard.split("/"))
    sweep(args.config, root=args.root, shard=(i, n))
    return 0


def register_cli(sub) -> None:
    """Add ``train`` and ``sweep`` to the ``python -m resdecay_lib`` parser."""
    p = sub.add_parser("train", help="train one model and write its result JSON")
    for f in dataclasses.fields(TrainConfig):
        typ = type(f.default)
        p.add_argument("--" + f.name.replace("_", "-"), dest=f.name, type=typ, default=None,
                       help=f"default {f.default!r}")
    p.add_argument("--checkpoint", default=None, help="checkpoint file (resumes if it exists)")
    p.add_argument("--out", default=None, help="result JSON file")
    p.set_defaults(func=_cmd_train)

    q = sub.add_parser("sweep", help="run a grid of training runs from a TOML file (resumable)")
    q.add_argument("config", help="sweep TOML file, e.g. configs/train_sweep.toml")
    q.add_argument("--root", default=".", help="folder the sweep's 'out' is relative to")
    q.add_argument("--shard", default="0/1", help="i/n: run every n-th configuration from i")
    q.set_defaults(func=_cmd_sweep)
