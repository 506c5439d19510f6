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

import tempfile

from resdecay_lib.training import baselines, data, runs, sweep
from resdecay_lib.nn import device, evaluation, models, pretrained, probe, quantise
from resdecay_lib.stats import fit, inference as stats
from resdecay_lib.maths import gaussian, theory
from resdecay_lib.book import ledger, plots
from resdecay_lib.analysis import depth_analysis, training_analysis
from resdecay_lib.__main__ import main
from resdecay_lib.training.plan import RunPlan
from resdecay_lib.training.plan import TrainConfig
from sweep_fixtures import stored_config

ROOT = Path(__file__).resolve().parents[2]
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


# ----------------------------------------------------------------------------- results, runs, ...

_rng = np.random.default_rng(0)
_A = _rng.standard_normal((7, 7))
GRAM = _A @ _A.T + np.eye(7)                        # L = 6, positive diagonal
CURVES = np.array([np.arange(1, 9) ** -1.0 * np.exp(0.05 * _rng.standard_normal(8)) for _ in range(3)])
IV = stats.t_interval([1.0, 2.0, 3.0])


def _stored_run(seed, L=6):
    k = np.arange(1, L + 1)
    measure = {"stream": {"omega_sq_per_sequence": (np.tile(k ** -1.0, (2, 1)) * (1 + 0.01 * seed)).tolist(),
                          "gram": GRAM.tolist()}}
    return {"schema": 2, "name": f"pre_ln_L{L}_s{seed}", "status": "ok", "seed": seed,
            "config": stored_config("pre_ln", L, seed),
            "convergence": {"met": True, "diverged": False, "improvement": 0.01},
            "final": {"val_loss": {"mean": 2.0 + 0.01 * seed, "se": 0.01},
                      "ablation": {"delta": list(np.linspace(1, 0.1, L) + 0.01 * seed), "delta_se": [0.01] * L}},
            "val_curve": [{"step": 0, "mean": 4.0}, {"step": 100, "mean": 2.5}, {"step": 200, "mean": 2.0}],
            "flops_per_step": 1e6, "checkpoints": [{"step": st, "measure": measure} for st in (0, 200)]}


SW = training_analysis.StoredSweep({"archs": ["pre_ln"], "seeds": [0, 1, 2], "depths": {"pre_ln": [6]},
                    "plan": {"measure_steps": [0, 200]}}, {("pre_ln", 6, s): _stored_run(s) for s in range(3)})
RUN = SW.runs[("pre_ln", 6, 0)]
RUN_DICT = _stored_run(0)                            # the same run as stored (a dict)
CELL = {"sweep": SW, "arch": "pre_ln", "L": 6}
SWEEP = [None, {}, "abc", SW.spec, [SW]]
ARCH = ["pre-ln", None, 3, ["pre_ln"]]
DEPTH = [True, 6.0, 0, -1, 5, None, "6"]
STEP = [True, 2.5, -1, "3", None]
EXCLUDE = ["pre_ln_L6_s0", None, 3]
RUNS = [None, {}, "abc", [RUN], {"name": "x"}]
GRAMS = [np.array([]), np.ones((3, 4)), np.ones(3), np.r_[GRAM[:-1], [[NAN] * 7]], np.diag([1.0, 0.0, 1.0]),
         -np.eye(3), "abc", None, np.eye(1), GRAM * 1j]
LOSSES = {2: [2.0, 2.1, 2.05], 4: [1.9, 1.95, 1.92], 8: [1.85, 1.9, 1.88]}

MODEL = models.build(**{**BUILD, "n_layer": 2})
X = torch.zeros(3, 4, dtype=torch.long)


class _ByInputIds(torch.nn.Module):
    """MODEL called as a Hugging Face model is, model(input_ids=...): what probe.measure calls."""

    def __init__(self, m):
        super().__init__()
        self.m, self.blocks = m, m.blocks

    def forward(self, input_ids):
        return self.m(input_ids)


HF_LIKE = _ByInputIds(MODEL)
TOKENS = (np.arange(200) % 5).astype(np.uint8)
WINDOWS = [X.float(), X[0], X[:0], X - 1, X + 10, "abc", None]
VOCAB = data.CharVocab.from_text("abc")
TMP = Path(tempfile.mkdtemp(prefix="bad_input_"))
(TMP / "chapters").mkdir()                          # a valid (empty) folder of notebooks
(TMP / "not_a_notebook.ipynb").write_text("this is not JSON")
TEXT = "Shall I compare thee to a summer's day? " * 50


class _Words:  # a tokenizer without special tokens: one id per word
    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [len(w) for w in text.split()]}


CURVE = [{"step": 0, "mean": 4.0}, {"step": 6, "mean": 3.0}, {"step": 12, "mean": 2.9}]
CFG = TrainConfig(steps=12, n_layer=1, d_model=8, n_head=2, block_size=8, batch_size=2)
ROWS = {"pre_ln": [(0, -1.0, -1.1, -0.9, -1.0), (10, -1.0, -1.1, -0.9, -1.0)]}
PANELS = [None, [], {}, "abc"]

