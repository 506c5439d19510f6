"""The claims ledger: evidence is read from stored glue outputs, and verdicts follow it."""
from __future__ import annotations

import json
import math
import pathlib
import random
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from resdecay_lib.book import evidence, ledger, rules
from resdecay_lib.stats import inference
from resdecay_lib.book.ledger import CLAIMS, VERDICTS, Verdict, evaluate, read_evidence
from notebook_fixtures import glue_output, notebook   # a notebook as the chapters store it

ROOT = pathlib.Path(__file__).resolve().parents[2]
BY_ID = {c.id: c for c in CLAIMS}


THEOREM_OK = {"ev_thm33_symbolic_residual": 0.0, "ev_thm33_z_crit": 3.5, "ev_thm33_maxz_large_d": 2.1,
              "ev_thm33_maxz_raw_small_d": 9.0, "ev_thm33_maxz_corrected_small_d": 1.9,
              "ev_thm33_rel_bias_d16": -0.031}


def test_missing_evidence_makes_every_claim_open_with_the_missing_names():
    for claim, verdict in evaluate({}):
        assert verdict.word == "open"
        assert verdict.reason.startswith(ledger.MISSING)
        assert claim.keys[0] in verdict.reason


def test_claims_are_unique_documented_and_cover_the_card():
    ids = [c.id for c in CLAIMS]
    assert len(ids) == len(set(ids))
    assert {"claim-omega-formula", "claim-mean-abs-rate", "claim-output-rate", "claim-fifth-at-24",
            "claim-independence", "claim-init-not-training", "claim-compensation", "claim-idle-blocks",
            "claim-depth-cost", "claim-fixes-escape", "claim-gradients-undamped", "claim-pretrained",
            "claim-promote"} <= set(ids)
    for c in CLAIMS:
        assert re.fullmatch(r"claim-[a-z0-9-]+", c.id)
        assert c.rule.__doc__ and len(c.rule.__doc__) > 80, f"{c.id}: rule needs its thresholds documented"
        assert all(k.startswith("ev_") for k in c.keys) and c.sources


def test_every_rule_gives_a_valid_verdict_on_any_evidence():
    rng = random.Random(0)
    for _ in range(200):
        ev = {k: rng.choice([rng.uniform(-3, 3), 0.0, 1.0, -1.0, rng.uniform(0, 10)])
              for c in CLAIMS for k in c.keys}
        for k in ev:  # standard errors and degrees of freedom have their own ranges
            if k.endswith("_se"):
                ev[k] = abs(ev[k])
            if k.endswith("_t_df") or k.endswith("_df") or k.endswith("_n_runs"):
                ev[k] = float(rng.randint(1, 10))
        for k in [k for k in ev if k.endswith("_lo") and k[:-3] + "_hi" in ev]:   # a glued interval is ordered
            ev[k], ev[k[:-3] + "_hi"] = sorted((ev[k], ev[k[:-3] + "_hi"]))
        for claim, verdict in evaluate(ev):
            assert verdict.word in VERDICTS and verdict.reason and "\n" not in verdict.reason


def test_verdict_word_must_be_one_of_the_four():
    with pytest.raises(ValueError, match="verdict word"):
        Verdict("probably", "")


def test_theorem_verdict_follows_the_small_width_evidence():
    claim = BY_ID["claim-omega-formula"]
    assert claim.verdict(THEOREM_OK).word == "holds with correction"
    assert claim.verdict({**THEOREM_OK, "ev_thm33_maxz_raw_small_d": 2.0}).word == "holds"
    assert claim.verdict({**THEOREM_OK, "ev_thm33_maxz_corrected_small_d": 5.0}).word == "does not hold"
    assert claim.verdict({**THEOREM_OK, "ev_thm33_maxz_large_d": 4.0}).word == "does not hold"
    assert claim.verdict({**THEOREM_OK, "ev_thm33_symbolic_residual": 0.01}).word == "does not hold"


