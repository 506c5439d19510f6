"""Chapter 6's result (resdecay_lib.analysis.chapters.initialisation): its glue names are the
notebook's, its values round as the prose shows them, its wording and tables read their numbers,
and the measured result agrees with values recomputed here from a freshly built model and the
closed forms."""
from __future__ import annotations

import json
import pathlib
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from resdecay_lib.analysis.chapters import initialisation as init
from resdecay_lib.book import evidence
from resdecay_lib.book.glues import EvidenceGlue, Table, Words, glue_names
from resdecay_lib.nn.models import ARCHS, build
from resdecay_lib.stats.inference import HypothesisResult, t_interval

from notebook_fixtures import prose_glue_names

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "chapters" / "06_initialisation.ipynb"
FIGURES = {"fig-init-curves", "fig-init-grads"}


def _stored_glue_names(path) -> set[str]:
    """Every glue record the stored notebook holds (myst-nb's scrapbook metadata)."""
    return {o["metadata"]["scrapbook"]["name"] for c in json.loads(path.read_text())["cells"]
            for o in c.get("outputs", []) if o.get("metadata", {}).get("scrapbook")}


def _fit(p, lo=None, hi=None):
    return SimpleNamespace(exponent=p, lo=p - 0.01 if lo is None else lo, hi=p + 0.01 if hi is None else hi,
                           n_dropped=0)


def _test(word, shown=True, kind="equivalent"):
    return HypothesisResult("a claim", kind, -0.93, -0.98, -0.86, "-0.951 ± 0.1", 0.99, shown, word)


_TEST_KEYS = ("t_pre", "t_dual", "t_het_blk_pre", "t_het_sub_pre", "t_het_blk_peri", "t_het_sub_peri",
              "t_het_blk_lns", "t_het_sub_lns", "t_peri_seed", "t_sub_eqvar", "t_escape_post_ln",
              "t_escape_resi_dual", "t_escape_deepnorm", "t_escape_mix_ln", "t_faster_peri_ln",
              "t_faster_ln_scaling", "t_cor35", "t_cor35_not_1", "t_grad_pre", "t_grad2_pre", "t_grad_flat_post",
              "t_fi_seed", "t_fi_escape")


def _tiny_result(**over) -> init.InitialisationResult:
    """A result with small made-up numbers (no model is built): what glues() reads."""
    S, L = 3, 6
    prof = {"emb_var": np.full(S, 8e-4), "blk_inc_var": np.full((S, L), 1e-3), "grad": np.ones((S, L)),
            "blk": np.ones((S * 2, L)), "sub": np.ones((S * 2, 2 * L)), "dual": np.ones((S * 2, L)),
            "inc_var": np.ones((S, 2 * L))}
    grad_fi = np.tile(np.array([4.0, 2.0, 1.0, 1.0, 1.0, 1.0]), (S, 1))
    fields = dict(
        profiles={a: prof for a in ARCHS}, profiles_fan_in={a: {**prof, "grad": grad_fi} for a in init.FAN_IN},
        w_emb=np.ones(L), w_seed=np.ones(L), w_emb_sub=np.ones(2 * L),
        fits={a: _fit(-0.93149 if a == "pre_ln" else 0.00312) for a in ARCHS},
        fits_sub={a: _fit(-0.8904) for a in ARCHS}, fit_dual=_fit(-0.9381), wide={}, wide_sub={}, wide_dual=None,
        theory_fit=_fit(-0.95104), theory_fit_seed=_fit(-1.0191), theory_fit_sub=_fit(-0.9749),
        hetero={a: _fit(-0.957) for a in init.ADDITIVE}, hetero_sub={a: _fit(-0.919) for a in init.ADDITIVE},
        rho={a: np.array([0.78, 0.79, 0.77]) for a in init.ADDITIVE}, emb_var_init=7.875e-4, att_mlp=0.5071,
        drop={a: 0.10123 for a in ARCHS}, drop_theory=0.09718, level_pre_over_post=315.4876,
        out_change=np.ones((6, 3)), cor35=_fit(-0.9449, -0.9741, -0.9229), wide_cor35=None,
        cor35_theory=_fit(-0.9412),
        ratio={a: np.array([7.0, 7.26, 7.52]) for a in ARCHS}, ratio2={a: np.array([5.0, 5.25, 5.5]) for a in ARCHS},
        ratio_intervals={a: t_interval([7.0, 7.26, 7.52], 0.975) for a in ARCHS},
        ratio2_intervals={a: t_interval([5.0, 5.25, 5.5], 0.975) for a in ("pre_ln", "post_ln")}, grad_level=0.975,
        fits_fan_in={a: _fit(-1.0651) for a in init.FAN_IN}, wide_fan_in={}, rho_fan_in=0.01312,
        tests={k: _test("equivalent") for k in _TEST_KEYS},
        escapers=("post_ln", "resi_dual", "deepnorm", "mix_ln"), faster=("peri_ln", "ln_scaling"))
    fields.update(over)
    return init.InitialisationResult(**fields)


