"""Bad input to the public functions: wrong types, out-of-range, empty, non-finite and
mismatched arguments, and sizes far beyond the documented bounds, each raise ValueError or
TypeError naming the parameter, at once (no hang, no MemoryError, no numerical garbage);
every command's validation error is one line and exit code 2.

Each case runs under a 10 s alarm, so a hang fails the test instead of the suite.
"""
import inspect
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
import torch

from resdecay_lib import baselines, fit, gaussian, models, probe, stats, sweep, theory
from resdecay_lib.__main__ import main
from resdecay_lib.runs import RunPlan
from resdecay_lib.train import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
NAN, INF = float("nan"), float("inf")
HUGE = 10**12

# bad values by kind of parameter
INT = [True, 2.5, -1, 0, NAN, INF, 1j, "3", None]          # a positive integer
SEED = [True, 2.5, -1, NAN, 1j, "3", None]                 # an integer >= 0
POS = [NAN, INF, -INF, -1, 0, 1j, "3", None, True]         # a positive finite real
NONNEG = [NAN, INF, -1, 1j, "3", None, True]               # a finite real >= 0
UNIT = [NAN, INF, -1, 0, 1, 1.5, 1j, "3", None, True]      # a real in (0, 1)
INDEX = [True, 2.5, -1, 0, 1, NAN, 1j, "3", None, sp.Rational(1, 2), sp.Float(2.0), sp.I, sp.oo]
ARRAY = [[], [NAN, 1.0, 2.0], [1.0, INF, 2.0], "abc", None]

STREAM = torch.randn(4, 2, 3, 8, generator=torch.Generator().manual_seed(0))
K = np.arange(2, 10)
Y = K ** -0.5
BUILD = dict(arch="pre_ln", n_layer=1, d_model=8, n_head=2, vocab_size=5, block_size=4,
             device="cpu")
SPEC = {"out": "sweep", "archs": ["pre_ln"], "depths": [1], "seeds": [0],
        "base": {"d_model": 16, "n_head": 2, "block_size": 16, "batch_size": 4, "steps": 12}}