def test_fifth_at_24_verdict_from_the_exact_ratios():
    from resdecay_lib.maths.theory import omega
    w = lambda k, e=False: float(omega(k, embedding_counted=e))  # noqa: E731
    ev = {"ev_fifth_ratio_seed": math.sqrt(float(ledger_omega_sq(24)) / 2.0),
          "ev_fifth_ratio_seed_k2": w(24) / w(2), "ev_fifth_ratio_embedding": w(24, True) / w(1, True),
          "ev_fifth_ratio_approx": 24 ** -0.5}
    claim = BY_ID["claim-fifth-at-24"]
    assert claim.verdict(ev).word == "holds with correction"   # exact ratios are about 1/4
    assert claim.verdict({**ev, "ev_fifth_ratio_embedding": 0.2}).word == "holds"
    assert claim.verdict({**ev, "ev_fifth_ratio_approx": 0.001}).word == "does not hold"


def ledger_omega_sq(k):
    from resdecay_lib.maths.theory import omega_sq
    return omega_sq(k)


def _exp(name, v, lo, hi):
    return {name: v, name + "_lo": lo, name + "_hi": hi}


def _trained(init=-0.9, init_ref=-0.9, tr=-0.9, tr_ref=-0.9, se=0.01, worst=1.7, shift=0.0, init_shift=0.0):
    t = 4.303 * se   # the 95 % t interval the chapter glues beside the value (df 2)
    return {**_exp("ev_init_exp_trainedruns_pre_ln", init, init - t, init + t),
            "ev_init_exp_trainedruns_pre_ln_se": se, "ev_init_ref_pre_ln": init_ref,
            "ev_init_fitstart_shift_pre_ln": init_shift, "ev_trained_fitstart_shift_pre_ln": shift,
            **_exp("ev_trained_exp_pre_ln", tr, tr - t, tr + t),
            "ev_trained_exp_pre_ln_se": se, "ev_trained_ref_pre_ln": tr_ref, "ev_exp_t_df": 2.0,
            "ev_pre_ln_worst_loss_deep": worst, "ev_trigram_loss": 2.03}


def test_init_vs_training_is_an_equivalence_test_against_the_matched_reference():
    v = lambda ev: BY_ID["claim-init-not-training"].verdict(ev).word  # noqa: E731
    assert v(_trained()) == "does not hold"                        # both equivalent
    assert v(_trained(tr=-2.0, tr_ref=-1.05)) == "holds"          # init equivalent, trained far
    assert v(_trained(init=-0.7, tr=-2.0, tr_ref=-1.05)) == "holds with correction"
    assert v(_trained(init=-0.5, tr=-1.2, tr_ref=-1.05)) == "does not hold"   # trained nearer
    # a wide interval cannot establish equivalence or departure: the data cannot tell
    assert v(_trained(tr=-1.2, tr_ref=-1.05, se=0.2, init=-0.9)) == "open"
    # the fit-start shift widens the interval: a trained exponent equivalent from k = 2 alone is not
    assert v(_trained(tr=-0.9, tr_ref=-0.9, shift=0.5)) != "does not hold"
    assert v(_trained(tr=-2.0, tr_ref=-1.05, init_shift=0.2)) == "holds with correction"


def test_init_vs_training_is_open_while_a_deep_pre_ln_run_does_not_beat_the_trigram():
    v = lambda ev: BY_ID["claim-init-not-training"].verdict(ev)  # noqa: E731
    untrained = v(_trained(tr=-2.0, tr_ref=-1.05, worst=2.5))   # the exponents alone would say "holds"
    assert untrained.word == "open" and "not trained" in untrained.reason
    assert v(_trained(tr=-2.0, tr_ref=-1.05, worst=2.03)).word == "open"   # equal is not below
    assert "below the trigram" in v(_trained(tr=-2.0, tr_ref=-1.05)).reason


def _compensation(toy=(0.3, -0.4, 1.0), smol=(0.05, -0.05, 0.09), qwen=(0.0, -0.08, 0.08)):
    return {**_exp("ev_flattening_toy", *toy), **_exp("ev_flattening_smollm2", *smol),
            **_exp("ev_flattening_qwen", *qwen)}