CASES += [
    # results: Gram matrices and curves
    ("rho", training_analysis.rho, {}, "G", GRAMS),
    ("rc_from_gram", training_analysis.rc_from_gram, {}, "G", GRAMS),
    ("predictions/G", training_analysis.predictions, {}, "G", GRAMS),
    ("predictions/embedding_counted", training_analysis.predictions, {"G": GRAM}, "embedding_counted", [1, "yes", None]),
    ("mean_abs_block_corr", training_analysis.mean_abs_block_corr, {}, "G", GRAMS + [np.eye(2)]),
    ("prediction_log_errors/G", training_analysis.prediction_log_errors, {"measured": CURVES[0][:6]}, "G", GRAMS),
    ("prediction_log_errors/measured", training_analysis.prediction_log_errors, {"G": GRAM}, "measured",
     [CURVES[0][:5], CURVES[0], np.r_[CURVES[0][:5], NAN], -CURVES[0][:6], np.zeros(6), [], "abc", None]),
    ("prediction_log_errors/k_min", training_analysis.prediction_log_errors, {"G": GRAM, "measured": CURVES[0][:6]},
     "k_min", [True, 2.5, 0, 7, None, "2"]),
    ("convention", training_analysis.convention, {}, "rho_value", [NAN, INF, -1, 1j, "3", None, True]),
    ("reference_exponent/k_min", training_analysis.reference_exponent, {"k_max": 8, "embedding_counted": True}, "k_min",
     [True, 2.5, 0, -1, 8, NAN, "2", None]),
    ("reference_exponent/k_max", training_analysis.reference_exponent, {"k_min": 2, "embedding_counted": True}, "k_max",
     [True, 2.5, 2, 1, NAN, "8", None, HUGE]),
    ("reference_exponent/embedding_counted", training_analysis.reference_exponent, {"k_min": 2, "k_max": 8},
     "embedding_counted", [1, "yes", None]),
    ("curve_exponent/y", training_analysis.curve_exponent, {"k_min": 2}, "y",
     [[], [1.0], np.r_[CURVES[0][:-1], NAN], -CURVES[0], np.zeros(8), CURVES, "abc", None]),
    ("curve_exponent/k_min", training_analysis.curve_exponent, {"y": CURVES[0]}, "k_min", [True, 2.5, 0, 8, None, "2"]),
    ("curvature/curves", training_analysis.curvature, {"k_min": 2}, "curves",
     [CURVES[0], CURVES[:2], -CURVES, np.r_[CURVES[:2], [[NAN] * 8]], np.array([[]]), "abc", None]),
    ("curvature/k_min", training_analysis.curvature, {"curves": CURVES}, "k_min", [True, 2.5, 0, 7, 8, None]),
    ("curvature/level", training_analysis.curvature, {"curves": CURVES, "k_min": 2}, "level", UNIT),
    ("departure/grams", training_analysis.departure, {}, "grams",
     [None, 3, "abc", [GRAM, GRAM, np.eye(3)], [GRAM, GRAM, GRAM * NAN], [GRAM, GRAM, np.ones((7, 6))]]),
    ("departure/k_min", training_analysis.departure, {"grams": [GRAM] * 3}, "k_min", [True, 2.5, 0, 6, None]),
    ("departure/level", training_analysis.departure, {"grams": [GRAM] * 3}, "level", UNIT),
    ("compare_exponents/a", training_analysis.compare_exponents, {"b": IV}, "a", [None, 1.0, (0, 1), "abc"]),
    ("compare_exponents/b", training_analysis.compare_exponents, {"a": IV}, "b", [None, 1.0, (0, 1), "abc"]),
    # results: stored runs and sweeps
    ("final_loss", training_analysis.final_loss, {}, "r", RUNS + [{"status": "ok", "name": "x"}]),
    ("at_step/r", training_analysis.at_step, {"step": 0}, "r", RUNS + [{"name": "x", "checkpoints": 3}]),
    ("at_step/step", training_analysis.at_step, {"r": RUN}, "step", STEP),
    ("omega_per_sequence/r", training_analysis.omega_per_sequence, {"step": 0}, "r",
     RUNS + [{"name": "x", "checkpoints": [{"step": 0}], "config": {"arch": "pre_ln"}},
             {"name": "x", "checkpoints": [{"step": 0}]}]),
    ("gram_at/r", training_analysis.gram_at, {"step": 0}, "r",
     RUNS + [{"name": "x", "checkpoints": [{"step": 0, "measure": {}}], "config": {"arch": "pre_ln"}}]),
    ("gram_at/step", training_analysis.gram_at, {"r": RUN}, "step", STEP),
    ("ablation", depth_analysis.ablation, {}, "r", RUNS + [{"name": "x", "final": {}}]),
    ("loss_at_flops/r", depth_analysis.loss_at_flops, {"flops": 1e8}, "r",
     RUNS + [{**RUN_DICT, "val_curve": []}, {**RUN_DICT, "flops_per_step": 0},
             {**RUN_DICT, "val_curve": [{"step": 0}] * 3}]),
    ("loss_at_flops/flops", depth_analysis.loss_at_flops, {"r": RUN}, "flops", POS),
    ("flag_runs/sweep", training_analysis.flag_runs, {}, "sweep", SWEEP),
    ("flag_runs/z", training_analysis.flag_runs, {"sweep": SW}, "z", POS),
    ("exponent_path/sweep", training_analysis.exponent_path, CELL, "sweep", SWEEP),
    ("exponent_path/L", training_analysis.exponent_path, CELL, "L", DEPTH),
    ("exponent_path/steps", training_analysis.exponent_path, CELL, "steps", [[], [100], [0.0], "0", 200]),
    ("exponent_path/level", training_analysis.exponent_path, CELL, "level", [0, 1, 1.5, None, NAN]),
    ("settling/sweep", training_analysis.settling, {**CELL, "reference": SW, "steps": (0, 200)}, "sweep", SWEEP),
    ("settling/reference", training_analysis.settling, {**CELL, "reference": SW, "steps": (0, 200)}, "reference", SWEEP),
    ("settling/arch", training_analysis.settling, {**CELL, "reference": SW, "steps": (0, 200)}, "arch", ARCH),
    ("settling/steps", training_analysis.settling, {**CELL, "reference": SW, "steps": (0, 200)}, "steps",
     [(200, 0), (0, 100), (0,), (0, 200, 200), None, (0.0, 200), (True, 200)]),
    ("settling/alpha", training_analysis.settling, {**CELL, "reference": SW, "steps": (0, 200)}, "alpha", [0, 0.5, -0.1, None, NAN]),
    ("seed_exponents/sweep", training_analysis.seed_exponents, {**CELL, "step": 200}, "sweep", SWEEP),
    ("seed_exponents/arch", training_analysis.seed_exponents, {**CELL, "step": 200}, "arch", ARCH),
    ("seed_exponents/L", training_analysis.seed_exponents, {**CELL, "step": 200}, "L", DEPTH),
    ("seed_exponents/step", training_analysis.seed_exponents, CELL, "step", STEP),
    ("seed_exponents/k_min", training_analysis.seed_exponents, {**CELL, "step": 200}, "k_min", [True, 2.5, 0, 6, None]),
    ("seed_exponents/exclude", training_analysis.seed_exponents, {**CELL, "step": 200}, "exclude", EXCLUDE),
    ("exponent_fit/sweep", training_analysis.exponent_fit, {**CELL, "step": 200}, "sweep", SWEEP),
    ("exponent_fit/arch", training_analysis.exponent_fit, {**CELL, "step": 200}, "arch", ARCH),
    ("exponent_fit/L", training_analysis.exponent_fit, {**CELL, "step": 200}, "L", DEPTH),
    ("exponent_fit/step", training_analysis.exponent_fit, CELL, "step", STEP),
    ("exponent_fit/k_min", training_analysis.exponent_fit, {**CELL, "step": 200}, "k_min", [True, 2.5, 0, 5, None]),
    ("exponent_fit/exclude", training_analysis.exponent_fit, {**CELL, "step": 200}, "exclude", EXCLUDE),
    ("exponent_fit/level", training_analysis.exponent_fit, {**CELL, "step": 200}, "level", UNIT),
    ("ablation_trend/sweep", depth_analysis.ablation_trend, CELL, "sweep", SWEEP),
    ("ablation_trend/L", depth_analysis.ablation_trend, CELL, "L", DEPTH),
    ("ablation_trend/exclude", depth_analysis.ablation_trend, CELL, "exclude", EXCLUDE),
    ("ablation_trend/level", depth_analysis.ablation_trend, CELL, "level", UNIT),
    ("ladder_steps/losses", depth_analysis.ladder_steps, {}, "losses",
     [None, [], {}, {2: [1.0, 2.0, 3.0]}, {2: [1.0, 2.0, 3.0], 4: [1.0, 2.0]}, {2: [1.0, 2.0], 4: [1.0, 2.0]},
      {2: [1.0, NAN, 3.0], 4: [1.0, 2.0, 3.0]}, {2.5: [1.0, 2.0, 3.0], 4: [1.0, 2.0, 3.0]},
      {2: "abc", 4: [1.0, 2.0, 3.0]}]),
    ("ladder_steps/level", depth_analysis.ladder_steps, {"losses": LOSSES}, "level", UNIT),
    ("depth_law/depths", depth_analysis.depth_law, {"loss": [2.0, 1.9, 1.85]}, "depths",
     [[], [2, 4], [0, 2, 4], [-2, 2, 4], [2, NAN, 8], [2, 4, 8, 16], "abc", None]),
    ("depth_law/loss", depth_analysis.depth_law, {"depths": [2, 4, 8]}, "loss",
     [[], [2.0, 1.9], [2.0, NAN, 1.8], [2.0, 1.9, 1.8, 1.7], "abc", None]),
    ("depth_law/alphas", depth_analysis.depth_law, {"depths": [2, 4, 8], "loss": [2.0, 1.9, 1.85]}, "alphas",
     [[], [0.0, 1.0], [-1.0, 1.0], [NAN, 1.0], "abc", None]),
    # evaluation
    ("sig/digits", evaluation.sig, {"a": 1.5}, "digits", [True, 0, -1, 2.5, None, "3", 18]),
    ("sig/a", evaluation.sig, {}, "a", ["abc", [1j], {"a": 1}, [[1.0, 2.0], [3.0]]]),
    ("window_losses/model", evaluation.window_losses, {"x": X, "y": X}, "model", [None, 3, torch.nn.Identity()]),
    ("window_losses/x", evaluation.window_losses, {"model": MODEL, "y": X}, "x", WINDOWS),
    ("window_losses/y", evaluation.window_losses, {"model": MODEL, "x": X}, "y", WINDOWS + [X[:2]]),
    ("window_losses/chunk", evaluation.window_losses, {"model": MODEL, "x": X, "y": X}, "chunk", INT + [HUGE]),
    ("evaluate/x", evaluation.evaluate, {"model": MODEL, "y": X}, "x", WINDOWS),
    ("evaluate/y", evaluation.evaluate, {"model": MODEL, "x": X}, "y", [X[:1], X[:, :2]]),
    ("ablation_losses/model", evaluation.ablation_losses, {"x": X, "y": X}, "model",
     [None, "abc", torch.nn.Linear(2, 2)]),
    ("ablation_losses/y", evaluation.ablation_losses, {"model": MODEL, "x": X}, "y", WINDOWS + [X[:2]]),
    # probe
    ("residual_stream/model", probe.residual_stream, {"inputs": X}, "model", [None, 3, "abc"]),
    ("residual_stream/inputs", probe.residual_stream, {"model": MODEL}, "inputs", [None, X[:0], {}, "abc"]),
    ("residual_stream/blocks", probe.residual_stream, {"model": MODEL, "inputs": X}, "blocks",
     [3, MODEL.blocks[0], [3], [], [MODEL.blocks[0], MODEL.blocks[0]], [torch.nn.Linear(2, 2)]]),
    ("residual_stream/exit_module", probe.residual_stream, {"model": MODEL, "inputs": X}, "exit_module",
     [3, "abc"]),
    ("sublayer_stream/model", probe.sublayer_stream, {"inputs": X}, "model", [None, 3, torch.nn.Linear(2, 2)]),
    ("block_grad_norms/model", probe.block_grad_norms, {"idx": X}, "model", [None, 3]),
    ("block_grad_norms/idx", probe.block_grad_norms, {"model": MODEL}, "idx",
     [X.float(), X[:, :1], X[:0], X - 1, X[0], None, "abc"]),
    ("block_grad_norms/blocks", probe.block_grad_norms, {"model": MODEL, "idx": X}, "blocks",
     [3, [3], [], MODEL.blocks[0]]),
    ("gram/stream", probe.gram, {}, "stream",
     [STREAM[:1], STREAM.long(), torch.full((3, 1, 2, 4), NAN), STREAM[0, 0], STREAM[..., :1],
      STREAM[:, :0], "abc", None]),
    ("measure_zoo/model", probe.measure_zoo, {"x": X}, "model", [None, 3, torch.nn.Linear(2, 2)]),
    ("measure_zoo/x", probe.measure_zoo, {"model": MODEL}, "x", [None, X.float(), X[0], "abc"]),
    # runs
    ("convergence/curve", runs.convergence, {"steps": 12}, "curve",
     [[], None, "abc", [{"step": 0}], [{"step": 0.5, "mean": 1.0}], CURVE[1:], CURVE[:1],
      [*CURVE[:2], {"step": 12, "mean": "x"}]]),
    ("convergence/steps", runs.convergence, {"curve": CURVE}, "steps", INT + [6.0]),
    ("convergence/window", runs.convergence, {"curve": CURVE, "steps": 12}, "window", UNIT),
    ("convergence/tol", runs.convergence, {"curve": CURVE, "steps": 12}, "tol", POS),
    ("flops_per_step/model", runs.flops_per_step, {"cfg": CFG}, "model", [None, 3, torch.nn.Linear(2, 2)]),
    ("flops_per_step/cfg", runs.flops_per_step, {"model": MODEL}, "cfg", [None, {}, "abc"]),
    ("run_result/cfg", runs.run_result, {}, "cfg", [None, {}, "abc", CFG.__dict__]),
    ("run_result/plan", runs.run_result, {"cfg": CFG}, "plan", [None, {}, "abc"]),
    ("run_result/stop_at", runs.run_result, {"cfg": CFG}, "stop_at", [True, 0, -1, 2.5, "3", 13, 5, NAN]),
    ("run_result/checkpoint", runs.run_result, {"cfg": CFG}, "checkpoint", [3, ["a"]]),
    ("run_result/progress", runs.run_result, {"cfg": CFG}, "progress", ["yes", 1]),
    ("run_result/code", runs.run_result, {"cfg": CFG}, "code", [3, b"x"]),
    # data
    ("train_batch/tokens", data.train_batch, {"step": 0, "batch_size": 2, "block_size": 8, "seed": 0}, "tokens",
     [list(TOKENS), TOKENS.reshape(2, -1), TOKENS.astype(float), None, "abc"]),
    ("train_batch/step", data.train_batch, {"tokens": TOKENS, "batch_size": 2, "block_size": 8, "seed": 0},
     "step", SEED),
    ("train_batch/batch_size", data.train_batch, {"tokens": TOKENS, "step": 0, "block_size": 8, "seed": 0},
     "batch_size", INT + [HUGE]),
    ("train_batch/block_size", data.train_batch, {"tokens": TOKENS, "step": 0, "batch_size": 2, "seed": 0},
     "block_size", INT + [HUGE]),
    ("train_batch/seed", data.train_batch, {"tokens": TOKENS, "step": 0, "batch_size": 2, "block_size": 8},
     "seed", SEED + [2**70]),
    ("eval_windows/tokens", data.eval_windows, {"n_windows": 2, "block_size": 8}, "tokens",
     [list(TOKENS), TOKENS.reshape(2, -1), TOKENS.astype(float), None]),
    ("eval_windows/n_windows", data.eval_windows, {"tokens": TOKENS, "block_size": 8}, "n_windows", INT + [HUGE]),
    ("eval_windows/block_size", data.eval_windows, {"tokens": TOKENS, "n_windows": 2}, "block_size",
     INT + [HUGE]),
    ("load_corpus/name", data.load_corpus, {}, "name", [3, None, "wikipedia", ["shakespeare"]]),
    ("load_corpus/cache", data.load_corpus, {}, "cache", [3, ["a"]]),
    ("CharVocab.encode", VOCAB.encode, {}, "text", [None, 3, b"abc", ["a"]]),
    # device
    ("resolve_device", device.resolve_device, {}, "device", ["gpu", None, 0, "", "mps", "cuda:x", 1.5]),
    ("pin_threads", device.pin_threads, {}, "n", INT + [HUGE]),
    ("manual_seed_all", device.manual_seed_all, {}, "seed", SEED + [2**70]),
    # ledger
    ("read_evidence/chapters", ledger.read_evidence, {"chapters": TMP / "chapters"}, "chapters",
     [3, None, str(TMP / "no_such_folder"), [TMP / "missing.ipynb"], [TMP / "not_a_notebook.ipynb"], [3]]),
    ("read_evidence/prefix", ledger.read_evidence, {"chapters": TMP / "chapters"}, "prefix", ["", None, 3]),
    ("evaluate/evidence", ledger.evaluate, {}, "evidence", [None, [1.0], {"ev_x": "a"}, {3: 1.0}, "abc"]),
    ("evaluate/claims", ledger.evaluate, {"evidence": {}}, "claims", ["abc", [1], 3, ledger.CLAIMS[0]]),
    # plots
    ("exponent_through_training/rows", plots.exponent_through_training, {"title": "t"}, "rows", PANELS),
    ("exponent_through_training/title", plots.exponent_through_training, {"rows": ROWS}, "title", [None, 3]),
    ("change_curves/curves", plots.change_curves, {"theory": {}, "L": 2}, "curves", PANELS),
    ("change_curves/L", plots.change_curves, {"curves": {"pre_ln": {"w": ([1.0, 0.5], [0.1, 0.1])}},
                                              "theory": {}}, "L", [True, 0, -1, 2.5, None]),
    ("loss_curves", plots.loss_curves, {"baselines": {}}, "curves", PANELS),
    ("ablation_profiles", plots.ablation_profiles, {}, "profiles", PANELS),
    ("depth_curves", plots.depth_curves, {}, "panels", PANELS),
    ("correlation_maps", plots.correlation_maps, {}, "mats", PANELS),
    ("rc_profiles/prof", plots.rc_profiles, {"L": 2}, "prof", PANELS),
    # pretrained (plain arguments only: no model wheel is loaded)
    ("sample_inputs/n_seq", pretrained.sample_inputs, {"tokenizer": _Words(), "text": TEXT, "n_tokens": 5},
     "n_seq", INT + [HUGE]),
    ("sample_inputs/n_tokens", pretrained.sample_inputs, {"tokenizer": _Words(), "text": TEXT, "n_seq": 2},
     "n_tokens", INT + [HUGE]),
    ("sample_inputs/text", pretrained.sample_inputs, {"tokenizer": _Words(), "n_seq": 2, "n_tokens": 5}, "text",
     [None, 3, b"abc"]),
    ("sample_inputs/tokenizer", pretrained.sample_inputs, {"text": TEXT, "n_seq": 2, "n_tokens": 5},
     "tokenizer", [None, 3, "abc"]),
    ("sample_inputs/exclude_first", pretrained.sample_inputs,
     {"tokenizer": _Words(), "text": TEXT, "n_seq": 2, "n_tokens": 5}, "exclude_first", [1, "yes", None]),
    ("q4_1_roundtrip/weight", quantise.q4_1_roundtrip, {}, "weight",
     [torch.ones(32), torch.full((2, 32), NAN), torch.zeros(0, 32), torch.ones(2, 32).long(), None, "abc"]),
    ("q4_1_roundtrip/block", quantise.q4_1_roundtrip, {"weight": torch.ones(2, 32)}, "block",
     [True, 2.5, 0, 1, -1, None, "3", HUGE, 5]),
    ("q4_1_roundtrip/offset", quantise.q4_1_roundtrip, {"weight": torch.ones(2, 32)}, "offset",
     [True, 2.5, -1, None, "3"]),
    ("quantize_q4_1_/model", quantise.quantize_q4_1_, {}, "model", [None, 3, "abc"]),
    ("quantize_q4_1_/block", quantise.quantize_q4_1_, {"model": torch.nn.Linear(32, 2)}, "block",
     [True, 2.5, 0, 1, -1, None, "3"]),
    ("sublayer_points", pretrained.sublayer_points, {}, "block", [None, 3, "abc"]),
    ("blocks_of", pretrained.blocks_of, {}, "model", [None, 3, "abc"]),
    ("measure/model", probe.measure, {"inputs": {"input_ids": X}, "mask": None}, "model", [None, 3, "abc"]),
    ("measure/inputs", probe.measure, {"model": HF_LIKE, "mask": None}, "inputs", [None, X[0], X.float(), {"input_ids": [1]}]),
    ("measure/batch_size", probe.measure, {"model": HF_LIKE, "inputs": {"input_ids": X}}, "batch_size",
     [0, -1, 2.5, True, "3"]),
    ("measure_sublayers/model", probe.measure_sublayers,
     {"inputs": {"input_ids": X}, "mask": None, "blocks": list(MODEL.blocks), "points": list(MODEL.blocks)},
     "model", [None, 3, "abc"]),
    ("measure_sublayers/points", probe.measure_sublayers,
     {"model": HF_LIKE, "inputs": {"input_ids": X}, "mask": None, "blocks": list(MODEL.blocks)},
     "points", [[], [MODEL.blocks[0]], [None, None]]),
]

