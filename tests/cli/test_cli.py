"""The command line as a user meets it: the ``resdecay`` console script and ``--version``,
``train --help``, ``measure --device/--dtype`` with its fit and reading, unknown model names,
``record``'s checks and its records' provenance, the sweep's folder and final table, the tiny
sweep, and the progress and resume messages."""
import dataclasses
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import torch

from resdecay_lib import __version__
from resdecay_lib.nn import pretrained, probe, progress
from resdecay_lib.training import train as T
from resdecay_lib.__main__ import main

ROOT = Path(__file__).resolve().parents[2]


def _help(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    return " ".join(capsys.readouterr().out.split())       # argparse's line wrapping undone


# ----------------------------------------------------------------------------- the script

def test_the_resdecay_console_script_is_declared_and_prints_the_version(capsys):
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"resdecay": "resdecay_lib.__main__:main"}
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith(f"resdecay {__version__} (")   # and the commit (test_cli_results)


def test_the_installed_resdecay_script_runs_and_names_itself_in_errors():
    script = Path(sys.executable).with_name("resdecay")
    if not script.is_file():
        script = shutil.which("resdecay")
        if script is None:
            pytest.skip("the console script is not installed (pip install -e . installs it)")
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith(f"resdecay {__version__} (")
    bad = subprocess.run([str(script), "nope"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("resdecay: ") and len(bad.stderr.splitlines()) == 1


def test_train_help_shows_each_options_range_and_default_and_the_valid_arch_values(capsys):
    from resdecay_lib.nn.models import ARCHS
    text = _help(["train", "--help"], capsys)
    for f in dataclasses.fields(T.TrainConfig):
        if f.name != "arch":
            dom = T.TrainConfig.DOMAINS[f.name].describe()
            assert f"--{f.name.replace('_', '-')} {f.name.upper()} {dom}; default {f.default!r}" in text, f.name
    assert f"--arch ARCH the norm placement, one of {', '.join(ARCHS)}" in text
    assert "default 'pre_ln'" in text and "an integer in [1, 4096]; default 6" in text


def test_measure_help_offers_device_and_dtype(capsys):
    text = _help(["measure", "--help"], capsys)
    assert "--device DEVICE" in text and "cuda:N or auto" in text
    assert "--dtype DTYPE" in text and "float32, bfloat16, float16, float64" in text


# ----------------------------------------------------------------------------- measure

def _save_tiny_gpt2(folder, n_layer=5):
    hf = pytest.importorskip("hf_tiny")
    torch.manual_seed(0)
    cfg = hf.transformers.GPT2Config(n_layer=n_layer, n_embd=32, n_head=2, vocab_size=hf.V, n_positions=32,
                                     bos_token_id=0, eos_token_id=0)
    hf.transformers.GPT2LMHeadModel(cfg).eval().save_pretrained(folder)
    hf.tiny_tokenizer().save_pretrained(folder)
    return hf.TEXT


def test_measure_runs_in_the_chosen_dtype_and_prints_the_fit_the_theorems_exponent_and_a_reading(tmp_path, capsys):
    folder = tmp_path / "tiny-gpt2"
    text = tmp_path / "text.txt"
    text.write_text(_save_tiny_gpt2(folder))
    argv = ["measure", str(folder), "--text", str(text), "--n-seq", "4", "--n-tokens", "12", "--threads", "1",
            "--out", str(tmp_path / "out")]
    assert main(argv + ["--dtype", "bfloat16", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "bfloat16 on cpu" in out
    fit_line = next(line for line in out.splitlines() if line.startswith("fit: "))
    assert fit_line.startswith("fit: change ~ k^") and "k = 2..5" in fit_line and "over 4 sequences" in fit_line
    theorem = next(line for line in out.splitlines() if line.startswith("theorem: "))
    assert "over the same k" in theorem and "convention (rho = " in theorem
    reading = next(line for line in out.splitlines() if line.startswith("reading: "))
    assert "theorem" in reading
    # float32 (the default): the same lines, from probe.exponent on the same stream
    assert main(argv) == 0
    out32 = capsys.readouterr().out
    pre = pretrained.load(folder)
    inputs, mask = pretrained.sample_inputs(pre.tokenizer, text.read_text(), 4, 12)
    stream, ch = probe.measure(pre.body, inputs, mask, blocks=pre.blocks)
    e = probe.exponent(ch, k_min=2, stream=stream, mask=mask)
    assert f"fit: change ~ k^{e.exponent:.3f} [{e.lo:.3f}, {e.hi:.3f}]" in out32
    assert f"theorem: k^{e.reference:.3f} over the same k, {e.convention} convention" in out32
    assert f"reading: {e.reading}" in out32


def test_measure_of_a_model_too_shallow_for_a_fit_says_so(tmp_path, capsys):
    folder = tmp_path / "tiny-gpt2"
    text = tmp_path / "text.txt"
    text.write_text(_save_tiny_gpt2(folder, n_layer=3))
    assert main(["measure", str(folder), "--text", str(text), "--n-seq", "2", "--n-tokens", "8", "--threads", "1",
                 "--out", str(tmp_path)]) == 0
    assert "fit: none (k = 2..L needs L >= 4 blocks" in capsys.readouterr().out


@pytest.mark.parametrize("extra, words", [
    (["--dtype", "int8"], "--dtype must be one of float32, bfloat16, float16, float64"),
    (["--device", "tpu"], "--device"),
    (["--device", "cuda", "--skip-cost"], "--skip-cost runs on the CPU only"),
])
def test_measure_rejects_a_bad_dtype_or_device_in_one_line_before_loading(tmp_path, capsys, monkeypatch, extra, words):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)       # --device cuda passes its own check
    text = tmp_path / "text.txt"
    text.write_text("To be or not to be. " * 100)
    monkeypatch.setattr(pretrained, "load", lambda *a, **k: pytest.fail("loaded a model"))
    assert main(["measure", "smollm2-135m", "--text", str(text), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("measure: ") and words in err and len(err.splitlines()) == 1, err


def test_an_unknown_model_name_lists_the_packaged_models(tmp_path, capsys):
    text = tmp_path / "text.txt"
    text.write_text("To be or not to be. " * 100)
    assert main(["measure", "HuggingFaceTB/SmolLM2-135M", "--text", str(text), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'HuggingFaceTB/SmolLM2-135M' does not exist here" in err
    assert all(name in err for name in pretrained.PACKAGED) and "Nothing is downloaded" in err


# ----------------------------------------------------------------------------- record

def test_record_command_rejects_bad_input_before_any_work(tmp_path, capsys):
    assert main(["record", "gpt-5", "--out", str(tmp_path)]) == 2
    assert "MODEL must be one of" in capsys.readouterr().err
    assert main(["record", "smollm2-135m", "--text", "poems", "--out", str(tmp_path)]) == 2
    assert "--text must be one of shakespeare, pydoc" in capsys.readouterr().err
    assert main(["record", "smollm2-135m", "--n-seq", "1", "--out", str(tmp_path)]) == 2
    assert "--n-seq" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_record_command_records_carry_the_device_cpu_capability_and_seeds(tmp_path, monkeypatch, capsys):
    from resdecay_lib.cli import record
    monkeypatch.setattr(record.pretrained, "load", lambda name, progress=False: object())
    monkeypatch.setattr(record, "book_text", lambda t: "text")
    monkeypatch.setattr(record, "measure_model", lambda pre, text, *a, **kw: {"model": "m"})
    monkeypatch.setattr(record, "measure_stream", lambda pre, text, *a, **kw: {"sublayer_omega_sq": [[0.5]],
                                                                                    "change": {}})
    assert main(["record", "smollm2-135m", "--text", "pydoc", "--out", str(tmp_path), "--threads", "1"]) == 0
    rec = json.loads((tmp_path / "smollm2-135m__pydoc.json").read_text())
    for prov in (rec["provenance"], rec["stream"]["provenance"]):    # the record's and its stream section's
        for key in ("code_version", "library_versions", "wall_s", "threads", "device", "cpu_model", "cpu_capability",
                    "seeds", "peak_rss_mib"):
            assert key in prov, key
        assert prov["seeds"]["global_generators"] == record.SEED and prov["threads"] == 1
        assert prov["peak_rss_mib"] > 0
    assert rec["stream"]["sublayer_omega_sq"] == [[0.5]] and "change" not in rec["stream"]


# ----------------------------------------------------------------------------- train and sweep

TRAIN = ["train", "--arch", "pre_ln", "--n-layer", "1", "--d-model", "16", "--n-head", "2", "--block-size", "16",
         "--batch-size", "4", "--steps", "4", "--warmup", "1", "--threads", "1", "--eval-windows", "4",
         "--measure-windows", "3"]


def _cfg_of(argv):
    """The TrainConfig the train command builds from ``argv`` (device 'auto', as it does)."""
    kw = {a[2:].replace("-", "_"): b for a, b in zip(argv[1::2], argv[2::2])}
    return T.TrainConfig.from_dict({k: type(getattr(T.TrainConfig(), k))(v) for k, v in kw.items()})


def test_a_run_resumed_from_its_checkpoint_says_resumed_from_step_n(tmp_path, capsys):
    from resdecay_lib.training import runs
    ck, cfg, plan = tmp_path / "run.pt", _cfg_of(TRAIN), runs.RunPlan((0, 2, 4))
    runs.run_result(cfg, plan, checkpoint=ck, stop_at=2, progress=False)     # a run stopped at step 2
    assert "resumed" not in capsys.readouterr().err
    assert runs.run_result(cfg, plan, checkpoint=ck)["status"] == "ok"        # as a sweep resumes it
    assert f"pre_ln_L1_s0: resumed from step 2 of 4 ({ck})" in capsys.readouterr().err


def test_training_in_a_log_prints_periodic_progress_lines(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(progress, "PROGRESS_EVERY_S", 0.0)       # a line at every step
    T.train(_cfg_of(TRAIN))                                       # progress None; stderr is not a terminal
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("pre_ln_L1_s0: ")]
    assert [line.split(",")[0] for line in lines] == [f"pre_ln_L1_s0: {i}/4 ({25 * i}%)" for i in (1, 2, 3, 4)]
    assert "loss " in lines[0]


def test_a_sweep_prints_its_output_folder_first_and_a_table_of_runs_status_and_final_loss_last(
        tmp_path, capsys, monkeypatch, seed_corpus):
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    cfg = tmp_path / "s.toml"
    cfg.write_text('out = "sweep"\narchs = ["pre_ln"]\ndepths = [1]\nseeds = [0]\n[base]\nd_model = 16\n'
                   'n_head = 2\nblock_size = 16\nbatch_size = 4\nsteps = 4\nwarmup = 1\nthreads = 1\n'
                   'device = "cpu"\neval_windows = 4\nmeasure_windows = 3\n[plan]\nmeasure_steps = [0, 4]\n'
                   'eval_every = 2\n')
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    folder = tmp_path / "sweep"
    assert out[0] == f"sweep sweep: 1 runs, results in {folder}"
    loss = json.loads((folder / "pre_ln_L1_s0.json").read_text())["final"]["val_loss"]["mean"]
    # the table's last line is its legend; an L = 1 run has no exponent (test_cli_results pins the columns)
    assert out[-4] == f"results in {folder}:"
    assert out[-3].split() == ["run", "status", "final", "val", "loss", "exponent", "[95%]", "theorem", "reading",
                               "this", "sweep"]
    assert out[-2].split()[:3] == ["pre_ln_L1_s0", "ok", f"{loss:.4f}"] and out[-2].split()[-3] == "ok,"
    assert out[-1].startswith("exponent: omega_k^2 ~ k^p fitted over k = 2..L")
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1"]) == 0      # again: skipped
    assert capsys.readouterr().out.splitlines()[-2].split()[-2:] == ["done,", "skipped"]


def test_the_tiny_config_is_a_sweep_of_two_placements_at_depths_2_and_4_of_width_32():
    from resdecay_lib.training import sweep as S
    spec = S.load_sweep(ROOT / "configs" / "tiny.toml")
    runs = S.sweep_runs(spec)
    assert sorted((c.arch, c.n_layer) for c in runs) == [("post_ln", 2), ("post_ln", 4), ("pre_ln", 2), ("pre_ln", 4)]
    assert {(c.d_model, c.seed, c.threads, c.device) for c in runs} == {(32, 0, 1, "cpu")}
    assert all(100 <= c.steps <= 1000 for c in runs)


def test_measure_threads_default_honours_omp_num_threads(monkeypatch):
    """The Makefile runs everything on one thread (OMP_NUM_THREADS=1); measure's default follows it, else 2."""
    import argparse

    from resdecay_lib.cli import measure
    for env, want in (("1", "1"), (None, "2")):
        if env is None:
            monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
        else:
            monkeypatch.setenv("OMP_NUM_THREADS", env)
        parser = argparse.ArgumentParser()
        measure.register_cli(parser.add_subparsers())
        assert parser.parse_args(["measure", "m", "--text", "t"]).threads == want