def test_compensation_reads_how_much_the_output_scales_flatten_the_decay_in_three_families():
    v = lambda ev: BY_ID["claim-compensation"].verdict(ev).word  # noqa: E731
    assert v(_compensation()) == "open"                                   # the toy interval reaches above 0.1
    assert v(_compensation(toy=(0.0, -0.05, 0.05))) == "does not hold"     # nobody flattens it by more than 0.1
    up = _compensation(qwen=(1.6, 1.5, 1.7))
    assert v(up) == "holds" and "qwen" in BY_ID["claim-compensation"].verdict(up).reason
    assert v(_compensation(toy=(0.3, 0.15, 0.6))) == "holds"              # one family is enough
    assert v(_compensation(toy=(0.3, 0.05, 0.6))) == "open"               # above 0, not above the margin
    # a steeper decay (later outputs shrink) is the opposite of compensation
    assert v(_compensation(toy=(-0.3, -0.5, -0.1))) == "does not hold"


def test_idle_blocks_and_depth_cost_can_each_come_out_every_way():
    v = lambda cid, ev: BY_ID[cid].verdict(ev).word  # noqa: E731
    idle = {**_exp("ev_half_ratio_toy", 0.2, 0.15, 0.3), "ev_half_ratio_ref_toy": 0.39}
    assert v("claim-idle-blocks", idle) == "holds"                                  # below the theorem's ratio
    assert v("claim-idle-blocks", {**idle, **_exp("ev_half_ratio_toy", 0.6, 0.5, 0.8)}) == "holds with correction"
    assert v("claim-idle-blocks", {**idle, **_exp("ev_half_ratio_toy", 1.3, 1.1, 1.5)}) == "does not hold"
    assert v("claim-idle-blocks", {**idle, **_exp("ev_half_ratio_toy", 1.0, 0.5, 1.8)}) == "open"
    # depth-cost: Pre-LN minus ResiDual at 4, 8, 16, 24 and the gap's growth (tests/book/test_rule_branches.py
    # reads each branch); the same gaps with a growing or flat gap, and gaps within the margin
    gaps = {k: v_ for L in (4, 8, 16, 24) for k, v_ in _exp(f"ev_gap_resi_dual_L{L}", 0.05, 0.02, 0.09).items()}
    assert v("claim-depth-cost", {**gaps, **_exp("ev_gap_growth_resi_dual", 0.02, 0.01, 0.03)}) == "holds"
    assert v("claim-depth-cost", {**gaps, **_exp("ev_gap_growth_resi_dual", 0.0, -0.01, 0.01)}) == "holds with correction"
    within = {k: v_ for L in (4, 8, 16, 24) for k, v_ in _exp(f"ev_gap_resi_dual_L{L}", 0.0, -0.009, 0.009).items()}
    assert v("claim-depth-cost", {**within, **_exp("ev_gap_growth_resi_dual", 0.0, -0.01, 0.01)}) == "does not hold"
    assert v("claim-depth-cost", {**within, **_exp("ev_gap_resi_dual_L24", 0.0, -0.01, 0.05),
                                  **_exp("ev_gap_growth_resi_dual", 0.0, -0.01, 0.01)}) == "open"


def test_independence_reads_the_correlations_share_of_the_exponent_shift_against_one_half():
    ok5 = {"ev_hetero_maxz": 1.0, "ev_hetero_z_crit": 3.0, "ev_rc_maxz": 1.0, "ev_rc_z_crit": 3.0}
    ev = {**ok5, "ev_split_exp_theorem": -1.05, "ev_split_exp_hetero": -0.4, "ev_split_exp_corr": -0.9,
          "ev_split_exp_full": -0.32, "ev_split_exp_measured": -0.25, **_exp("ev_split_corr_share", 0.1, 0.0, 0.2)}
    v = lambda e: BY_ID["claim-independence"].verdict(e).word  # noqa: E731
    assert v(ev) == "does not hold"                                       # the variances carry the shift
    assert v({**ev, **_exp("ev_split_corr_share", 0.7, 0.6, 0.8)}) == "holds"
    assert v({**ev, **_exp("ev_split_corr_share", 0.5, 0.3, 0.7)}) == "open"
    assert v({**ev, "ev_split_exp_theorem": -0.3}) == "does not hold"     # the theorem already gives it
    assert v({**ev, "ev_split_exp_full": -1.2}) == "open"                 # the Gram does not explain the shift
    assert v({**ev, "ev_rc_maxz": 5.0}) == "open"