# what the fuzz found, one row per class of bad input
from resdecay_lib.analysis import pruning, pretrained_analysis
from resdecay_lib.training import train  # noqa: E402

_PRE = pretrained.Pretrained("tiny", MODEL, None, list(MODEL.blocks), MODEL)
_COST = pruning.RemovalCost("next_token", ((1,), (2,), (3,), (4,)), np.array([2.0, 2.1, 1.9]),
                              np.array([[2.5, 2.4, 2.6], [2.2, 2.3, 2.1], [2.1, 2.2, 2.0], [2.0, 2.1, 2.0]]))
NOT_OBJECTS = ["abc", {"kind": "x"}, None]           # a str, dict or None where a library object goes
MARGIN = [INF, -INF, -0.1, NAN, "0.1", None, True]
BOUND = [NAN, "0.9", None, True]                     # an interval's end: an infinity is legitimate
CASES += [
    ("lr_factor/cfg", train.lr_factor, {"step": 3}, "cfg", NOT_OBJECTS),
    ("lr_factor/step", train.lr_factor, {"cfg": CFG}, "step", [NAN, INF, -1, 2.5, True, "3", None]),
    ("train/cfg", train.train, {}, "cfg", NOT_OBJECTS),
    ("provenance/cfg", runs.provenance, {}, "cfg", NOT_OBJECTS),
    ("run_id/cfg", sweep.run_id, {"spec": SPEC}, "cfg", NOT_OBJECTS),
    ("read_result/cfg", sweep.read_result, {"path": TMP / "absent.json"}, "cfg", ["abc", {"lr": 1}]),
    ("cost_kind/pre", pruning.cost_kind, {}, "pre", NOT_OBJECTS),
    ("skip_costs/pre", pruning.skip_costs, {"inputs": {"input_ids": X}, "mask": X}, "pre", NOT_OBJECTS),
    ("reader_gains/pre", pruning.reader_gains, {}, "pre", NOT_OBJECTS),
    ("noise_band/curve", pruning.noise_band, {}, "curve", NOT_OBJECTS),
    ("leaves_noise_band/curve", pruning.leaves_noise_band, {}, "curve", NOT_OBJECTS),
    ("skip_trend/skip", pruning.skip_trend, {}, "skip", NOT_OBJECTS),
    ("predicts_cost/skip", pruning.predicts_cost, {"scores": {"a": np.ones((3, 4))}}, "skip", NOT_OBJECTS),
    ("predicts_cost/level", pruning.predicts_cost, {"scores": {"change": np.ones((3, 4))}, "skip": _COST},
     "level", UNIT),
    ("ranking_scores/change", pruning.ranking_scores, {}, "change", ["abc", None, {"omega_sq": np.ones((2, 3))}]),
    ("stream_parts/model", models.stream_parts, {}, "model", NOT_OBJECTS),
    ("recheck/plan", __import__("resdecay_lib.analysis.recheck").analysis.recheck.first_interval,
     {"stored": {"config": {}, "checkpoints": []}}, "plan", NOT_OBJECTS),
    # names that would leave their root
    ("store_path/model", pretrained_analysis.store_path, {"root": TMP, "text": "pydoc"}, "model",
     ["../../etc", "..", "a/b", "", "x__y", None, 3]),
    ("store_path/text", pretrained_analysis.store_path, {"root": TMP, "model": "m"}, "text", ["../x", "/abs", "a__b"]),
    ("claim/name", sweep.claim, {"claim_dir": TMP / "claims"}, "name", ["../../escaped", "..", "a/b", "", None]),
    ("run_sweep/root", sweep.run_sweep, {"spec_or_path": SPEC}, "root", [None, "", 3]),
    # token ids outside the vocabulary (5): torch's "index out of range in self" before
    ("residual_stream/inputs ids", probe.residual_stream, {"model": MODEL}, "inputs", [X + 5, X - 1]),
    ("measure_zoo/x ids", probe.measure_zoo, {"model": MODEL}, "x", [X + 5]),
    ("block_grad_norms/idx ids", probe.block_grad_norms, {"model": MODEL}, "idx", [X + 5]),
    ("evaluate/x ids", evaluation.evaluate, {"model": MODEL, "y": X}, "x", [X + 5]),
    ("next_char_loss/x", train.next_char_loss, {"model": MODEL, "y": X}, "x", [X + 5]),
    ("next_char_loss/y", train.next_char_loss, {"model": MODEL, "x": X}, "y", [X + 5, X - 1]),
    # margins and levels
    ("within_margin/margin", stats.within_margin, {"lo": 0.9, "hi": 1.1, "ref": 1.0}, "margin", MARGIN),
    ("outside_margin/margin", stats.outside_margin, {"lo": 0.9, "hi": 1.1, "ref": 1.0}, "margin", MARGIN),
    ("within_margin/lo", stats.within_margin, {"hi": 1.1, "ref": 1.0, "margin": 0.2}, "lo", BOUND),
    ("outside_margin/hi", stats.outside_margin, {"lo": 0.9, "ref": 1.0, "margin": 0.2}, "hi", BOUND),
    ("margin_verdict/ref", stats.margin_verdict, {"lo": 0.9, "hi": 1.1, "margin": 0.2}, "ref", [NAN, INF, None]),
    ("Hypothesis/margin", stats.Hypothesis, {"text": "t", "kind": "differs", "x": stats.Replicates([1.0, 2.0, 3.0]),
                                   "ref": 2.0}, "margin", [INF, NAN, -1.0, "1", None]),
    # NaN and infinities that would make a statistic NaN
    ("nested_sets/importance", pruning.nested_sets, {"n_max": 1}, "importance",
     [[NAN, NAN, NAN], [0.1, INF, 0.2], [0.1], "abc"]),
    ("gromov_sets/distances", pruning.gromov_sets, {"n_max": 1}, "distances", [np.full((3, 3), NAN)]),
    ("rms_change/stream", probe.rms_change, {}, "stream", [STREAM.index_fill(0, torch.tensor([1]), INF),
                                                            STREAM.index_fill(0, torch.tensor([0]), NAN)]),
    ("angular_distances/stream", probe.angular_distances, {}, "stream",
     [STREAM.index_fill(0, torch.tensor([1]), INF), STREAM.long()]),
    ("noise_band/z", pruning.noise_band, {"curve": _COST}, "z", [NAN, INF, -1.0]),
]

