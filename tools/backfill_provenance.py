"""Backfill what stored records made before issue 20 do not record: CPU model, torch's CPU
capability, seeds and (for the pretrained records) the device.

Training records (results/train_long, lr_pilot*, train_deep, train_long3x, train_wide) made
before the runs recorded it get ``cpu_model``, ``cpu_capability`` and ``seeds`` with
``provenance_backfill``: the date, and that the CPU fields are those of the machine that
backfilled them (a machine of the same kind as the one that ran them; not recorded at run time).
Pretrained records (results/pretrained) get the same in their ``provenance``, with the device
(``cpu``: the measurement command ran nowhere else) and their seeds (none: fixed text segments;
Chapter 9's bootstraps use seed 0). Nothing is re-run, no measured number changes, and a record
that already has the fields is left alone. Files are rewritten atomically.
Usage: python tools/backfill_provenance.py
"""
import datetime
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from resdecay_lib.training.store import cpu_capability, cpu_model, write_atomic  # noqa: E402

TODAY = datetime.date.today().isoformat()
NOTE = ("backfilled {date}: cpu_model and cpu_capability are those of the machine that backfilled the "
        "record, of the same kind as the one that made it; they were not recorded at run time")


def _write(path: pathlib.Path, obj) -> None:
    write_atomic(path, json.dumps(obj, separators=(",", ":"), allow_nan=False))


def training(path: pathlib.Path) -> bool:
    r = json.loads(path.read_text())
    if "cpu_model" in r or "schema" not in r:
        return False
    r["cpu_model"], r["cpu_capability"] = cpu_model(), cpu_capability()
    r["seeds"] = {"init": r["seed"], "data_order": r["seed"], "global_generators": r["seed"]}
    r["provenance_backfill"] = NOTE.format(date=TODAY)
    _write(path, r)
    return True


def pretrained(path: pathlib.Path) -> bool:
    r = json.loads(path.read_text())
    prov = r.setdefault("provenance", {})
    if "cpu_model" in prov:
        return False
    prov.update({"device": "cpu", "cpu_model": cpu_model(), "cpu_capability": cpu_capability(),
                 "seeds": {"sampling": None, "note": "the inputs are fixed segments of the text (no random "
                           "seed); Chapter 9's bootstraps over sequences use generator seed 0"},
                 "backfilled": True, "backfill_note": NOTE.format(date=TODAY)})
    _write(path, r)
    return True


def main() -> int:
    n = 0
    for d in ("train_long", "lr_pilot", "lr_pilot_long", "lr_pilot_deep", "train_deep", "train_long3x", "train_wide"):
        for p in sorted((ROOT / "results" / d).glob("*.json")):
            n += training(p)
    m = sum(pretrained(p) for p in sorted((ROOT / "results" / "pretrained").glob("*__*.json")))
    print(f"backfilled {n} training records and {m} pretrained records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