def test_fixes_and_pretrained_and_promote_verdicts_change_with_evidence():
    pre = _exp("ev_init_exp_pre_ln", -1.0, -1.1, -0.9)
    esc = {**pre, **_exp("ev_init_exp_peri_ln", -0.2, -0.3, -0.1), **_exp("ev_init_exp_resi_dual", 0.0, -0.1, 0.1)}
    half = {**esc, **_exp("ev_init_exp_resi_dual", -1.0, -1.1, -0.95)}
    none = {**half, **_exp("ev_init_exp_peri_ln", -1.0, -1.1, -0.95)}
    words = [BY_ID["claim-fixes-escape"].verdict(e).word for e in (esc, half, none)]
    assert words == ["holds", "holds with correction", "does not hold"]

    pt = {**_smollm2(-0.8, -0.85, -0.75, ref=-0.95), **_exp("ev_pretrained_exp_gemma3", 0, -.1, .1),
          **_exp("ev_pretrained_exp_minilm", 0, -.1, .1)}
    pretrained = lambda ev: BY_ID["claim-pretrained"].verdict(ev).word  # noqa: E731
    assert pretrained(pt) == "holds with correction"                  # decays, not within 0.1 of -0.95
    assert pretrained({**pt, "ev_pretrained_ref_smollm2": -0.82}) == "holds"
    # the reference is the matched one: the same interval is no longer equivalent to -1.1
    assert pretrained({**pt, "ev_pretrained_ref_smollm2": -1.1}) == "holds with correction"
    # a bent curve is never "holds"
    assert pretrained({**pt, "ev_pretrained_ref_smollm2": -0.82, **_exp("ev_pretrained_drift_smollm2", 1, .5, 1.5)}) \
        == "holds with correction"
    assert pretrained({**pt, "ev_pretrained_exp_smollm2_hi": 0.1}) == "does not hold"
    tr = {**pt, **_exp("ev_trained_exp_pre_ln", -1.0, -1.03, -0.97), "ev_trained_exp_pre_ln_se": 0.01,
          "ev_trained_ref_pre_ln": -1.02, "ev_exp_t_df": 2.0, "ev_trained_fitstart_shift_pre_ln": 0.0}
    promote = lambda ev: BY_ID["claim-promote"].verdict(ev).word  # noqa: E731
    assert promote(tr) == "holds with correction"
    assert promote({**tr, "ev_pretrained_ref_smollm2": -0.82}) == "holds"
    assert promote({**tr, "ev_trained_ref_pre_ln": -1.5, "ev_pretrained_ref_smollm2": -0.82}) == "holds with correction"
    assert promote({**tr, "ev_trained_exp_pre_ln_hi": 0.3}) == "does not hold"


def _smollm2(exp, lo, hi, ref=-1.05, shift=0.0, quant=0.01, drift=(0.0, -0.05, 0.05)):
    return {**_exp("ev_pretrained_exp_smollm2", exp, lo, hi), "ev_pretrained_ref_smollm2": ref,
            "ev_fitrange_shift_smollm2": shift, "ev_quant_shift": quant,
            **_exp("ev_pretrained_drift_smollm2", *drift)}


def test_a_modified_copy_of_a_stored_output_changes_the_verdict(tmp_path):
    """The whole path: a chapter's stored glue output -> evidence -> verdict."""
    outputs = [glue_output(k, v) for k, v in THEOREM_OK.items()]
    nb = notebook(tmp_path / "02_theorem.ipynb", outputs)
    before = dict(evaluate(read_evidence(tmp_path)))
    changed = json.loads(nb.read_text())
    for out in changed["cells"][0]["outputs"]:
        if out["metadata"]["scrapbook"]["name"] == "ev_thm33_maxz_raw_small_d":
            out["data"]["text/plain"] = "1.2"
    copy_dir = tmp_path / "copy"
    copy_dir.mkdir()
    (copy_dir / "02_theorem.ipynb").write_text(json.dumps(changed))
    after = dict(evaluate(read_evidence(copy_dir)))
    claim = BY_ID["claim-omega-formula"]
    assert before[claim].word == "holds with correction"
    assert after[claim].word == "holds"
    assert before[BY_ID["claim-fifth-at-24"]].word == after[BY_ID["claim-fifth-at-24"]].word == "open"