#: whose valid call would train, load the corpus or change global state: not called valid
NO_VALID_CALL = {runs.run_result, data.load_corpus, device.manual_seed_all, quantise.quantize_q4_1_,
                 train.train, sweep.run_sweep, pruning.skip_costs, pruning.reader_gains,
                 __import__("resdecay_lib.analysis.recheck").analysis.recheck.first_interval, pruning.predicts_cost}


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
        if fn in NO_VALID_CALL:
            continue
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


def test_measure_a_folder_with_no_recognisable_blocks_says_how_to_pass_them(tmp_path, capsys):
    transformers = pytest.importorskip("transformers")
    from hf_tiny import tiny_tokenizer
    cfg = transformers.T5Config(num_layers=2, d_model=16, d_kv=8, d_ff=32, num_heads=2, vocab_size=300)
    transformers.T5EncoderModel(cfg).save_pretrained(tmp_path / "m")   # blocks at encoder.block
    tiny_tokenizer().save_pretrained(tmp_path / "m")
    capsys.readouterr()
    text = tmp_path / "t.txt"
    text.write_text("Shall I compare thee to a summer's day? " * 200)
    _one_line_exit_2(["measure", str(tmp_path / "m"), "--text", str(text), "--out", str(tmp_path / "out"),
                      "--threads", "1"], capsys, "cannot find the residual blocks", "encoder.block",
                     "Pass them by hand")


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
    (["record", "gpt-5"], ["record: ", "MODEL must be one of", "qwen2.5-coder-0.5b"]),
    (["record", "smollm2-135m", "--text", "poems"], ["record: ", "--text must be one of"]),
    (["record", "smollm2-135m", "--threads", "0"], ["record: ", "--threads"]),
    (["record", "smollm2-135m", "--n-tokens", "x"], ["record: ", "--n-tokens"]),
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


