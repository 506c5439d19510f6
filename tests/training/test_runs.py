"""Tests of resdecay_lib.training.runs: a run measured through training, the train command and provenance."""
import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from resdecay_lib.cli import train as train_cli
from resdecay_lib.training import runs, train as T
from resdecay_lib.__main__ import main as cli_main

TINY = T.TrainConfig(arch="pre_ln", n_layer=2, d_model=16, n_head=2, block_size=16, batch_size=4,
                     steps=8, warmup=2, threads=1, eval_windows=6, measure_windows=4)
PLAN = runs.RunPlan(measure_steps=(0, 2, 8), eval_every=4)


def test_default_measure_steps_are_log_spaced_and_hold_150():
    ms = runs.RunPlan.default_measure_steps(2000)
    assert ms == (0, 20, 50, 150, 400, 1000, 2000)
    ratios = [b / a for a, b in zip(ms[1:], ms[2:])]
    assert all(2 <= q <= 3 for q in ratios)


def test_plan_rejects_a_schedule_that_misses_the_ends():
    with pytest.raises(ValueError, match="measure_steps"):
        runs.RunPlan(measure_steps=(2, 8)).resolve(8)
    with pytest.raises(ValueError, match="eval_every"):
        runs.RunPlan(eval_every=-1).resolve(8)


def test_convergence_criterion_reads_the_last_fifth():
    flat = [{"step": s, "mean": v} for s, v in ((0, 4.0), (80, 2.0), (100, 1.99))]
    falling = [{"step": s, "mean": v} for s, v in ((0, 4.0), (80, 2.0), (100, 1.8))]
    up = [{"step": s, "mean": v} for s, v in ((0, 4.0), (80, 5.0), (100, 6.0))]
    assert runs.convergence(flat, 100)["met"]
    assert not runs.convergence(falling, 100)["met"]
    c = runs.convergence(up, 100)
    assert c["diverged"] and not c["met"]


@pytest.mark.parametrize("arch", ["pre_ln", "resi_dual"])
def test_run_result_holds_what_the_chapters_read(arch):
    res = runs.run_result(replace(TINY, arch=arch), PLAN)
    assert res["status"] == "ok"
    json.dumps(res, allow_nan=False)  # strict JSON
    assert [c["step"] for c in res["checkpoints"]] == [0, 2, 8]
    assert [p["step"] for p in res["val_curve"]] == [0, 2, 4, 8]
    for ck in res["checkpoints"]:
        parts = ck["measure"]
        assert set(parts) == ({"post_ln", "dual"} if arch == "resi_dual" else {"stream"})
        for rec in parts.values():
            assert len(rec["omega_sq"]) == TINY.n_layer
            assert len(rec["gram"]) == TINY.n_layer + 1
            assert len(rec["omega_sq_per_sequence"]) == TINY.measure_windows
    assert len(res["final"]["ablation"]["delta"]) == TINY.n_layer
    assert res["final"]["val_loss"]["mean"] == pytest.approx(res["val_curve"][-1]["mean"], rel=1e-5)
    assert {"code_version", "library_versions", "device", "wall_time_s", "seed", "convergence",
            "flops_per_step"} <= set(res)


def test_a_short_rerun_reproduces_the_first_checkpoint_interval():
    full = runs.run_result(TINY, PLAN)
    part = runs.run_result(TINY, PLAN, stop_at=2)
    assert part["status"] == "partial" and "final" not in part
    assert part["checkpoints"] == full["checkpoints"][:2]


def test_resumed_run_gives_the_same_result(tmp_path):
    full = runs.run_result(TINY, PLAN)
    ck = tmp_path / "r.pt"
    runs.run_result(TINY, PLAN, checkpoint=ck, stop_at=2)
    resumed = runs.run_result(TINY, PLAN, checkpoint=ck)
    for k in ("checkpoints", "val_curve", "train_loss", "final"):
        assert resumed[k] == full[k]


def test_flops_per_step_counts_six_n_per_token():
    from resdecay_lib.nn.models import build
    m = build("pre_ln", 2, 16, 2, 85, 16, device="cpu")
    n = sum(p.numel() for b in m.blocks for p in b.parameters()) + sum(p.numel() for p in m.ln_f.parameters())
    assert runs.flops_per_step(m, TINY) == TINY.batch_size * TINY.block_size * (6 * n + 6 * 2 * 16 * 16)


def test_cli_train_writes_a_result_and_rejects_bad_input(tmp_path, capsys):
    out = tmp_path / "r.json"
    args = ["train", "--arch", "pre_ln", "--n-layer", "1", "--d-model", "16", "--n-head", "2",
            "--block-size", "16", "--batch-size", "4", "--steps", "3", "--warmup", "1",
            "--threads", "1", "--eval-windows", "4", "--measure-windows", "3", "--out", str(out)]
    assert cli_main(args) == 0
    assert json.loads(out.read_text())["config"]["steps"] == 3
    assert cli_main(["train", "--n-layer", "0"]) == 2
    assert "n_layer" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the train command

