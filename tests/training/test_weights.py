"""Tests of resdecay_lib.training.weights and the option that stores them: a run's final weights
beside its result (run_result's ``weights``, ``train --keep-weights``, ``sweep --keep-weights``),
read back with torch.load(weights_only=True), give the run's own removal costs, final loss and
final measurement bit for bit; the result is the same with or without them; bad input is refused
before any work."""
import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest
import torch

from resdecay_lib.__main__ import main as cli_main
from resdecay_lib.nn.evaluation import ablation_losses, evaluate
from resdecay_lib.nn.probe import measure_zoo
from resdecay_lib.training import runs, sweep as S, train as T
from resdecay_lib.training.data import eval_windows, load_corpus
from resdecay_lib.training.weights import WEIGHTS_FORMAT, load_weights, save_weights, weights_path
from sweep_fixtures import QUIET, SPEC, result_files, sweep_toml

TINY = T.TrainConfig(arch="pre_ln", n_layer=2, d_model=16, n_head=2, block_size=16, batch_size=4,
                     steps=8, warmup=2, threads=1, eval_windows=6, measure_windows=4, device="cpu")
PLAN = runs.RunPlan(measure_steps=(0, 2, 8), eval_every=4)
#: what differs between two runs of one configuration by how they were executed, not by what they computed
_EXECUTION = ("wall_time_s",)


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    """(the result of TINY run with its weights stored, the weights file)."""
    path = tmp_path_factory.mktemp("weights") / "pre_ln_L2_s0.weights.pt"
    return runs.run_result(TINY, PLAN, weights=path), path


def test_weights_path_replaces_the_json_suffix_beside_the_result():
    assert weights_path("results/train_long/pre_ln_L2_s0.json") == Path("results/train_long/pre_ln_L2_s0.weights.pt")
    assert weights_path("out/r") == Path("out/r.weights.pt")


def test_the_stored_weights_give_the_runs_own_removal_costs_loss_and_measurement_bit_for_bit(kept):
    res, path = kept
    w = load_weights(path, res)
    assert (w.name, w.step, w.config) == (res["name"], TINY.steps, TINY)
    assert w.provenance["code_version"] == res["code_version"] and w.provenance["threads"] == 1
    assert all(t.dtype == torch.float32 for t in w.state_dict.values())
    model = w.model()
    assert not model.training
    corpus = load_corpus(TINY.corpus)
    xv, yv = eval_windows(corpus.val, TINY.eval_windows, TINY.block_size)
    xm, _ = eval_windows(corpus.val, TINY.measure_windows, TINY.block_size)
    live = ablation_losses(model, xv, yv)
    assert live["delta"] == res["final"]["ablation"]["delta"]
    assert live["delta_se"] == res["final"]["ablation"]["delta_se"]
    assert evaluate(model, xv, yv)["mean"] == res["final"]["val_loss"]["mean"]
    stored = res["checkpoints"][-1]["measure"]["stream"]
    assert measure_zoo(model, xm)["stream"]["omega_sq"] == stored["omega_sq"]


def test_keeping_the_weights_leaves_the_result_as_it_is(kept):
    res, _ = kept
    plain = runs.run_result(TINY, PLAN)
    drop = lambda r: {k: v for k, v in r.items() if k not in _EXECUTION}   # noqa: E731
    assert drop(res) == drop(plain)
    assert res["config"] == asdict(TINY) and res["name"] == plain["name"]


def test_the_weights_are_loaded_with_weights_only(kept, monkeypatch):
    _, path = kept
    seen = []
    real = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: seen.append(k.get("weights_only")) or real(*a, **k))
    load_weights(path)
    assert seen == [True]


# ----------------------------------------------------------------------------- bad input

def test_a_partial_run_has_no_weights_to_store_and_says_so_before_training(tmp_path):
    with pytest.raises(ValueError, match="weights: a run stopped at step 2"):
        runs.run_result(TINY, PLAN, stop_at=2, weights=tmp_path / "w.pt")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("where", ["folder", "checkpoint", "under a file"])