def test_the_book_evidence_reads_and_every_claim_gets_a_verdict():
    ev = read_evidence(ROOT / "chapters")
    rows = evaluate(ev)
    assert len(rows) == len(CLAIMS)
    table = ledger.markdown_table(rows)
    assert table.count("\n") == len(CLAIMS) + 1
    assert all(f"<{c.id}>`" in table for c in CLAIMS)


def test_verdict_chapter_has_a_section_per_claim_titled_as_the_ledger():
    """The prose of Chapter 10 and the library name the same claims, in the same order."""
    nb = json.loads((ROOT / "chapters" / "10_verdict.ipynb").read_text())
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    sections = re.findall(r"^\((claim-[\w-]+)\)=\n### (.+)$", text, re.M)
    assert sections == [(c.id, c.title) for c in CLAIMS]


def _grads(pre, post, post_first=(11.0, 9.0, 13.0)):
    """Pre-LN's first/last ratio, Post-LN's second/last (what the rule reads for Post-LN) and its
    first/last (reported: its first block reads the raw embedding)."""
    return {**_exp("ev_grad_ratio_pre_ln", *pre), **_exp("ev_grad_ratio2_post_ln", *post),
            **_exp("ev_grad_ratio_post_ln", *post_first)}


def test_gradient_verdict_reads_post_ln_at_its_second_block_not_its_first():
    v = lambda pre, post, first: BY_ID["claim-gradients-undamped"].verdict(_grads(pre, post, first)).word  # noqa: E731
    # a first block that reads the raw embedding says nothing of damping: only second/last decides
    assert v((1.2, 1.05, 1.4), (0.3, 0.2, 0.4), (11.0, 9.0, 13.0)) == "holds"
    assert v((1.2, 1.05, 1.4), (0.99, 0.96, 1.02), (0.3, 0.2, 0.4)) == "holds with correction"


def test_gradient_verdict_reads_the_ratios_intervals_against_1():
    v = lambda pre, post: BY_ID["claim-gradients-undamped"].verdict(_grads(pre, post)).word  # noqa: E731
    assert v((1.2, 1.05, 1.4), (0.3, 0.2, 0.4)) == "holds"
    assert v((1.2, 1.05, 1.4), (0.9, 0.6, 1.2)) == "holds with correction"   # Post-LN not shown damped
    assert v((0.5, 0.3, 0.8), (0.3, 0.2, 0.4)) == "does not hold"
    assert v((1.1, 0.8, 1.4), (0.3, 0.2, 0.4)) == "open"                     # Pre-LN's interval holds 1


def test_gradient_reason_names_amplification_apart_from_undamped():
    reason = lambda pre: BY_ID["claim-gradients-undamped"].verdict(_grads(pre, (3, 2, 4))).reason  # noqa: E731
    assert "amplified" in reason((7.0, 5.0, 9.0))
    assert "amplified" not in reason((1.0, 1.0, 1.4)) and "undamped" in reason((1.0, 1.0, 1.4))


def test_output_verdict_uses_the_random_transformer_when_glued():
    ev = {"ev_cor35_const": 1.0, "ev_cor35_maxz": 2.0, "ev_cor35_z_crit": 4.0}
    claim = BY_ID["claim-output-rate"]
    assert claim.verdict(ev).word == "holds"
    assert claim.verdict({**ev, **_exp("ev_cor35_random_exp", -0.98, -1.1, -0.9)}).word == "holds"
    assert claim.verdict({**ev, **_exp("ev_cor35_random_exp", -0.5, -0.6, -0.4)}).word == "holds with correction"
    assert claim.verdict({**ev, "ev_cor35_maxz": 5.0}).word == "does not hold"


def test_output_verdict_is_an_equivalence_with_the_exact_curve_over_the_same_range():
    ev = {"ev_cor35_const": 1.0, "ev_cor35_maxz": 2.0, "ev_cor35_z_crit": 4.0,
          **_exp("ev_cor35_random_exp", -0.945, -0.974, -0.923)}
    v = lambda e: BY_ID["claim-output-rate"].verdict(e).word  # noqa: E731
    assert v(ev) == "holds"                                              # within 0.1 of -1
    assert v({**ev, "ev_cor35_random_exp_theory": -0.95}) == "holds"
    assert v({**ev, "ev_cor35_random_exp_theory": -0.85}) == "open"      # straddles -0.85 - 0.1
    assert v({**ev, "ev_cor35_random_exp_theory": -0.6}) == "holds with correction"


