"""Write the pilot's chosen learning rates into a sweep file's [arch.<name>] tables.

Usage: python tools/set_pilot_lr.py PILOT.toml SWEEP.toml [--long LONG_PILOT.toml] [--root DIR]
With --long, a placement whose choice is the short pilot's top rate takes the long pilot's
choice instead (resdecay_lib.analysis.training_analysis.choose_lr_two_stage).
Leaves the file alone when every placement already has an lr (so a rerun cannot change a
sweep whose runs exist); Chapter 7 checks the tables against the pilot.
"""
import argparse
import re
import sys

from resdecay_lib.analysis.training_analysis import choose_lr, choose_lr_two_stage
from resdecay_lib.training.store import load_sweep

ap = argparse.ArgumentParser()
ap.add_argument("pilot")
ap.add_argument("sweep")
ap.add_argument("--long", default=None, help="horizon-matched pilot for top-of-grid choices")
ap.add_argument("--root", default=".")
a = ap.parse_args()
chosen = choose_lr_two_stage(a.pilot, a.long, a.root) if a.long else choose_lr(a.pilot, a.root)
spec = load_sweep(a.sweep)
have = spec.get("arch", {})
if all("lr" in have.get(x, {}) for x in spec["archs"]):
    print("the sweep already holds a learning rate per placement; left as it is")
    sys.exit(0)
text = open(a.sweep).read()
text = re.sub(r"\n# --- learning rates chosen by the pilot.*", "", text, flags=re.S).rstrip() + "\n"
text += "\n# --- learning rates chosen by the pilot (tools/set_pilot_lr.py; losses: final validation loss)\n"
for x in spec["archs"]:
    losses = ", ".join(f"{lr:g}: {v:.3f}" if v is not None else f"{lr:g}: diverged"
                       for lr, v in chosen[x]["losses"].items())
    text += f"[arch.{x}]   # pilot {losses}\nlr = {chosen[x]['lr']!r}\n"
open(a.sweep, "w").write(text)
print(text)