TRAIN = ["train", "--arch", "pre_ln", "--n-layer", "1", "--d-model", "16", "--n-head", "2", "--block-size", "16",
         "--batch-size", "4", "--steps", "3", "--warmup", "1", "--threads", "1", "--eval-windows", "4",
         "--measure-windows", "3"]


def _exit_2_in_one_line(argv, capsys, *words):
    import time
    capsys.readouterr()
    t0 = time.perf_counter()
    rc = cli_main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert all(w in err for w in words), err
    assert time.perf_counter() - t0 < 5, "the check must come before any work"
    return err


def test_train_rejects_an_out_path_that_is_a_directory_before_training(tmp_path, capsys):
    _exit_2_in_one_line(TRAIN + ["--out", str(tmp_path)], capsys, "train: --out must be a file path, got the folder")


def test_train_rejects_an_out_path_under_a_file_before_training(tmp_path, capsys):
    (tmp_path / "f").write_text("")
    _exit_2_in_one_line(TRAIN + ["--out", str(tmp_path / "f" / "r.json")], capsys, "--out cannot be written",
                        "is a file, not a folder")


def test_train_rejects_an_empty_out_path_before_training(capsys):
    _exit_2_in_one_line(TRAIN + ["--out", ""], capsys, "--out must be a file path")


def test_train_rejects_a_checkpoint_that_is_a_folder_or_under_a_file_before_training(tmp_path, capsys):
    _exit_2_in_one_line(TRAIN + ["--checkpoint", str(tmp_path)], capsys, "--checkpoint must be a file path")
    (tmp_path / "f").write_text("")
    _exit_2_in_one_line(TRAIN + ["--checkpoint", str(tmp_path / "f" / "c.pt")], capsys, "--checkpoint cannot be written")


def test_train_with_a_checkpoint_in_a_missing_folder_makes_the_folder_and_finishes(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)            # without --out, train writes runs/<run name>.json here
    ck = tmp_path / "missing" / "run.pt"
    assert cli_main(TRAIN + ["--checkpoint", str(ck)]) == 0
    assert ck.is_file()


def test_train_recovers_from_a_truncated_checkpoint_as_the_sweep_does(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)            # without --out, train writes runs/<run name>.json here
    ck, out = tmp_path / "run.pt", tmp_path / "r.json"
    assert cli_main(TRAIN + ["--checkpoint", str(ck)]) == 0
    data = ck.read_bytes()
    ck.write_bytes(data[: len(data) // 2])                     # a kill mid-write of an old torch.save
    capsys.readouterr()
    assert cli_main(TRAIN + ["--checkpoint", str(ck), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "cannot be read" in err and "restarting the run from step 0" in err, err
    assert json.loads(out.read_text())["status"] == "ok"


def test_train_keeps_its_result_when_the_out_file_cannot_be_written_after_all(tmp_path, capsys, monkeypatch):
    def fail(obj, path):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(train_cli, "write_json_atomic", fail)
    assert cli_main(TRAIN + ["--out", str(tmp_path / "r.json")]) == 1
    cap = capsys.readouterr()
    assert "the result follows on stdout" in cap.err
    assert json.loads(cap.out.strip().splitlines()[-1])["status"] == "ok"


# ----------------------------------------------------------------------------- provenance

def test_a_training_record_carries_device_cpu_capability_seeds_code_and_library_versions():
    prov = runs.provenance(TINY, code="git:test")
    assert prov["code_version"] == "git:test"
    assert set(prov["library_versions"]) >= {"python", "torch", "numpy"}
    assert prov["device"].startswith("cpu (") and prov["threads"] == TINY.threads
    assert isinstance(prov["cpu_model"], str) and prov["cpu_model"]
    assert prov["cpu_capability"] == str(torch.backends.cpu.get_cpu_capability())
    assert prov["seeds"] == {"init": TINY.seed, "data_order": TINY.seed, "global_generators": TINY.seed}
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists() and "model name" in cpuinfo.read_text():
        line = next(l for l in cpuinfo.read_text().splitlines() if l.startswith("model name"))
        assert prov["cpu_model"] == line.split(":", 1)[1].strip()


def test_run_result_writes_the_provenance_and_the_wall_time_into_the_record():
    res = runs.run_result(TINY, PLAN, stop_at=2)
    for key in ("code_version", "library_versions", "device", "cpu_model", "cpu_capability", "seeds",
                "threads", "platform", "wall_time_s"):
        assert key in res, key
    json.dumps(res, allow_nan=False)