def test_pretrained_verdict_widens_by_the_fit_range():
    pt = {**_smollm2(-0.97, -0.99, -0.95, ref=-1.0), **_exp("ev_pretrained_exp_gemma3", -1, -1.1, -.9),
          **_exp("ev_pretrained_exp_minilm", 1, .9, 1.1)}
    claim = BY_ID["claim-pretrained"]
    assert claim.verdict(pt).word == "holds"
    assert claim.verdict({**pt, "ev_fitrange_shift_smollm2": 0.3}).word == "holds with correction"
    slow = {**pt, **_smollm2(-0.03, -0.04, -0.02)}
    assert claim.verdict(slow).word == "holds with correction"           # decays, slowly
    assert claim.verdict({**slow, "ev_fitrange_shift_smollm2": 0.3}).word == "does not hold"
    tr = {**slow, **_exp("ev_trained_exp_pre_ln", -1.8, -1.9, -1.7), "ev_fitrange_shift_smollm2": 0.3,
          "ev_trained_exp_pre_ln_se": 0.03, "ev_trained_ref_pre_ln": -1.05, "ev_exp_t_df": 2.0,
          "ev_trained_fitstart_shift_pre_ln": 0.0}
    assert BY_ID["claim-promote"].verdict(tr).word == "does not hold"
    assert BY_ID["claim-promote"].verdict(tr).reason.startswith("do not promote")


def _families(exp=(-1.0, -1.02, -0.98), ref=-1.0, shift=0.0, drift=(-0.05, 0.05)):
    ev = {"ev_quant_shift": 0.01}
    for m in ("smollm2", "qwen"):
        ev.update({**_exp(f"ev_pretrained_exp_{m}", *exp), f"ev_pretrained_ref_{m}": ref,
                   f"ev_fitrange_shift_{m}": shift, **_exp(f"ev_pretrained_drift_{m}", 0.0, *drift)})
    return ev


def test_two_families_is_an_equivalence_in_both_and_fails_on_either():
    v = lambda ev: BY_ID["claim-two-families"].verdict(ev).word  # noqa: E731
    assert v(_families()) == "holds"
    assert v(_families(shift=0.2)) == "open"                          # widened past the margin
    assert v(_families(drift=(0.3, 0.5))) == "open"                   # bent: no single exponent
    far = {**_families(), **_exp("ev_pretrained_exp_qwen", -0.1, -0.15, -0.05)}
    assert v(far) == "does not hold"
    assert v({**far, "ev_pretrained_ref_qwen": -0.1}) == "holds"      # the reference is per model
    assert "qwen" in BY_ID["claim-two-families"].verdict(far).reason


def _idle(smol=(0.2, 0.15, 0.3), qwen=(0.2, 0.15, 0.3), ref=0.39, no_last=None):
    """The two readings of claim-pretrained-idle; ``no_last`` (smol, qwen) without the last block,
    by default the same intervals as with it."""
    ns, nq = no_last or (smol, qwen)
    return {**_exp("ev_half_ratio_smollm2", *smol), **_exp("ev_half_ratio_qwen", *qwen),
            "ev_half_ratio_ref_smollm2": ref - 0.03, "ev_half_ratio_ref_qwen": ref,
            **_exp("ev_half_ratio_no_last_smollm2", *ns), **_exp("ev_half_ratio_no_last_qwen", *nq),
            "ev_half_ratio_ref_no_last_smollm2": ref - 0.03, "ev_half_ratio_ref_no_last_qwen": ref}


def test_pretrained_idle_blocks_can_come_out_every_way():
    v = lambda ev: BY_ID["claim-pretrained-idle"].verdict(ev).word  # noqa: E731
    assert v(_idle()) == "holds"
    assert v(_idle(qwen=(0.6, 0.5, 0.8))) == "holds with correction"
    assert v(_idle(qwen=(1.0, 0.6, 1.4))) == "open"
    assert v(_idle(qwen=(2.0, 1.6, 2.9))) == "does not hold"       # a later half that costs more: SmolLM2's U
    # with the last block the later half costs more; without it, less: the verdict depends on it
    u = _idle(smol=(1.2, 1.1, 1.3), qwen=(2.0, 1.6, 2.9), no_last=((0.7, 0.6, 0.8), (0.7, 0.6, 0.8)))
    assert v(u) == "open" and "depends on the last block" in BY_ID["claim-pretrained-idle"].verdict(u).reason