# ----------------------------------------------------------------------------- case by case

@pytest.mark.parametrize("argv, words", [
    (["record", "smollm2-135m", "--prune-text", "nope"],
     ["record: --prune-text must be one of shakespeare, pydoc, got 'nope'"]),
    (["record", "smollm2-135m", "--out", "FILE"], ["record: --out must be a folder", "the file"]),
    (["record", "smollm2-135m", "--out", "FILE/sub"], ["record: --out must be a folder", "under the file"]),
    (["record", "smollm2-135m", "--out", ""], ["record: --out must be a folder path"]),
    (["measure", "smollm2-135m", "--text", "TEXT", "--out", "FILE"], ["measure: --out must be a folder"]),
])
def test_record_and_measure_reject_a_bad_out_folder_or_prune_text_in_one_line_before_any_work(
        tmp_path, capsys, monkeypatch, argv, words):
    (tmp_path / "FILE").write_text("")
    (tmp_path / "TEXT").write_text("words " * 100)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(pretrained, "load", lambda *a, **k: pytest.fail("a model was loaded"))
    _one_line_exit_2(argv, capsys, *words)


def test_store_path_keeps_model_and_text_names_inside_the_root(tmp_path):
    assert pretrained_analysis.store_path(tmp_path, "smollm2-135m", "pydoc") == tmp_path / "smollm2-135m__pydoc.json"
    assert pretrained_analysis.store_path(str(tmp_path), "qwen2.5-coder-0.5b", "shakespeare").parent == tmp_path
    for model, text in (("../../etc", "pydoc"), ("m", "../../x"), ("a/b", "pydoc"), ("m__n", "pydoc")):
        with pytest.raises(ValueError, match=r"must be a plain name"):
            pretrained_analysis.store_path(tmp_path, model, text)


