"""What the tests of resdecay_lib.training.sweep and resdecay_lib.training.engines share: a tiny
sweep (2 placements x depths [1, 2], 12 steps, one thread), its sweep file, and its result files."""
import json
from pathlib import Path

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
    """Result files without what legitimately differs between runs (wall time, provenance)."""
    out = {}
    for p in sorted(folder.glob("*.json")):
        r = json.loads(p.read_text())
        for k in ("wall_time_s", "code_version", "platform", "device"):
            r.pop(k, None)
        out[p.name] = r
    return out