def _metric(diff=(0.0, -0.05, 0.05), rho=(0.8, 0.6, 0.9)):
    ev = {}
    for m in ("smollm2", "qwen"):
        ev.update(_exp(f"ev_metric_rho_change_{m}", *rho))
        for c in ledger.COMPETITORS:
            ev.update(_exp(f"ev_metric_diff_{c}_{m}", *diff))
    return ev


def test_redundancy_metric_verdict_reads_the_paired_differences_with_a_margin():
    v = lambda ev: BY_ID["claim-redundancy-metric"].verdict(ev).word  # noqa: E731
    assert v(_metric()) == "holds"
    assert v(_metric(diff=(-0.1, -0.2, 0.0))) == "open"              # could be worse by more than 0.1
    assert v(_metric(rho=(0.1, -0.2, 0.4))) == "open"                # the change itself may predict nothing
    worse = {**_metric(), **_exp("ev_metric_diff_angular_qwen", -0.4, -0.6, -0.2)}
    assert v(worse) == "does not hold" and "angular in qwen" in BY_ID["claim-redundancy-metric"].verdict(worse).reason
    # block influence is the change itself (Chapter 9): it is not among the competitors
    assert "influence" not in ledger.COMPETITORS


def test_the_real_model_claims_name_every_key_their_rules_read():
    """Each of the three rules reads only keys its claim declares (a missing one would be a
    KeyError, not an honest 'open')."""
    for cid, ev in (("claim-two-families", _families()), ("claim-pretrained-idle", _idle()),
                    ("claim-redundancy-metric", _metric())):
        claim = BY_ID[cid]
        assert set(claim.keys) == set(ev), cid
        assert claim.verdict(ev).word in ledger.VERDICTS


def test_every_claim_quotes_the_card_verbatim_and_declares_its_statistic():
    card_path = ROOT.parent / "shared" / "seeds" / "000_b8cab5ddab79427f.txt"
    if not card_path.exists():
        pytest.skip(f"the theory card is not beside the repository ({card_path})")
    card = " ".join(card_path.read_text(encoding="utf-8").split())
    for c in ledger.CLAIMS:
        assert c.card and " ".join(c.card.split()) in card, (c.id, c.card)
        assert c.primary and c.margin and c.family, c.id


# ----------------------------------------------------------------------------- one TOST

@given(m=st.floats(-3, 3), se=st.floats(0, 1), ref=st.floats(-3, 3), widen=st.floats(-0.5, 0.5),
       df=st.integers(2, 60), alpha=st.sampled_from([0.05, 0.025, 0.05 / 17]))
@settings(max_examples=300, deadline=None)
def test_the_ledgers_frozen_tost_decides_as_the_library_tost(m, se, ref, widen, df, alpha):
    """The ledger's ``_tost`` is part of registered rules (its code is in their fingerprints),
    so it stays as declared; it must decide exactly as the library's one TOST, an interval
    wholly within (or outside) the margin: ``stats.inference.within_margin`` / ``outside_margin``
    on [m - t se - |w|, m + t se + |w|]."""
    e, dfe = evidence.TRAINED_EXP_PRE_LN, evidence.EXP_T_DF
    ev = {e: m, e.se: se, dfe: df}
    margin = ledger.EXP_MARGIN
    half = inference.t_quantile(1 - alpha, df) * se + abs(widen)
    lo, hi = m - half, m + half
    # a knife-edge (an end within rounding of a margin's end) may fall either way
    assume(min(abs(lo - (ref - margin)), abs(hi - (ref + margin)), abs(lo - (ref + margin)),
               abs(hi - (ref - margin))) > 1e-9)
    eq, out, _ = rules._tost(ev, e, ref, alpha, dfe, widen=widen)
    assert (eq, out) == (inference.within_margin(lo, hi, ref, margin),
                         inference.outside_margin(lo, hi, ref, margin))