def test_token_ids_at_or_above_the_vocabulary_are_a_clear_error_in_every_entry_point():
    bad = X.clone()
    bad[0, 1] = 5                                             # the model's vocab_size
    range_ = r"must hold token ids in \[0, vocab_size=5\), got ids from 0 to 5"
    with pytest.raises(ValueError, match="^idx " + range_):
        MODEL(bad)
    with pytest.raises(ValueError, match="^inputs " + range_):
        probe.residual_stream(MODEL, bad)
    with pytest.raises(ValueError, match=r"^inputs\['input_ids'\] " + range_):
        probe.residual_stream(HF_LIKE.m, {"idx": bad, "input_ids": bad}, blocks=list(MODEL.blocks))
    with pytest.raises(ValueError, match="^x " + range_):
        probe.measure_zoo(MODEL, bad)
    with pytest.raises(ValueError, match="^x " + range_):
        evaluation.evaluate(MODEL, bad, X)
    with pytest.raises(ValueError, match="^y " + range_):
        train.next_char_loss(MODEL, X, bad)
    with pytest.raises(ValueError, match="^targets " + range_):
        models.next_token_loss(MODEL(X), bad)


def test_token_ids_beyond_a_hugging_face_models_embedding_are_a_clear_error():
    from hf_tiny import V, ids, tiny
    model = tiny("gpt2")
    bad = ids().clone()
    bad[0, 0] = V
    with pytest.raises(ValueError, match=rf"^inputs must hold token ids in \[0, vocab_size={V}\), got ids from"):
        probe.residual_stream(model, bad, blocks=pretrained.blocks_of(model))