# (id, function, valid keyword arguments, parameter, bad values)
CASES = [
    # theory
    ("omega_sq", theory.omega_sq, {"k": 3}, "k", INDEX),
    ("omega_sq/embedding_counted", theory.omega_sq, {"k": 3}, "embedding_counted", [1, "yes", None]),
    ("correlation_rho", theory.correlation_rho, {"k": 3}, "k", INDEX),
    ("omega", theory.omega, {"k": 3}, "k", INDEX),
    ("mean_abs_change", theory.mean_abs_change, {"k": 3}, "k", INDEX),
    ("omega_closed_form", theory.omega_closed_form, {"k": 3}, "k", INDEX),
    ("output_change_var", theory.output_change_var, {"N": 3}, "N", INDEX),
    ("omega_sq_finite_d/d", theory.omega_sq_finite_d, {"k": 3, "d": 8}, "d", INDEX),
    ("omega_sq_finite_d/order", theory.omega_sq_finite_d, {"k": 3, "d": 8}, "order",
     [True, 2.0, 0, 3, [1], None, "2"]),
    ("omega_sq_exact_d/d", theory.omega_sq_exact_d, {"k": 3, "d": 8}, "d", INDEX + [HUGE]),
    ("omega_sq_exact_d/k", theory.omega_sq_exact_d, {"k": 3, "d": 8}, "k", INDEX),
    ("expected_cos_exact/rho", theory.expected_cos_exact, {"rho": 0.5, "m": 4}, "rho",
     [2, -1.5, NAN, INF, 1j, "3", None, True, sp.I]),
    ("expected_cos_exact/m", theory.expected_cos_exact, {"rho": 0.5, "m": 4}, "m",
     [0, -1, NAN, INF, 1j, "3", None, True, HUGE]),
    ("expected_cos_series", theory.expected_cos_series, {}, "order", [True, 2.0, 0, 3, [1], None]),
    ("expected_cos_exact_series", theory.expected_cos_exact_series, {}, "order", [True, 2.0, 0, 3, None]),
    ("eps_bias_bound/eps", theory.eps_bias_bound, {"k": 3, "d": 8}, "eps", NONNEG),
    ("eps_bias_bound/sigma", theory.eps_bias_bound, {"k": 3, "d": 8}, "sigma", POS),
    ("eps_bias_bound/d", theory.eps_bias_bound, {"k": 3, "d": 8}, "d", INDEX + [3]),
    ("omega_series/n_terms", theory.omega_series, {"k": 5}, "n_terms", INT + [HUGE]),
    ("omega_series/k", theory.omega_series, {"k": 5}, "k", INDEX),
    ("omega_series_coefficient", theory.omega_series_coefficient, {}, "m",
     [True, 2.5, 0, -1, 1j, "3", None, sp.Rational(1, 2), HUGE]),
    ("change_sq_rc_series", theory.change_sq_rc_series, {}, "order", INT + [2, HUGE]),
    ("change_sq_rc/r", theory.change_sq_rc, {"r": 0.5, "c": 0.1}, "r", [-1, NAN, INF, 1j, "3", None, True]),
    ("change_sq_rc/c", theory.change_sq_rc, {"r": 0.5, "c": 0.1}, "c", [2, NAN, INF, 1j, "3", None, True]),
    ("change_sq_finite_d/d", theory.change_sq_finite_d, {"r": 0.5, "c": 0.1, "d": 8}, "d", INT + [1]),
    ("mean_abs_finite_d/d", theory.mean_abs_finite_d, {"r": 0.5, "c": 0.1, "d": 8}, "d", INT + [1]),
    ("output_change_sq_finite_d", theory.output_change_sq_finite_d, {"N": 3, "d": 8}, "N", INDEX),
    ("omega_sq_hetero", theory.omega_sq_hetero, {}, "s2", ARRAY + [[1.0], [1.0, -1.0], [1.0, 0.0]]),
    ("rc_hetero", theory.rc_hetero, {}, "s2", ARRAY + [[1.0]]),
    ("feedback_fixed_point/a", theory.feedback_fixed_point, {"a": -0.5, "b": 1.0}, "a",
     [0, 1, NAN, INF, 1j, "3", None, True]),
    ("feedback_recursion/depth", theory.feedback_recursion, {"a": 0.1, "b": 1.0, "depth": 4},
     "depth", INT + [1, HUGE]),
    ("feedback_recursion/b", theory.feedback_recursion, {"a": 0.1, "b": 1.0, "depth": 4}, "b",
     [0, NAN, INF, 1j, "3", None, True]),
    ("unit_fraction_denominator", theory.unit_fraction_denominator, {}, "ratio",
     [0, -1, 1.5, NAN, INF, 1j, "3", None, True]),
    ("layer_norm_identity_residual", theory.layer_norm_identity_residual, {}, "d", INT + [1, 7, HUGE]),
    # gaussian
    ("layer_norm/eps", gaussian.layer_norm, {"x": np.ones((2, 4))}, "eps", NONNEG + [-10]),
    ("layer_norm/x", gaussian.layer_norm, {}, "x",
     [np.array([]), np.zeros((3, 0)), np.array([1.0, NAN]), np.array([1j, 2j]), "abc", None]),
    ("simulate/depth", gaussian.simulate, {"depth": 3, "d": 4, "n_samples": 4}, "depth", INT + [1, HUGE]),
    ("simulate/d", gaussian.simulate, {"depth": 3, "d": 4, "n_samples": 4}, "d", INT + [1, HUGE]),
    ("simulate/n_samples", gaussian.simulate, {"depth": 3, "d": 4, "n_samples": 4}, "n_samples",
     INT + [1, HUGE]),
    ("simulate/seed", gaussian.simulate, {"depth": 3, "d": 4, "n_samples": 4}, "seed", SEED),
    ("simulate/sigma", gaussian.simulate, {"depth": 3, "d": 4, "n_samples": 4}, "sigma",
     [[1.0, 1.0], [1.0, NAN, 1.0], [1.0, -1.0, 1.0], "abc"]),
    ("simulate_rc/r", gaussian.simulate_rc, {"r": 0.5, "c": 0.1, "d": 4, "n_samples": 4}, "r",
     [-1, NAN, INF, 1j, "3", None, True, HUGE]),
    ("simulate_rc/n_samples", gaussian.simulate_rc, {"r": 0.5, "c": 0.1, "d": 4, "n_samples": 4},
     "n_samples", INT + [HUGE]),
    ("simulate_feedback/b", gaussian.simulate_feedback,
     {"depth": 3, "d": 4, "n_samples": 4, "a": 0.1, "b": 1.0}, "b", [0, NAN, INF, 1j, "3", None, 11]),
    ("simulate_feedback/d", gaussian.simulate_feedback,
     {"depth": 3, "d": 4, "n_samples": 4, "a": 0.1, "b": 1.0}, "d", INT + [HUGE]),
    ("normal_quantile", gaussian.normal_quantile, {}, "p", UNIT),
    ("bonferroni_z_crit/n_tests", gaussian.bonferroni_z_crit, {}, "n_tests", INT),
    ("bonferroni_z_crit/alpha", gaussian.bonferroni_z_crit, {"n_tests": 3}, "alpha", UNIT),
    # fit
    ("loglog_slope/y", fit.loglog_slope, {"k": K}, "y",
     [np.zeros(8), -Y, np.r_[Y[:-1], NAN], np.r_[Y[:-1], INF], Y[:3], np.array([]), "abc", None]),
    ("loglog_slope/k", fit.loglog_slope, {"y": Y}, "k",
     [np.r_[0, K[1:]], -K, np.r_[K[:-1], NAN], np.full(8, 3), "abc", None]),
    ("power_law/y", fit.power_law, {"k": K}, "y", [-Y, np.ones((2, 3)), "abc", None]),
    ("power_law/k", fit.power_law, {"y": Y}, "k", [np.array([]), np.r_[0, K[1:]], "abc", None]),
    ("power_law/n_boot", fit.power_law, {"k": K, "y": np.tile(Y, (3, 1))}, "n_boot", INT + [HUGE]),
    ("power_law/level", fit.power_law, {"k": K, "y": Y}, "level", UNIT),
    ("power_law/k_min", fit.power_law, {"k": K, "y": Y}, "k_min", [NAN, INF, 1j, "3", True, 9]),
    # probe
    ("layer_change/eps", probe.layer_change, {"stream": STREAM}, "eps", NONNEG + [-1, 1j]),
    ("layer_change/stream", probe.layer_change, {}, "stream",
     [STREAM[:1], STREAM[:, :0], STREAM.long(), torch.full((3, 1, 2, 4), NAN), STREAM[0, 0]]),
    ("layer_change/mask", probe.layer_change, {"stream": STREAM}, "mask",
     [np.ones((3, 3)), np.zeros((2, 3)), np.full((2, 3), NAN), -np.ones((2, 3))]),
    # models
    *[(f"build/{p}", models.build, BUILD, p, INT + [HUGE])
      for p in ("n_layer", "d_model", "n_head", "vocab_size", "block_size")],
    ("build/seed", models.build, BUILD, "seed", SEED),
    ("build/arch", models.build, BUILD, "arch", ["pre-ln", None, 3, ""]),
    ("build/ln_eps", models.build, BUILD, "ln_eps", NONNEG + [-1]),
    ("build/init_std", models.build, BUILD, "init_std", POS),
    ("build/deepnorm_alpha", models.build, {**BUILD, "arch": "deepnorm"}, "deepnorm_alpha",
     [v for v in POS if v is not None]),  # None: the default (2L)^(1/4)
    ("build/mix_ln_frac", models.build, {**BUILD, "arch": "mix_ln"}, "mix_ln_frac",
     [NAN, INF, -0.1, 1.5, 1j, "3", None, True]),
    ("build/mlp_ratio", models.build, BUILD, "mlp_ratio", INT + [HUGE]),
    ("build/bias", models.build, BUILD, "bias", [1, "yes", None]),
    # stats
    ("t_cdf/df", stats.t_cdf, {"t": 1.0}, "df", POS),
    ("t_cdf/t", stats.t_cdf, {"df": 3}, "t", [NAN, "3"]),
    ("t_quantile/p", stats.t_quantile, {"df": 3}, "p", UNIT),
    ("t_interval/values", stats.t_interval, {}, "values",
     [[], [1.0, 2.0], [1.0, NAN, 2.0], None, np.ones((3, 3))]
     + ["abc"]),
    ("t_interval/level", stats.t_interval, {"values": [1.0, 2.0, 3.0]}, "level", UNIT),
    ("equivalent/margin", stats.equivalent, {"values": [1.0, 2.0, 3.0], "reference": 2.0}, "margin",
     POS[:-1] + [True]),
    ("equivalent/reference", stats.equivalent, {"values": [1.0, 2.0, 3.0], "margin": 1.0}, "reference",
     [NAN, "3"]),
    ("bonferroni/m", stats.bonferroni, {"alpha": 0.05}, "m", INT),
    ("bonferroni/alpha", stats.bonferroni, {"m": 3}, "alpha", UNIT),
    ("spearman/y", stats.spearman, {"x": [1.0, 2.0, 3.0]}, "y",
     [[1.0, 2.0], [1.0, 1.0, 1.0], [1.0, NAN, 2.0]]),
    # baselines
    ("ngram_loss/n", baselines.ngram_loss, {"train": np.arange(10) % 3, "val": np.arange(10) % 3,
                                            "vocab_size": 3}, "n", INT + [5, HUGE]),
    ("ngram_loss/vocab_size", baselines.ngram_loss, {"train": np.arange(10) % 3, "val": np.arange(10) % 3,
                                                     "n": 2}, "vocab_size", INT + [2, HUGE]),
    ("ngram_loss/alpha", baselines.ngram_loss, {"train": np.arange(10) % 3, "val": np.arange(10) % 3,
                                                "n": 2, "vocab_size": 3}, "alpha",
     POS[:-1] + [True]),
    ("ngram_loss/train", baselines.ngram_loss, {"val": np.arange(10) % 3, "n": 2, "vocab_size": 3},
     "train", [np.array([], dtype=int), np.array([0.5, 1.5, 2.0]), np.array([0, 5, 1]), np.ones((2, 5), int)]),
]