# ----------------------------------------------------------------------------- names and values

def _glued_names(result) -> set[str]:
    """The names glue_all writes: an interval evidence as its value, _lo and _hi."""
    g = result.glues()
    return set(g) | {k + part for k, v in g.items() if isinstance(v, EvidenceGlue)
                     for part, x in (("_lo", v.lo), ("_hi", v.hi), ("_se", v.se)) if x is not None}


def test_glue_names_are_the_names_the_notebook_glues_and_reads():
    assert set(glue_names(_tiny_result())) == set(_tiny_result().glues())
    names = _glued_names(_tiny_result())
    assert names == _stored_glue_names(NOTEBOOK) - {f + "-data" for f in FIGURES} - FIGURES
    assert prose_glue_names(NOTEBOOK) - FIGURES <= names


def test_every_declared_evidence_of_the_chapter_is_glued_as_evidence():
    g = _tiny_result().glues()
    declared = {d.name for d in evidence.DECLARED.values() if d.chapter == "06_initialisation"}
    assert declared == {k for k in g if k.startswith("ev_")}
    assert all(isinstance(g[k], EvidenceGlue) for k in declared)
    assert set(evidence.INIT_EXP) == set(ARCHS) == set(evidence.GRAD_RATIO)


def test_glues_round_as_the_prose_shows():
    g = _tiny_result().glues()
    assert g["ev_init_exp_pre_ln"] == EvidenceGlue(-0.931, lo=-0.941, hi=-0.921)
    assert g["ev_init_exp_theory"] == EvidenceGlue(-0.951)
    assert g["ev_cor35_random_exp"] == EvidenceGlue(-0.945, lo=-0.974, hi=-0.923)
    assert g["rho_pre_ln"] == 0.78 and g["att_mlp_ratio"] == 0.51 and g["fi_rho_pre_ln"] == 0.013
    assert g["init_level_pre_over_post"] == 315.49 and g["init_drop_theory"] == 0.097
    assert g["init_exp_minus_pre_post_ln"] == 0.93 and g["init_exp_minus_pre_pre_ln"] == 0.0
    assert g["fi_grad1_pre_ln"] == 4.0 and g["fi_grad2_pre_ln"] == 2.0 and g["fi_exp_pre_ln"] == -1.07
    for name in ("init_k_min", "init_depth", "init_width", "init_n_seeds", "init_n_tests", "init_n_boot_family"):
        assert type(g[name]) is int, name
    assert (g["init_depth"], g["init_width"], g["init_n_tests"]) == (init.L, init.D, len(_TEST_KEYS))
    assert all(type(v) is float for k, v in g.items() if k.startswith(("init_sub_exp_", "hetero_", "fi_", "grad_ratio2")))
    assert g["t_pre"] == "equivalent" and isinstance(g["t_pre"], Words)
    assert isinstance(g["init-tests-table"], Table) and g["init-tests-table"].count("\n") == 1 + len(_TEST_KEYS)


def test_escapers_and_faster_list_only_the_shown_claims():
    tests = {k: _test("shown", kind="above") for k in _TEST_KEYS}
    tests["t_escape_deepnorm"] = _test("not shown", shown=False, kind="above")
    g = _tiny_result(tests=tests).glues()
    assert g["init_escapers"] == "Post-LN, ResiDual, Mix-LN"
    assert g["init_faster"] == "Peri-LN, LayerNorm-Scaling"
    tests = {k: _test("not shown", shown=False, kind="above") for k in _TEST_KEYS}
    assert _tiny_result(tests=tests).glues()["init_escapers"] == "none"


# ----------------------------------------------------------------------------- wording and tables

def test_names_words_lists_none_one_or_several():
    assert init.names_words([]) == "none" and isinstance(init.names_words([]), Words)
    assert init.names_words(["Peri-LN"]) == "Peri-LN"
    assert init.names_words(("Post-LN", "ResiDual", "DeepNorm")) == "Post-LN, ResiDual, DeepNorm"


def test_rho_table_rounds_to_two_significant_digits():
    t = init.rho_table({"pre_ln": (7.87e-4, 1.004e-3, 0.7834), "peri_ln": (7.87e-4, 1.9, 4.1e-4)})
    assert t.splitlines()[2] == "| `pre_ln` | 0.00079 | 0.001 | 0.78 |"
    assert t.splitlines()[3] == "| `peri_ln` | 0.00079 | 1.9 | 0.00041 |"