def test_margin_tests_reject_an_infinite_or_negative_margin_and_nan_bounds_alike():
    with pytest.raises(ValueError, match="^margin must be a finite real number"):
        stats.within_margin(0.9, 1.1, 1.0, INF)             # returned True before
    with pytest.raises(ValueError, match="^margin must be a finite real number"):
        stats.outside_margin(0.9, 1.1, 1.0, -0.5)           # returned True before
    for fn in (stats.within_margin, stats.outside_margin, stats.margin_verdict):
        with pytest.raises(ValueError, match=r"^lo must be a real number \(an infinity allowed, not NaN\)"):
            fn(NAN, 1.1, 1.0, 0.2)                            # within_margin returned False before
        with pytest.raises(ValueError, match="lo <= hi"):
            fn(1.1, 0.9, 1.0, 0.2)
    # an infinite bound is a one-sided interval: legitimate
    assert stats.within_margin(-INF, 1.1, 1.0, 0.2) is False
    assert stats.outside_margin(1.3, INF, 1.0, 0.2) is True
    assert stats.margin_verdict(-INF, 1.1, 1.0, 0.2) == "undetermined"


def test_nan_and_infinite_inputs_that_would_make_a_statistic_nan_are_rejected():
    with pytest.raises(ValueError, match=r"^importance must be .*finite.*it holds NaN or an infinity"):
        pruning.nested_sets([NAN, NAN, NAN], 1)            # returned sets before
    inf_stream = STREAM.clone()
    inf_stream[1, 0, 0, 0] = INF
    for fn in (probe.rms_change, probe.angular_distances, probe.layer_change):
        with pytest.raises(ValueError, match=r"^stream must .*(finite|NaN or an infinity)"):
            fn(inf_stream)                                    # rms_change, angular_distances: NaN before
    with pytest.raises(ValueError, match="^step must be"):
        train.lr_factor(NAN, CFG)                             # returned 0.1 before