def _cases():
    for cid, fn, kwargs, param, bads in CASES:
        for i, bad in enumerate(bads):
            if isinstance(bad, type(pytest.param(0))):
                yield pytest.param(fn, kwargs, param, bad.values[0], id=f"{cid}-{i}", marks=bad.marks)
            else:
                yield pytest.param(fn, kwargs, param, bad, id=f"{cid}-{i}")


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang("the call did not return within 10 s")


@pytest.mark.parametrize("fn, kwargs, param, bad", list(_cases()))
def test_bad_argument_is_rejected_naming_the_parameter(fn, kwargs, param, bad):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(10)
    try:
        with pytest.raises((ValueError, TypeError)) as info:
            fn(**{**kwargs, param: bad})
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert re.search(rf"(?<![\w']){re.escape(param)}(?!\w)", str(info.value)), f"{type(info.value).__name__}: {info.value}"


def test_valid_calls_of_the_fuzzed_functions_still_work():
    """The valid arguments of the table above are valid (so each bad case tests one argument)."""
    for cid, fn, kwargs, param, bads in CASES:
        default = inspect.signature(fn).parameters.get(param)
        if param in kwargs or (default is not None and default.default is not inspect.Parameter.empty):
            fn(**kwargs)
    assert float(theory.omega_sq_exact_d(3, theory.MAX_EXACT_D)) == pytest.approx(0.36701, abs=1e-4)
    assert float(theory.omega_sq(sp.Integer(4))) == pytest.approx(float(theory.omega_sq(4)))
    assert theory.omega_sq(sp.Symbol("k")).free_symbols == {sp.Symbol("k")}