def test_exponents_table_leaves_what_is_not_measured_blank():
    t = init.exponents_table((-0.951, -0.975), {
        "`pre_ln`": (-0.931, (-0.979, -0.86), -0.957, -0.89, (-0.935, -0.831), -0.919),
        "`post_ln`": (0.003, (-0.001, 0.008), None, -0.006, (-0.023, 0.011), None),
        "`resi_dual` ($x_d$)": (-0.938, (-0.96, -0.918), None, None, None, None)})
    lines = t.splitlines()
    assert lines[2] == "| theory $w_k^2$ (embedding-counted) | -0.951 | exact |  | -0.975 | exact |  |"
    assert lines[3] == "| `pre_ln` | -0.931 | [-0.979, -0.860] | -0.957 | -0.890 | [-0.935, -0.831] | -0.919 |"
    assert lines[4] == "| `post_ln` | 0.003 | [-0.001, 0.008] |  | -0.006 | [-0.023, 0.011] |  |"
    assert lines[5] == "| `resi_dual` ($x_d$) | -0.938 | [-0.960, -0.918] |  |  |  |  |"


def test_drop_and_grad_tables():
    t = init.drop_table({"pre_ln": (0.0, 0.1012), "post_ln": (0.934, 1.0003)}, 0.0972)
    assert t.splitlines()[2:] == ["| `pre_ln` | 0.0 | 0.1 |", "| `post_ln` | 0.93 | 1.0 |",
                                 "| theory $w_k^2$ |  | 0.097 |"]
    g = init.grad_table({"pre_ln": ((7.2601, 4.7262, 9.7934), 5.2549), "mix_ln": ((14.979, 12.37, 17.58), 1.2961)},
                        0.975)
    assert g.splitlines()[0] == "| placement | first / last block | 97.5% $t$ interval | second / last block |"
    assert g.splitlines()[2:] == ["| `pre_ln` | 7.26 | [4.73, 9.79] | 5.25 |", "| `mix_ln` | 15.0 | [12.4, 17.6] | 1.3 |"]


def test_rounding_helpers():
    assert init.rnd(np.float64(-0.93149)) == -0.931 and type(init.rnd(np.float32(1.5))) is float
    assert init.sig(0.000412, 2) == 0.00041 and init.sig(315.49, 2) == 320.0


def test_tokens_are_the_same_windows_for_a_seed():
    a, b = init.tokens((0, 1)), init.tokens((0,))
    assert torch.equal(a[0], b[0]) and not torch.equal(a[0], a[1])
    assert a[0].shape == (init.B, init.T) and int(a[0].max()) < init.VOCAB


def test_chapter_rejects_a_root_that_is_not_a_folder(tmp_path):
    with pytest.raises(ValueError, match="not a folder"):
        init.chapter(tmp_path / "missing")


# ----------------------------------------------------------------------------- the measured result

@pytest.fixture(scope="module")
def measured():
    from resdecay_lib.nn.device import pin_threads
    pin_threads(1)   # as Chapter 6 does
    return init.chapter(ROOT)


def _ln0(x):
    x = x.double()
    x = x - x.mean(-1, keepdim=True)
    return x / torch.sqrt((x ** 2).mean(-1, keepdim=True) + 1e-5)


@pytest.mark.slow
def test_chapter_agrees_with_an_independent_recomputation(measured):
    r = measured
    # the exact w_k^2 (embedding-counted: 2 (1 - sqrt(k / (k + 1)))), its least-squares log-log slope
    k = np.arange(init.K_MIN, init.L + 1)
    assert r.theory_fit.exponent == pytest.approx(np.polyfit(np.log(k), np.log(2 * (1 - np.sqrt(k / (k + 1)))), 1)[0],
                                                  abs=1e-12)
    # Pre-LN at seed 0, rebuilt here: its stream by forward hooks on the blocks, omega_k^2 by hand
    model = build("pre_ln", seed=0, device="cpu", init_std=init.INIT_STD, **init.SHAPE)
    xs = []
    hooks = [b.register_forward_pre_hook(lambda m, a: xs.append(a[0].detach())) for b in model.blocks]
    hooks.append(model.blocks[-1].register_forward_hook(lambda m, a, out: xs.append(out.detach())))
    with torch.no_grad():
        model(init.tokens((0,))[0])
    for h in hooks:
        h.remove()
    y = torch.stack([_ln0(x) for x in xs])                                   # [L+1, B, T, D]
    omega = ((y[1:] - y[:-1]) ** 2).mean(-1).mean(-1).T.numpy()                # [B, L]
    assert np.allclose(r.profiles["pre_ln"]["blk"][:init.B], omega, rtol=1e-4)
    # the embedding's variance per coordinate, and its expectation 2 sigma^2 (1 - 1/d)
    assert r.profiles["pre_ln"]["emb_var"][0] == pytest.approx(xs[0].double().var(-1, unbiased=False).mean().item(),
                                                               rel=1e-9)
    assert r.emb_var_init == pytest.approx(2 * 0.02 ** 2 * (1 - 1 / 64))
    # ResiDual's x_a is Post-LN's stream; Post-LN escapes, Pre-LN follows the theorem
    assert np.array_equal(r.profiles["resi_dual"]["blk"], r.profiles["post_ln"]["blk"])
    assert r.tests["t_pre"].shown and r.tests["t_escape_post_ln"].shown and r.n_dropped == 0
    assert r.grad_level == 0.975 and set(r.escapers) == {a for a in ARCHS if ARCHS[a].renormalises}