@pytest.mark.parametrize("bad", NOT_OBJECTS)
def test_a_str_dict_or_none_where_a_library_object_goes_is_a_type_error_naming_the_parameter(bad):
    calls = [(lambda: train.lr_factor(3, bad), "cfg", "a TrainConfig"),
             (lambda: runs.provenance(bad), "cfg", "a TrainConfig"),
             (lambda: sweep.run_id(SPEC, bad), "cfg", "a TrainConfig"),
             (lambda: pruning.cost_kind(bad), "pre", "a Pretrained"),
             (lambda: pruning.reader_gains(bad), "pre", "a Pretrained"),
             (lambda: pruning.noise_band(bad), "curve", "a RemovalCost"),
             (lambda: pruning.skip_trend(bad), "skip", "a RemovalCost"),
             (lambda: models.stream_parts(bad), "model", "a model of resdecay_lib.nn.models")]
    for call, name, what in calls:
        with pytest.raises(TypeError, match=f"^{name} must be {what}"):
            call()


def test_a_module_without_forward_is_a_type_error_naming_the_model():
    bare = torch.nn.Module()
    bare.w = torch.nn.Parameter(torch.zeros(1))              # parameters, but no forward
    for call in (lambda: evaluation.evaluate(bare, X, X), lambda: probe.residual_stream(bare, X, blocks=[bare])):
        with pytest.raises(TypeError, match=r"^model must be a callable module"):
            call()


def test_write_json_atomic_names_what_is_not_json_ready():
    with pytest.raises(TypeError, match=r"^obj must be JSON-ready"):
        sweep.write_json_atomic({"x": object()}, TMP / "not_json.json")
    assert not (TMP / "not_json.json").exists()