# ----------------------------------------------------------------------------- configurations

@pytest.mark.parametrize("field", ["n_layer", "d_model", "n_head", "block_size", "batch_size", "steps",
                                   "threads", "eval_windows", "measure_windows"])
@pytest.mark.parametrize("bad", INT)
def test_train_config_rejects_bad_sizes_naming_the_field(field, bad):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**{field: bad})


@pytest.mark.parametrize("field, bad", [(f, b) for f in ("lr", "weight_decay", "grad_clip", "beta1",
                                                           "beta2", "min_lr_frac")
                                        for b in (NAN, INF, -1, 1j, "3", None, True)]
                         + [("seed", b) for b in SEED] + [("warmup", b) for b in (True, 2.5, -1, None)]
                         + [("device", b) for b in ("gpu", None, 0)] + [("arch", "pre-ln")])
def test_train_config_rejects_bad_values_naming_the_field(field, bad):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**{field: bad})


def test_train_config_rejects_a_huge_depth():
    with pytest.raises(ValueError, match="n_layer"):
        TrainConfig(n_layer=HUGE)


@pytest.mark.parametrize("field, bad", [("eval_every", b) for b in (True, 2.5, -1, NAN, "3", None)]
                         + [("measure_steps", b) for b in ([0, 5], [0, 12, 12], [3, 12])]
                         + [("measure_steps", b) for b in ([0, 2.5, 12], ["a"], None)])
