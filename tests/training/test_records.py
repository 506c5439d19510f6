"""The typed run record: every stored result reads and writes back key for key, and a record
that is not what its schema says is refused naming the field."""
import copy
import json
from pathlib import Path

import pytest

from resdecay_lib.checks import ArgumentTypeError
from resdecay_lib.training.records import RUN_SCHEMA, RecordError, RunRecord, as_run
from resdecay_lib.training.store import load_run
from sweep_fixtures import with_field

ROOT = Path(__file__).resolve().parents[2]
STORED = ROOT / "results" / "train_long" / "pre_ln_L2_s0.json"


def _stored_results():
    for p in sorted((ROOT / "results").rglob("*.json")):
        rec = json.loads(p.read_text())
        if isinstance(rec, dict) and "config" in rec and "status" in rec:
            yield p, rec


def test_every_stored_result_reads_as_a_run_record_and_writes_back_key_for_key():
    n = 0
    for p, rec in _stored_results():
        r = RunRecord.from_dict(rec)
        assert r.schema == RUN_SCHEMA and r.to_dict() == rec, p
        n += 1
    assert n >= 100


def test_the_analysis_reads_fields():
    r = load_run(STORED)
    assert r.name == "pre_ln_L2_s0" and r.arch == "pre_ln" and r.n_layer == 2 and r.seed == 0
    assert r.measured_steps == list(r.plan.measure_steps)
    last = r.at_step(r.measured_steps[-1])
    assert last.val_loss.mean == pytest.approx(r.val_curve[-1].mean, abs=1e-4)
    assert len(last.measure["stream"].gram) == r.n_layer + 1
    assert len(r.final.ablation.delta) == r.n_layer and r.convergence.met in (True, False)
    assert r.code_version.startswith("git:") and "torch" in r.library_versions


def _broken(path, value):
    return with_field(json.loads(STORED.read_text()), path, value)


@pytest.mark.parametrize("path, value, words", [
    (("schema",), 1, "schema must be 2"),
    (("config", "n_layer"), KeyError, "config.n_layer is missing"),
    (("config", "lr"), -1.0, "config must hold the TrainConfig fields: lr"),
    (("status",), "done", "status must be one of"),
    (("final", "val_loss", "mean"), "x", "final.val_loss.mean must be a finite number"),
    (("final", "val_loss", "se"), -1.0, "final.val_loss.se must be a finite number >= 0"),
    (("checkpoints", 1, "step"), -3, "checkpoints[1].step must be an integer >= 0"),
    (("checkpoints", 1, "measure", "stream", "gram"), "x", "checkpoints[1].measure.stream.gram must be a list"),
    (("val_curve", 0), [], "val_curve[0] must be a record"),
    (("convergence", "met"), "yes", "convergence.met must be true or false"),
    (("plan", "measure_steps"), "0, 20", "plan.measure_steps must be a list"),
])
def test_a_record_not_of_its_schema_is_refused_naming_the_run_and_the_field(path, value, words):
    with pytest.raises(RecordError) as info:
        RunRecord.from_dict(_broken(path, value))
    msg = str(info.value)
    assert msg.startswith("run pre_ln_L2_s0: ") and words in msg and "\n" not in msg, msg


def test_a_run_stopped_early_needs_no_final_and_a_diverged_one_names_its_step():
    rec = _broken(("final",), KeyError)
    assert RunRecord.from_dict({**rec, "status": "partial"}).final is None
    with pytest.raises(RecordError, match="failed_step is missing"):
        RunRecord.from_dict({**rec, "status": "non_finite"})
    assert RunRecord.from_dict({**rec, "status": "non_finite", "failed_step": 7}).failed_step == 7


def test_as_run_takes_a_record_or_its_dict_and_names_the_parameter():
    r = load_run(STORED)
    assert as_run(r) is r and as_run(json.loads(STORED.read_text())) == r
    with pytest.raises(RecordError, match=r"^stored: run pre_ln_L2_s0: final is missing"):
        as_run(_broken(("final",), KeyError), "stored")
    with pytest.raises(ArgumentTypeError, match="^stored must be a stored run result"):
        as_run([r], "stored")


def test_at_step_names_the_steps_the_run_has():
    r = load_run(STORED)
    with pytest.raises(ValueError, match=r"step must be a step run pre_ln_L2_s0 has a checkpoint at \(\[0, 20"):
        r.at_step(7)


def test_load_run_names_the_file_and_the_field(tmp_path):
    bad = tmp_path / "pre_ln_L2_s0.json"
    bad.write_text(json.dumps(_broken(("final", "val_loss", "mean"), None)))
    with pytest.raises(ValueError, match=r"^path '.*pre_ln_L2_s0\.json': run pre_ln_L2_s0: final\.val_loss\.mean"):
        load_run(bad)
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(ValueError, match="is not JSON"):
        load_run(tmp_path / "x.json")
    (tmp_path / "y.json").write_text(json.dumps({"claims": []}))
    with pytest.raises(ValueError, match="is not a run result"):
        load_run(tmp_path / "y.json", name="RUN.json")
    assert copy.deepcopy(load_run(STORED)) == load_run(STORED)


def test_a_diverged_or_unfinished_run_writes_back_key_for_key():
    """What run_result writes for a run that did not finish well: null losses (mean and se) in
    the curve and at a checkpoint, a convergence verdict without an improvement, no final
    losses for a non-finite run, and a field this reader does not know, kept."""
    rec = json.loads(STORED.read_text())
    rec["convergence"]["improvement"] = None
    rec["val_curve"][-1].update(mean=None, se=None)
    rec["checkpoints"][-1]["val_loss"] = {"mean": None, "se": None}
    rec["a_later_field"] = {"kept": True}
    assert RunRecord.from_dict(rec).to_dict() == rec
    diverged = {**copy.deepcopy(rec), "status": "non_finite", "failed_step": 12}
    del diverged["final"]
    back = RunRecord.from_dict(diverged)
    assert back.failed_step == 12 and back.final is None and back.to_dict() == diverged


def test_a_record_without_its_schema_or_with_another_seed_is_refused():
    with pytest.raises(RecordError, match="^run pre_ln_L2_s0: schema is missing"):
        RunRecord.from_dict(_broken(("schema",), KeyError))
    with pytest.raises(RecordError, match="seed must be the config's seed 0, got 3"):
        RunRecord.from_dict(_broken(("seed",), 3))
    with pytest.raises(RecordError, match="convergence is missing"):
        RunRecord.from_dict(_broken(("convergence",), KeyError))
    with pytest.raises(RecordError, match=r"val_curve\[0\]\.mean is missing"):
        RunRecord.from_dict(_broken(("val_curve", 0, "mean"), KeyError))