def test_a_weights_path_that_cannot_be_written_is_refused_naming_weights(tmp_path, where):
    (tmp_path / "file").write_text("")
    path = {"folder": tmp_path, "checkpoint": tmp_path / "ck.pt", "under a file": tmp_path / "file" / "w.pt"}[where]
    with pytest.raises(ValueError, match="weights"):
        runs.run_result(TINY, PLAN, checkpoint=tmp_path / "ck.pt", weights=path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_a_non_finite_run_stores_no_weights(tmp_path, monkeypatch):
    real, calls = T.next_char_loss, {"n": 0}

    def poisoned(model, x, y):
        calls["n"] += 1
        loss = real(model, x, y)
        return loss * float("nan") if calls["n"] == 5 else loss

    monkeypatch.setattr(T, "next_char_loss", poisoned)
    res = runs.run_result(TINY, PLAN, weights=tmp_path / "w.pt")
    assert res["status"] == "non_finite" and not (tmp_path / "w.pt").exists()


def _saved(tmp_path, **change):
    """A weights file of the tiny run's model (untrained: what is checked is the file, not the
    training), with ``change`` applied to its record."""
    from resdecay_lib.nn.models import build
    model = build("pre_ln", 2, 16, 2, 85, 16, device="cpu")
    path = save_weights(model, TINY, tmp_path / "w.pt", TINY.steps, {"code_version": "git:test"})
    if change:
        rec = torch.load(path, weights_only=True)
        rec.update(change)
        torch.save(rec, path)
    return path


def test_load_weights_refuses_what_is_not_a_weights_file_naming_what_is_wrong(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not weights")
    with pytest.raises(ValueError, match="cannot be read as weights"):
        load_weights(text)
    with pytest.raises(ValueError, match="must be an existing file"):
        load_weights(tmp_path / "absent.pt")
    torch.save({"model": {}}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match=f"not a weights file of this library .*{WEIGHTS_FORMAT}"):
        load_weights(tmp_path / "other.pt")
    torch.save({"format": WEIGHTS_FORMAT, "x": Path("a")}, tmp_path / "code.pt")  # weights_only refuses the object
    with pytest.raises(ValueError, match="cannot be read as weights"):
        load_weights(tmp_path / "code.pt")


@pytest.mark.parametrize("change, words", [
    ({"state_dict": {"wte.weight": torch.full((85, 16), float("nan"))}}, "NaN"),
    ({"state_dict": {"wte.weight": torch.zeros(85, 16, dtype=torch.float64)}}, "float32"),
    ({"step": 3}, "last step 8"),
    ({"config": {**asdict(TINY), "n_layer": 0}}, "config"),
    ({"provenance": "git:test"}, "provenance must be a dict"),
])
def test_load_weights_refuses_a_malformed_record(tmp_path, change, words):
    with pytest.raises(ValueError, match=words):
        load_weights(_saved(tmp_path, **change))


def test_load_weights_refuses_the_weights_of_another_run(tmp_path):
    path = _saved(tmp_path)
    final = {"val_loss": {"mean": 2.0, "se": 0.01}}      # with the two lists below: the least finished result
    done = {"schema": 2, "status": "ok", "final": final, "checkpoints": [], "val_curve": [],
            "convergence": {"met": True, "diverged": False}}
    other = {**done, "name": "pre_ln_L2_s1", "seed": 1, "config": asdict(replace(TINY, seed=1))}
    with pytest.raises(ValueError, match="not those of stored 'pre_ln_L2_s1'"):
        load_weights(path, other)
    assert load_weights(path, {**done, "name": TINY.run_name(), "seed": 0, "config": asdict(TINY)}).name == "pre_ln_L2_s0"


def test_weights_that_do_not_fit_their_configuration_are_refused_when_the_model_is_built(tmp_path):
    w = load_weights(_saved(tmp_path, state_dict={"wte.weight": torch.zeros(85, 16)}))
    with pytest.raises(ValueError, match="does not fit the model of its configuration"):
        w.model()


# ----------------------------------------------------------------------------- the commands

def test_train_keep_weights_stores_them_beside_the_result(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["train", "--n-layer", "2", "--d-model", "16", "--n-head", "2", "--block-size", "16",
            "--batch-size", "4", "--steps", "8", "--warmup", "2", "--threads", "1", "--eval-windows", "6",
            "--measure-windows", "4", "--device", "cpu", "--out", str(out), "--keep-weights"]
    assert cli_main(argv) == 0
    assert f"final weights to {tmp_path / 'r.weights.pt'}" in capsys.readouterr().out
    res = json.loads(out.read_text())
    assert load_weights(tmp_path / "r.weights.pt", res).name == res["name"]
    assert "--keep-weights" in _help(capsys, "train")


def test_train_keep_weights_onto_the_checkpoint_exits_2_before_any_work(tmp_path, capsys):
    argv = ["train", "--steps", "1", "--out", str(tmp_path / "r.json"), "--checkpoint", str(tmp_path / "r.weights.pt"),
            "--keep-weights"]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--keep-weights" in err and "--checkpoint" in err
    assert not list(tmp_path.iterdir())


def _help(capsys, command):
    with pytest.raises(SystemExit):
        cli_main([command, "--help"])
    return capsys.readouterr().out


def test_a_sweep_with_keep_weights_stores_each_runs_weights_and_the_same_results(tmp_path, monkeypatch, seed_corpus):
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    spec = {**SPEC, "archs": ["pre_ln"], "depths": [1, 2]}
    done = S.run_sweep(spec, root=tmp_path / "kept", keep_weights=True, **QUIET)
    assert all(what.startswith("ok") and what.endswith(".weights.pt") for _, what in done), done
    S.run_sweep(spec, root=tmp_path / "plain", **QUIET)
    kept, plain = tmp_path / "kept" / "sweep", tmp_path / "plain" / "sweep"
    assert result_files(kept) == result_files(plain)
    assert sorted(p.name for p in kept.glob("*.weights.pt")) == ["pre_ln_L1_s0.weights.pt", "pre_ln_L2_s0.weights.pt"]
    assert not list(plain.glob("*.weights.pt"))
    for p in kept.glob("*.json"):
        load_weights(weights_path(p), json.loads(p.read_text()))
    # a run stored without weights is skipped, and the sweep says that it kept none
    again = S.run_sweep(spec, root=tmp_path / "plain", keep_weights=True, **QUIET)
    assert all(what == "done, skipped (stored before, without weights: not kept)" for _, what in again), again


def test_the_sweep_command_passes_keep_weights_on(tmp_path, monkeypatch, seed_corpus, capsys):
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    cfg = tmp_path / "s.toml"
    cfg.write_text(sweep_toml({**SPEC, "archs": ["pre_ln"], "depths": [1]}))
    assert cli_main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1", "--keep-weights"]) == 0
    assert (tmp_path / "sweep" / "pre_ln_L1_s0.weights.pt").is_file()
    assert "--keep-weights" in _help(capsys, "sweep")