def test_run_plan_rejects_bad_values_naming_the_field(field, bad):
    with pytest.raises((ValueError, TypeError), match=field):
        RunPlan(**{field: bad}).resolve(12)


@pytest.mark.parametrize("change, key", [
    ({"depths": [HUGE]}, "n_layer"), ({"depths": [1.0]}, "depths"), ({"depths": []}, "depths"),
    ({"seeds": [-1]}, "seeds"), ({"seeds": [NAN]}, "seeds"), ({"archs": []}, "archs"),
    ({"lrs": [NAN]}, "lrs"), ({"lrs": [0.0]}, "lrs"), ({"lrs": [1]}, "lrs"),
    ({"base": {**SPEC["base"], "d_model": HUGE}}, "d_model"), ({"base": {**SPEC["base"], "steps": 0}}, "steps"),
    ({"base": {**SPEC["base"], "block_size": HUGE}}, "block_size"), ({"out": ""}, "out"),
    ({"out": "/abs"}, "out"), ({"plan": {"measure_steps": [0, 5]}}, "measure_steps"),
    ({"slurm": {"timeout_min": -5}}, "timeout_min"), ({"slurm": []}, "slurm"),
])
def test_load_sweep_rejects_bad_values_naming_the_key(change, key):
    with pytest.raises(ValueError, match=key):
        sweep.load_sweep({**SPEC, **change})


# ----------------------------------------------------------------------------- commands

def _one_line_exit_2(argv, capsys, *words):
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own errors
        rc = exc.code
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


@pytest.mark.parametrize("option, value", [("--threads", "0"), ("--threads", "2.5"), ("--n-seq", "-1"),
                                           ("--n-tokens", "x"), ("--batch-size", "0"),
                                           ("--threads", str(HUGE))])
def test_measure_options_are_checked_before_any_work(tmp_path, capsys, option, value):
    text = tmp_path / "t.txt"
    text.write_text("words " * 100)
    _one_line_exit_2(["measure", "foo", "--text", str(text), option, value], capsys, "measure: ", option)


def test_measure_a_folder_without_tokenizer_says_so(tmp_path, capsys):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(n_layer=2, n_embd=16, n_head=2, vocab_size=50, n_positions=32,
                                  bos_token_id=0, eos_token_id=0)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(tmp_path / "m")
    capsys.readouterr()  # save_pretrained's progress bar
    text = tmp_path / "t.txt"
    text.write_text("Shall I compare thee to a summer's day? " * 200)
    err = _one_line_exit_2(["measure", str(tmp_path / "m"), "--text", str(text), "--out",
                            str(tmp_path / "out"), "--threads", "1"], capsys, "no tokenizer",
                           "save_pretrained")
    assert "tokenises to 0" not in err


@pytest.mark.parametrize("argv, words", [
    (["train", "--steps", "2.5"], ["train: ", "--steps"]),
    (["train", "--steps", "0"], ["train: ", "steps"]),
    (["train", "--lr", "nan"], ["train: ", "lr"]),
    (["train", "--arch", "pre-ln"], ["train: ", "arch"]),
    (["sweep"], ["sweep: ", "config"]),
    (["sweep", "x.toml", "--bogus"], ["bogus"]),
    (["nonsense"], ["nonsense"]),
])
def test_command_line_errors_are_one_line_with_exit_code_2(capsys, argv, words):
    _one_line_exit_2(argv, capsys, *words)


def test_prepare_corpus_on_a_file_is_one_line_with_exit_code_2(tmp_path, capsys):
    (tmp_path / "f").write_text("")
    _one_line_exit_2(["prepare-corpus", "--cache", str(tmp_path / "f")], capsys, "--cache")


def test_commands_in_a_fresh_process_print_no_traceback(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("words " * 100)
    out = subprocess.run([sys.executable, "-m", "resdecay_lib", "measure", "foo", "--text", str(text),
                          "--threads", "0"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2 and out.stderr.strip() == \
        "measure: --threads must be an integer from 1 to 1024, got '0'", out.stderr
