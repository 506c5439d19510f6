"""What the tests of resdecay_lib.training.sweep and resdecay_lib.training.engines share: a tiny
sweep (2 placements x depths [1, 2], 12 steps, one thread), its sweep file, and its result files;
and, for the tests of the analysis, stored run results and a StoredSweep of them."""
import copy
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from resdecay_lib.analysis.training_analysis import StoredSweep
from resdecay_lib.training.plan import TrainConfig

BASE = {"d_model": 16, "n_head": 2, "block_size": 16, "batch_size": 4, "steps": 12, "warmup": 2,
        "threads": 1, "device": "cpu", "eval_windows": 6, "measure_windows": 4}
SPEC = {"out": "sweep", "archs": ["pre_ln", "post_ln"], "depths": [1, 2], "seeds": [0],
        "base": BASE, "plan": {"measure_steps": [0, 4, 12], "eval_every": 4}}
QUIET = {"log": lambda *a: None}        # run_sweep's keyword arguments for a silent sweep


def sweep_toml(spec) -> str:
    """The sweep file (TOML) of ``spec``."""
    def val(v):
        return json.dumps(v) if not isinstance(v, bool) else str(v).lower()
    lines = [f"{k} = {val(v)}" for k, v in spec.items() if not isinstance(v, dict)]
    for k, v in spec.items():
        if isinstance(v, dict):
            lines.append(f"[{k}]")
            lines += [f"{a} = {val(b)}" for a, b in v.items()]
    return "\n".join(lines) + "\n"


def result_files(folder: Path) -> dict:
    """Result files without what legitimately differs between runs: how they were executed, not
    what they computed (wall time, provenance, and whether and where a killed run resumed: a
    sweep killed after a run's last step resumes from its final checkpoint, resumed_from_step 12)."""
    out = {}
    for p in sorted(folder.glob("*.json")):
        r = json.loads(p.read_text())
        for k in ("wall_time_s", "code_version", "platform", "device", "resumed_from_step", "wall_time_complete"):
            r.pop(k, None)
        out[p.name] = r
    return out


# ----------------------------------------------------------------------------- stored runs, for the analysis

def stored_config(arch="pre_ln", L=2, seed=0, **fields) -> dict:
    """A stored run's ``config``: every TrainConfig field (as the store writes it)."""
    return asdict(TrainConfig(arch=arch, n_layer=L, seed=seed, **fields))


def run_dict(name=None, arch="pre_ln", L=2, seed=0, loss=2.0, config=None, **fields) -> dict:
    """The least valid stored run result (a dict, as the store reads it into a RunRecord): a
    finished run of ``arch`` at depth ``L`` and ``seed`` with final validation loss ``loss``;
    ``config``: TrainConfig fields over the defaults; ``fields``: top-level fields over these."""
    r = {"schema": 2, "name": name or f"{arch}_L{L}_s{seed}", "status": "ok", "seed": seed,
         "config": stored_config(arch, L, seed, **(config or {})),
         "convergence": {"met": True, "diverged": False, "improvement": 0.01},
         "final": {"val_loss": {"mean": loss, "se": 0.01}}, "checkpoints": [], "val_curve": []}
    r.update(fields)
    return r


def stored_run(name, arch, L, seed, loss, met=True, curve=None, flops=1e6):
    """A stored run result with the fields the analysis reads (final loss, ablation, curve), as
    a dict (what the store reads into a RunRecord)."""
    curve = curve or [(0, 4.0), (100, 2.0), (200, loss)]
    return {"schema": 2, "name": name, "status": "ok", "seed": seed, "config": stored_config(arch, L, seed),
            "convergence": {"met": met, "diverged": False, "improvement": 0.01 if met else 0.2},
            "final": {"val_loss": {"mean": loss, "se": 0.01},
                      "ablation": {"delta": list(np.linspace(1, 0.1, L)), "delta_se": [0.01] * L}},
            "val_curve": [{"step": s, "mean": v} for s, v in curve], "flops_per_step": flops, "checkpoints": []}


def stored_sweep(cells):
    """A StoredSweep of stored_run results: {(arch, depth): [loss of seed 0, 1, 2]}."""
    spec = {"archs": sorted({a for a, _ in cells}), "seeds": [0, 1, 2],
            "depths": {a: sorted({L for b, L in cells if b == a}) for a, _ in cells},
            "plan": {"measure_steps": [0, 200]}}
    runs = {}
    for (a, L), losses in cells.items():
        for s, v in enumerate(losses):
            runs[(a, L, s)] = stored_run(f"{a}_L{L}_s{s}", a, L, s, v)
    return StoredSweep(spec, runs)


def with_field(record: dict, path: tuple, value) -> dict:
    """A deep copy of a stored record with the field at ``path`` (keys and list indices) set to
    ``value``, or removed when ``value`` is ``KeyError``: a damaged record for a test."""
    out = copy.deepcopy(record)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out
