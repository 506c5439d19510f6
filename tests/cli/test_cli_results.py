"""Commands and API without guessing: ``train`` writes a default file and says where,
``train`` and ``sweep`` print each run's exponent beside the theorem's, one call
(:func:`resdecay_lib.training.runs.stored_exponent`) and one command (``resdecay analyse``) turn a
stored run into its exponent, reference and reading, ``--version`` names the commit, and a
:class:`~resdecay_lib.nn.pretrained.Pretrained` prints as one line."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from resdecay_lib import __version__
from resdecay_lib.__main__ import main
from resdecay_lib.cli.train import DEFAULT_OUT_DIR
from resdecay_lib.analysis import training_analysis
from resdecay_lib.nn import models, pretrained, probe
from resdecay_lib.nn.config import ARCH_NAMES
from resdecay_lib.training import runs, store

from sweep_fixtures import sweep_toml, with_field

ROOT = Path(__file__).resolve().parents[2]
STORED = ROOT / "results" / "train_long" / "pre_ln_L8_s0.json"
STORED_RESI = ROOT / "results" / "train_long" / "resi_dual_L8_s0.json"

#: a few steps of a four-block model, measured at step 0 and at the end (RunPlan's default
#: measure steps always end at the last step): the smallest run with an exponent over k = 2..L
TRAIN4 = ["train", "--arch", "pre_ln", "--n-layer", "4", "--d-model", "8", "--n-head", "2", "--block-size", "8",
          "--batch-size", "2", "--steps", "3", "--warmup", "1", "--threads", "1", "--eval-windows", "2",
          "--measure-windows", "4", "--device", "cpu"]
TRAIN1 = [a if a != "4" else "1" for a in TRAIN4]          # one block: no fit
NAME4 = "pre_ln_L4_s0"


def _exit_2_in_one_line(argv, capsys, *words):
    capsys.readouterr()
    rc = main(argv)
    cap = capsys.readouterr()
    err = cap.err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, (rc, err)
    assert all(w in err for w in words), err
    assert cap.out == ""
    return err


# ----------------------------------------------------------------------------- train: the default file

def test_train_without_out_writes_runs_slash_run_name_json_under_the_current_folder_and_says_so(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert not (tmp_path / "runs").exists()
    assert main(TRAIN4) == 0
    out = capsys.readouterr().out.splitlines()
    written = tmp_path / DEFAULT_OUT_DIR / f"{NAME4}.json"
    assert json.loads(written.read_text())["name"] == NAME4
    assert out[-1] == f"result written to {Path(DEFAULT_OUT_DIR) / f'{NAME4}.json'}"
    assert main(TRAIN4) == 0                   # again: the same file is replaced
    assert list((tmp_path / "runs").iterdir()) == [written]


def test_train_with_out_writes_there_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "sub" / "r.json"
    assert main(TRAIN1 + ["--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"result written to {out}"
    assert out.is_file() and not (tmp_path / "runs").exists()


def test_the_default_out_file_is_checked_as_out_is_before_any_work(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    default = tmp_path / "runs" / f"{NAME4}.json"
    default.mkdir(parents=True)                                      # a folder at the default path
    _exit_2_in_one_line(TRAIN4, capsys, "train: --out (not given: the default 'runs/pre_ln_L4_s0.json')",
                        "got the folder")
    default.rmdir()
    os.mkfifo(default)                                               # a FIFO: a write would block
    _exit_2_in_one_line(TRAIN4, capsys, "--out (not given", "FIFO")
    default.unlink()
    (tmp_path / "runs").rmdir()
    (tmp_path / "runs").write_text("")                               # the folder is a file
    _exit_2_in_one_line(TRAIN4, capsys, "--out (not given", "is a file, not a folder")
    (tmp_path / "runs").unlink()
    ck = tmp_path / "runs" / f"{NAME4}.json"                          # the checkpoint at the default path
    _exit_2_in_one_line(TRAIN4 + ["--checkpoint", str(ck)], capsys, "--out and --checkpoint must be two files")
    if os.geteuid() != 0:                                            # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        monkeypatch.chdir(locked)
        try:
            _exit_2_in_one_line(TRAIN4, capsys, "--out (not given", "is not writable")
        finally:
            locked.chmod(0o755)
    assert not (tmp_path / "runs").exists()                          # nothing was made


# ----------------------------------------------------------------------------- train and sweep: the exponent

def test_train_prints_its_runs_exponent_with_interval_the_theorems_and_the_reading(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(TRAIN4 + ["--out", "r.json"]) == 0
    out = capsys.readouterr().out.splitlines()
    res = json.loads((tmp_path / "r.json").read_text())
    e = runs.stored_exponent(res)
    assert e.k_min == 2 and e.k_max == 4 and (e.n, e.over) == (4, "sequences") and e.lo is not None
    assert out[0].startswith(f"{NAME4}: val loss ")
    assert out[1] == "exponent at step 3 (the last measured) of the per-layer change omega_k^2:"
    assert out[2:5] == runs.exponent_lines(e)
    assert out[2].startswith(f"fit: change ~ k^{e.exponent:.3f} [{e.lo:.3f}, {e.hi:.3f}] (95% percentile bootstrap")
    assert out[3].startswith(f"theorem: k^{e.reference:.3f} over the same k, {e.convention} convention (rho = ")
    assert out[4] == f"reading: {e.reading}"
    assert out[5] == "result written to r.json"


def test_train_of_fewer_than_four_blocks_says_it_has_no_fit(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(TRAIN1) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "fit: none (k = 2..L needs L >= 4 blocks for three points; pre_ln_L1_s0 has 1)"
    assert out[2] == "result written to runs/pre_ln_L1_s0.json"


def test_the_sweeps_table_gives_each_runs_exponent_interval_theorem_and_reading(tmp_path, capsys, monkeypatch,
                                                                               seed_corpus):
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    spec = {"out": "sw", "archs": ["pre_ln"], "depths": [4, 1], "seeds": [0],
            "base": {"d_model": 8, "n_head": 2, "block_size": 8, "batch_size": 2, "steps": 3, "warmup": 1,
                     "threads": 1, "device": "cpu", "eval_windows": 2, "measure_windows": 4},
            "plan": {"measure_steps": [0, 3], "eval_every": 3}}
    (tmp_path / "s.toml").write_text(sweep_toml(spec))
    assert main(["sweep", str(tmp_path / "s.toml"), "--root", str(tmp_path), "--workers", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    i = out.index(f"results in {tmp_path / 'sw'}:")
    header, row4, row1, legend = out[i + 1:i + 5]
    assert header.split() == ["run", "status", "final", "val", "loss", "exponent", "[95%]", "theorem", "reading",
                              "this", "sweep"]
    e = runs.stored_exponent(json.loads((tmp_path / "sw" / "pre_ln_L4_s0.json").read_text()))
    cells = re.split(r"\s{2,}", row4.strip())
    assert cells[:2] == ["pre_ln_L4_s0", "ok"]
    assert cells[3:6] == [f"{e.exponent:.3f} [{e.lo:.3f}, {e.hi:.3f}]", f"{e.reference:.3f} {e.convention}",
                          e.reading.split(" (")[0]]
    assert re.split(r"\s{2,}", row1.strip())[3:6] == ["-", "-", "none (L = 1 < 4)"]
    assert legend.startswith("exponent: omega_k^2 ~ k^p fitted over k = 2..L at each run's last measured step, "
                             "95% percentile bootstrap")


# ----------------------------------------------------------------------------- stored_exponent

def _change_from_stored(per):
    """A LayerChange carrying stored per-sequence curves, for probe.exponent (the other metrics unused)."""
    L = per.shape[1]
    nan = np.full(L, np.nan)
    return probe.LayerChange(k=np.arange(1, L + 1), n_sequences=per.shape[0], n_tokens=0,
                             per_sequence={"omega_sq": per},
                             **{m + s: (per.mean(0) if m == "omega_sq" and not s else nan)
                                for m in probe.LayerChange.METRICS for s in ("", "_se")})


@pytest.mark.parametrize("path", [STORED, STORED_RESI], ids=["pre_ln", "resi_dual"])
def test_stored_exponent_of_a_stored_run_is_chapter_7s_fit_at_each_step(path):
    r = json.loads(path.read_text())
    L = r["config"]["n_layer"]
    steps = r["plan"]["measure_steps"]
    assert runs.stored_exponent(r) == runs.stored_exponent(r, step=steps[-1])       # default: the last step
    for step in (steps[0], steps[len(steps) // 2], steps[-1]):
        e = runs.stored_exponent(r, step=step)
        per, G = training_analysis.omega_per_sequence(r, step), training_analysis.gram_at(r, step)        # Chapter 7's readers (part_of)
        direct = probe.exponent(_change_from_stored(per), k_min=2, level=0.95, gram=G)
        assert (e.exponent, e.lo, e.hi, e.reference, e.convention, e.rho) == \
            (direct.exponent, direct.lo, direct.hi, direct.reference, direct.convention, direct.rho)
        assert e.exponent == pytest.approx(training_analysis.curve_exponent(per.mean(0), 2), abs=1e-12)   # Chapter 7's per-seed slope
        ec = training_analysis.convention(training_analysis.rho(G))
        assert e.embedding_counted == ec
        assert e.reference == pytest.approx(training_analysis.reference_exponent(2, L, ec), abs=1e-12)
        assert (e.k_min, e.k_max, e.n) == (2, L, per.shape[0])


def test_the_part_read_is_the_one_chapter_7_reads():
    assert {a: runs.part_read(a) for a in ARCH_NAMES} == {a: training_analysis.part_of(a) for a in ARCH_NAMES}


_M = ("checkpoints", -1, "measure", "stream")


@pytest.mark.parametrize("path, value, words", [
    (("config",), KeyError, ["run pre_ln_L8_s0: config is missing"]),
    (("config", "arch"), "pre-ln", ["run pre_ln_L8_s0: config must hold the TrainConfig fields: arch must be one of"]),
    (("config", "n_layer"), "8", ["run pre_ln_L8_s0: config must hold the TrainConfig fields: n_layer must be"]),
    (("checkpoints",), {}, ["run pre_ln_L8_s0: checkpoints must be a list"]),
    (("checkpoints",), [], ["result: checkpoints holds no measured step"]),
    (("checkpoints", -1, "step"), True, ["run pre_ln_L8_s0: checkpoints[7].step must be"]),
    (("checkpoints", -1, "measure"), [], ["run pre_ln_L8_s0: checkpoints[7].measure must be"]),
    (("checkpoints", -1, "measure", "stream"), KeyError, ["result: checkpoints[step=3600].measure.stream must be"]),
    (_M + ("gram",), KeyError, ["checkpoints[step=3600].measure.stream.gram must be"]),
    (_M + ("gram",), [[1.0, 2.0]], ["measure.stream.gram must be [L+1, L+1] = [9, 9]"]),
    (_M + ("gram",), [[0.0] * 9] * 9, ["measure.stream.gram must be a Gram matrix"]),
    (_M + ("omega_sq_per_sequence",), [[0.1] * 7] * 4, ["omega_sq_per_sequence must have L = 8 columns"]),
    (_M + ("omega_sq_per_sequence",), [[0.1] * 7 + [None]] * 4, ["omega_sq_per_sequence holds NaN"]),
    (_M + ("omega_sq_per_sequence",), "x", ["omega_sq_per_sequence must be"]),
])
def test_stored_exponent_refuses_a_malformed_result_naming_the_field(path, value, words):
    r = with_field(json.loads(STORED.read_text()), path, value)
    with pytest.raises(ValueError) as exc:
        runs.stored_exponent(r)
    msg = str(exc.value)
    assert "\n" not in msg and all(w in msg for w in words), msg


def test_stored_exponent_refuses_a_step_not_measured_a_k_min_too_large_and_a_non_dict():
    r = json.loads(STORED.read_text())
    with pytest.raises(ValueError, match=r"^step must be one of the steps run pre_ln_L8_s0 was measured at "
                                         r"\[0, 20, 50, 150, 400, 1000, 1800, 3600\], got 5$"):
        runs.stored_exponent(r, step=5)
    with pytest.raises(ValueError, match=r"^k_min must leave at least three blocks .* at most L - 2 = 6; got 7$"):
        runs.stored_exponent(r, k_min=7)
    with pytest.raises(ValueError, match=r"^step must be an integer >= 0"):
        runs.stored_exponent(r, step=-1)
    with pytest.raises(TypeError, match=r"^result must be a stored run result"):
        runs.stored_exponent([r])


# ----------------------------------------------------------------------------- analyse

def test_analyse_prints_a_stored_runs_exponent_reference_and_reading_and_exits_0(capsys):
    before = STORED.read_bytes()
    r = json.loads(before)
    for argv, step in ((["analyse", str(STORED)], 3600), (["analyse", str(STORED), "--step", "400"], 400)):
        capsys.readouterr()
        assert main(argv) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0].startswith(f"pre_ln_L8_s0: pre_ln, 8 blocks, d=64, status ok; step {step} of 3600 "
                                 "(measured at [0, 20, 50, 150, 400, 1000, 1800, 3600]), 32 sequences")
        assert out[1:] == runs.exponent_lines(runs.stored_exponent(r, step=step))
        assert out[1].startswith("fit: change ~ k^") and out[2].startswith("theorem: k^") \
            and out[3].startswith("reading: ")
    assert main(["analyse", str(STORED), "--k-min", "3"]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith("k = 3..8")
    assert STORED.read_bytes() == before                       # only read


def test_analyse_exits_2_in_one_line_on_each_bad_input(tmp_path, capsys):
    good = tmp_path / "pre_ln_L8_s0.json"                     # named as the store names results
    shutil.copy(STORED, good)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "notes.json").write_text("not json")
    (tmp_path / "other.json").write_text(json.dumps({"claims": []}))
    broken = json.loads(STORED.read_text())
    broken["config"]["n_layer"] = 0
    (tmp_path / "badconfig.json").write_text(json.dumps(broken))
    no_gram = with_field(json.loads(STORED.read_text()), _M + ("gram",), KeyError)
    bad_named = tmp_path / "pre_ln_L8_s1.json"
    bad_named.write_text(json.dumps(no_gram))
    for argv, words in [
        ([str(tmp_path / "absent.json")], ["analyse: RUN.json must be an existing file"]),
        ([str(tmp_path)], ["RUN.json must be a regular file", "the folder"]),
        ([str(fifo)], ["RUN.json must be a regular file", "FIFO"]),
        ([str(tmp_path / "notes.json")], ["is not JSON"]),
        ([str(tmp_path / "other.json")], ["is not a run result"]),
        ([str(tmp_path / "badconfig.json")], ["config must hold the TrainConfig fields: n_layer must be"]),
        ([str(bad_named)], ["checkpoints[step=3600].measure.stream.gram must be"]),
        ([str(good), "--step", "5"], ["--step must be one of the steps run pre_ln_L8_s0 was measured at"]),
        ([str(good), "--step", "x"], ["--step must be an integer"]),
        ([str(good), "--k-min", "7"], ["--k-min must leave at least three blocks"]),
        ([str(good), "--k-min", "0"], ["--k-min must be an integer from 1"]),
    ]:
        _exit_2_in_one_line(["analyse"] + argv, capsys, *words)
    assert bad_named.is_file() and good.read_bytes() == STORED.read_bytes()   # nothing moved aside or changed
    assert not list(tmp_path.glob("*.corrupt*"))


def test_analyse_is_registered_and_its_help_names_the_fit(capsys):
    from resdecay_lib.__main__ import COMMAND_MODULES
    assert "cli.analyse" in COMMAND_MODULES
    with pytest.raises(SystemExit):
        main(["analyse", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "RUN.json" in text and "--step N" in text and "--k-min K" in text and "theorem's exponent" in text


def test_train_and_sweep_help_say_where_train_writes_and_that_both_print_the_exponent(capsys):
    texts = {}
    for cmd in ("train", "sweep"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        texts[cmd] = " ".join(capsys.readouterr().out.split())
    assert "default runs/<run name>.json under the current folder" in texts["train"]
    for text in texts.values():
        assert "theorem's exponent over the same k in the convention the measured rho chooses" in text


# ----------------------------------------------------------------------------- --version, Pretrained

def test_version_prints_the_commands_name_the_version_and_the_commit(capsys, monkeypatch):
    assert main(["--version"]) == 0
    line = capsys.readouterr().out
    git = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True)
    if git.returncode == 0:
        assert line == f"resdecay {__version__} (git:{git.stdout.strip()})\n"
        assert re.fullmatch(rf"resdecay {re.escape(__version__)} \(git:[0-9a-f]{{7,}}(-dirty)?\)\n", line) or \
            "-g" in line                                    # a tagged describe: tag-N-gHASH
    monkeypatch.setattr(store, "code_version", lambda: f"resdecay_lib {__version__}")   # an installed copy
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"resdecay {__version__} (no git commit: not run from a repository)\n"


def test_a_pretrained_prints_as_one_short_line_never_the_module_tree():
    m = models.build("pre_ln", 2, 8, 2, 5, 4, device="cpu")
    pre = pretrained.Pretrained("tiny", m, None, list(m.blocks), m, placement="pre_ln", note="n", source="s")
    for text in (repr(pre), str(pre), f"{pre}"):
        assert text == "Pretrained('tiny', pre_ln, 2 blocks, d_model=8, float32 on cpu)"
    assert pre.d_model == 8 and pre.n_layer == 2
    empty = pretrained.Pretrained("bare", torch.nn.Identity(), None, [], torch.nn.Identity())
    assert repr(empty) == "Pretrained('bare', unknown, 0 blocks, d_model=?)"
    doc = pretrained.Pretrained.__doc__
    for f in ("name", "model", "tokenizer", "blocks", "body", "placement", "note", "source", "n_layer", "d_model"):
        assert f"``{f}``" in doc, f
