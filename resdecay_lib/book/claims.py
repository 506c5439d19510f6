"""The claims ledger's catalogue: :data:`CLAIMS`, one :class:`~resdecay_lib.book.verdicts.Claim`
per sentence of the theory card.

A claim is a sentence of the card (Xie et al. 2023, arXiv:2304.14802, §3.2, as the theory card
THEORY-096 states it), the chapter and label of its evidence, the evidence it needs (declared
once, in :mod:`resdecay_lib.book.evidence`; the catalogue never spells a name), its rule (in
:mod:`resdecay_lib.book.rules`), and the declaration ``results/preregistration.json`` records
with the rule's fingerprint: the card's sentence verbatim, the primary statistic, the margin
and the family of tests. Chapter 10 (the verdict) has a section per claim, in this order, and
reads them through :mod:`resdecay_lib.book.ledger`.
"""
from __future__ import annotations

import dataclasses

from . import evidence as E
from .rules import (COMPETITORS, FIXES, GAP_FIXES, OTHER_FIXES, PRE_LN_FAMILIES, rule_compensation,
                    rule_depth_cost, rule_fifth, rule_fixes, rule_front, rule_gradients, rule_idle_blocks,
                    rule_independence, rule_init_vs_training, rule_mean_abs, rule_mechanism, rule_metric, rule_omega_formula,
                    rule_output, rule_pretrained, rule_pretrained_idle, rule_promote, rule_two_families)
from .verdicts import Claim

__all__ = ["CLAIMS", "CONFIRMATORY_NEEDS", "confirmatory_reading"]


_FAMILY_READING = tuple(x for m in PRE_LN_FAMILIES
                        for x in (E.PRETRAINED_EXP[m], E.PRETRAINED_REF[m], E.FITRANGE_SHIFT[m],
                                  E.PRETRAINED_DRIFT[m])) + (E.QUANT_SHIFT,)
_SMOLLM2_READING = (E.PRETRAINED_EXP["smollm2"], E.PRETRAINED_REF["smollm2"], E.FITRANGE_SHIFT["smollm2"],
                    E.PRETRAINED_DRIFT["smollm2"], E.QUANT_SHIFT)

_TWO = "one family of two (Bonferroni, 0.05 / 2 each)"

CLAIMS: list[Claim] = [
    Claim("claim-omega-formula", "Theorem 3.3: the variance of the change",
          r"If the block outputs are independent, $x^f_k \sim N(0, \sigma^2 I)$, then "
          r"$\mathrm{LN}(x^a_{k+1}) - \mathrm{LN}(x^a_k) \sim N(0, \omega_k^2 I)$ with "
          r"$\omega_k^2 = 2 / (\sqrt{k}\,(\sqrt{k-1} + \sqrt{k}))$.",
          (("chapters/02_theorem", "thm-omega"),),
          (E.THM33_SYMBOLIC_RESIDUAL, E.THM33_Z_CRIT, E.THM33_MAXZ_LARGE_D, E.THM33_MAXZ_RAW_SMALL_D,
           E.THM33_MAXZ_CORRECTED_SMALL_D), rule_omega_formula, optional=(E.THM33_REL_BIAS_D16,),
          card="Theorem 3.3 gives ω_k² under the independence assumption",
          primary="SymPy's residual of the closed form; the largest |z| of the Monte Carlo over k at d = 4096 and d = 16",
          margin="a z statistic beyond the Bonferroni critical value over the chapter's grid (alpha 0.01)",
          family="Chapter 2's Monte Carlo grid, Bonferroni over k",
          deciding=(E.THM33_MAXZ_RAW_SMALL_D, E.THM33_MAXZ_CORRECTED_SMALL_D)),
    Claim("claim-mean-abs-rate", "Corollary 3.4: O(1/√k) per coordinate",
          r"Per coordinate, $E|\mathrm{LN}(x^a_{k+1}) - \mathrm{LN}(x^a_k)| = O(1/\sqrt{k})$.",
          (("chapters/03_corollary_34", "cor-mean-abs"),),
          (E.COR34_SQRTK_LIMIT, E.COR34_REMAINDER_C, E.COR34_MAXZ, E.COR34_Z_CRIT), rule_mean_abs,
          card="per coordinate E[|·|] ~ O(1/√k)",
          primary="lim sqrt(k) w_k (SymPy), the remainder constant, the Monte Carlo's largest |z|",
          margin="ROUNDING for exact values; the Bonferroni critical z (alpha 0.01)",
          family="Chapter 3's Monte Carlo grid, Bonferroni over k",
          deciding=(E.COR34_SQRTK_LIMIT, E.COR34_MAXZ)),
    Claim("claim-output-rate", "Corollary 3.5: O(1/√N) at the output",
          r"Adding a block to an $N-1$ block model changes the normalised output by $O(1/\sqrt{N})$.",
          (("chapters/04_corollary_35", "cor-output"), ("chapters/06_initialisation", "")),
          (E.COR35_CONST, E.COR35_MAXZ, E.COR35_Z_CRIT), rule_output,
          optional=(E.COR35_RANDOM_EXP, E.COR35_RANDOM_EXP_THEORY),
          card="The same argument at the output gives O(1/√N) for the effect of adding a block to an N−1 block model.",
          primary="the random Pre-LN transformer's exponent of the output change against the exact curve's, N = 4..48",
          margin="EXP_MARGIN = 0.1 (the book's one exponent margin: a tenth of the theorem's -1)",
          family="Chapter 6's family of 23 claims",
          deciding=(E.COR35_RANDOM_EXP,)),
    Claim("claim-fifth-at-24", "About a fifth at k = 24",
          "At $k = 24$ the per-layer change is about a fifth of its value at $k = 1$, not a thousandth.",
          (("chapters/03_corollary_34", "tbl-fifth"),),
          (E.FIFTH_RATIO_SEED, E.FIFTH_RATIO_SEED_K2, E.FIFTH_RATIO_EMBEDDING, E.FIFTH_RATIO_APPROX),
          rule_fifth, optional=(E.FIFTH_RATIO_SEED_LN0,),
          card="At k = 24 the per-layer change is about a fifth of its value at k = 1, not a thousandth.",
          primary="the exact ratios omega_24 / omega_1 in each convention",
          margin="'about a fifth': 1/5 is the nearest unit fraction (4.5 < 1/ratio < 5.5)",
          family="exact values: no test",
          deciding=(E.FIFTH_RATIO_SEED_K2, E.FIFTH_RATIO_APPROX)),
    Claim("claim-independence", "The independence assumption does the work",
          "The independence assumption is doing the work: in a trained network block outputs are "
          "neither Gaussian nor independent, and that correlation is what most likely changes the exponent.",
          (("chapters/05_beyond_independence", "tbl-departures"), ("chapters/07_training", "fig-trained-predictions")),
          (E.HETERO_MAXZ, E.HETERO_Z_CRIT, E.RC_MAXZ, E.RC_Z_CRIT, E.SPLIT_CORR_SHARE, E.SPLIT_EXP_THEOREM,
           E.SPLIT_EXP_HETERO, E.SPLIT_EXP_CORR, E.SPLIT_EXP_FULL, E.SPLIT_EXP_MEASURED),
          rule_independence,
          card="later blocks read the stream the earlier ones wrote, which is the correlation most likely to change the exponent.",
          primary="the correlations' share of the exponent shift from the theorem's curve to the exact (r, c) "
                  "prediction, symmetric (Shapley) split against the unequal variances, trained Pre-LN L = 24, "
                  "k = 2..L, rho's convention; 95 % t interval over seeds",
          margin="SPLIT_BOUNDARY = 1/2: 'most likely to change the exponent' means carrying more of the shift "
                 "than the one other departure, the unequal variances",
          family="one test",
          deciding=(E.SPLIT_CORR_SHARE,)),
    Claim("claim-init-not-training", "Initialisation better than training",
          "The theory describes a freshly initialised network better than a trained one.",
          (("chapters/07_training", "fig-exponent-training"), ("chapters/06_initialisation", "fig-init-curves")),
          (E.TRAINED_EXP_PRE_LN, E.TRAINED_REF_PRE_LN, E.TRAINED_FITSTART_SHIFT_PRE_LN, E.INIT_EXP_TRAINEDRUNS_PRE_LN,
           E.INIT_REF_PRE_LN, E.INIT_FITSTART_SHIFT_PRE_LN, E.EXP_T_DF, E.PRE_LN_WORST_LOSS_DEEP, E.TRIGRAM_LOSS),
          rule_init_vs_training,
          card="It describes initialisation better than training.",
          primary="the exponent of omega_k^2 over k = 2..24 of the same Pre-LN runs at step 0 and at the end, each "
                  "against the theorem's over the same range and convention, TOST widened by its fit-start shift",
          margin="EXP_MARGIN = 0.1",
          family=_TWO,
          deciding=(E.INIT_EXP_TRAINEDRUNS_PRE_LN, E.TRAINED_EXP_PRE_LN)),
    Claim("claim-compensation", "Training could compensate",
          "A model could learn to compensate by scaling later blocks' outputs up.",
          (("chapters/07_training", "fig-trained-predictions"), ("chapters/09_pretrained", "fig-pretrained-growth")),
          (E.FLATTENING_TOY, *(E.FLATTENING[m] for m in PRE_LN_FAMILIES)),
          rule_compensation,
          card="a model could in principle learn to compensate by scaling later blocks’ outputs up.",
          primary="how much the measured output variances of the blocks past the three-block front flatten the "
                  "decay: the exponent of omega_k^2 they give under independence minus the exponent the same "
                  "blocks give at their mean variance, k = 4..L-1, in toy Pre-LN L = 24, SmolLM2 and Qwen",
          margin="EXP_MARGIN = 0.1: compensation flattens the exponent by more than the book's exponent margin",
          family="one family of three readings (Bonferroni, 1 - 0.05/3 each)",
          deciding=(E.FLATTENING_TOY, E.FLATTENING['smollm2'], E.FLATTENING['qwen'])),
    Claim("claim-idle-blocks", "Later blocks contribute a vanishing share",
          "Later Pre-LN blocks contribute a vanishing share of the stream, so deep blocks idle.",
          (("chapters/08_cost", "fig-ablation"),),
          (E.HALF_RATIO_TOY, E.HALF_RATIO_REF_TOY), rule_idle_blocks,
          card="it is the same thing that makes later blocks’ contributions a vanishing share of it",
          primary="the mean loss increase from removing blocks 13..24 over that of blocks 4..12, trained Pre-LN "
                  "L = 24, every run; 95 % t interval over seeds of its logarithm",
          margin="1 (later blocks cost less) and the theorem's own ratio of omega_k^2 over the same blocks "
                 "('vanishing' at the card's rate)",
          family="one test",
          deciding=(E.HALF_RATIO_TOY,)),
    Claim("claim-depth-cost", "The depth at which it costs accuracy",
          "Deep Pre-LN blocks cannot refine the representation; the depth at which this starts to cost "
          "accuracy is the practical question the card leaves open.",
          (("chapters/08_cost", "tbl-cost-gap-depth"),),
          (*E.GAP_BY_DEPTH.values(), E.GAP_GROWTH),
          rule_depth_cost,
          card="the practical question — the depth at which it starts to cost accuracy — is not answered here.",
          primary="Pre-LN's final validation loss minus ResiDual's at depths 4, 8, 16 and 24, paired by seed, "
                  "every run; the onset, the smallest depth from which every gap lies above the margin; and the "
                  "gap's growth, per seed its slope on log2 depth",
          margin="DEPTH_GAP_MARGIN = 0.01 nats/char: under the seed-to-seed spread of one run's final loss",
          family="one family of five (four gaps and the growth; 1 - 0.05/5 each)",
          deciding=(E.GAP_BY_DEPTH[24], E.GAP_GROWTH)),
    Claim("claim-fixes-escape", "The fixes are rearrangements that escape the decay",
          "The fixes in the literature are rearrangements, not removals (Peri-LN, this paper's two streams), "
          "and they escape the decay.",
          (("chapters/06_initialisation", "tbl-init-exponents"),),
          tuple(E.INIT_EXP[a] for a in ("pre_ln",) + FIXES), rule_fixes,
          optional=tuple(E.INIT_EXP[a] for a in OTHER_FIXES),
          card="the fixes in the literature are rearrangements rather than removals — sandwich and "
               "peri-layernorm placements, and this paper’s own two streams",
          primary="each placement's exponent at initialisation against Pre-LN's (t intervals over seeds)",
          margin="non-overlap of the intervals",
          family="Chapter 6's family of 23 claims",
          deciding=(E.INIT_EXP['peri_ln'], E.INIT_EXP['resi_dual'])),
    Claim("claim-gradients-undamped", "Pre-LN gradients are undamped",
          "Because the residual path is never renormalised, gradients reach Pre-LN's early blocks undamped; "
          "the gradient problem of Post-LN does not arise.",
          (("chapters/06_initialisation", "fig-init-grads"),),
          (E.GRAD_RATIO["pre_ln"], E.GRAD_RATIO["post_ln"], E.GRAD_RATIO2["post_ln"]), rule_gradients,
          card="so gradients reach the early blocks undamped",
          primary="the early/last block gradient-norm ratio at initialisation: Pre-LN's first block, Post-LN's "
                  "second (its first reads the raw embedding)",
          margin="1, the ratio of no damping",
          family=_TWO,
          deciding=(E.GRAD_RATIO['pre_ln'], E.GRAD_RATIO2['post_ln'])),
    Claim("claim-pretrained", "Real pretrained models",
          "A real pretrained Pre-LN model's per-layer change decays at the theorem's rate.",
          (("chapters/09_pretrained", "tbl-pretrained-exponents"),),
          (*_SMOLLM2_READING, E.PRETRAINED_EXP["gemma3"], E.PRETRAINED_EXP["minilm"]),
          rule_pretrained,
          card="A Pre-LN residual stream's per-layer change decays as one over root k, so deep blocks cannot "
               "refine the representation",
          primary="SmolLM2's exponent of omega_k^2 over k = 2..30, widened by the quantisation bound and the "
                  "fit-start shift, against the theorem's over the same range and convention",
          margin="EXP_MARGIN = 0.1",
          family="Chapter 9's two Pre-LN families (Bonferroni, 97.5 % each)",
          deciding=(E.PRETRAINED_EXP['smollm2'],)),
    Claim("claim-two-families", "The Pre-LN law in two trained families",
          "Trained Pre-LN language models of two families (SmolLM2, Qwen2.5) show the theorem's "
          "per-layer decay.",
          (("chapters/09_pretrained", "tbl-pretrained-exponents"),),
          _FAMILY_READING, rule_two_families,
          card="A Pre-LN residual stream's per-layer change decays as one over root k, so deep blocks cannot "
               "refine the representation",
          primary="each family's widened exponent against its matched reference, and its curvature drift",
          margin="EXP_MARGIN = 0.1",
          family=_TWO,
          deciding=(E.PRETRAINED_EXP['smollm2'], E.PRETRAINED_EXP['qwen'])),
    Claim("claim-pretrained-idle", "Later blocks of real Pre-LN models idle",
          "In real Pre-LN models the later blocks are idle: skipping one costs less the deeper it is.",
          (("chapters/09_pretrained", "fig-skip-cost"),),
          tuple(x for m in PRE_LN_FAMILIES for x in (E.HALF_RATIO[m], E.HALF_RATIO_REF[m], E.HALF_RATIO_NO_LAST[m],
                                                     E.HALF_RATIO_REF_NO_LAST[m])),
          rule_pretrained_idle,
          card="What makes deep Pre-LN blocks idle is that the residual path is never renormalised, so the "
               "stream outgrows any single block’s contribution.",
          primary="per family the mean skip cost of blocks L/2+1..L (the last included) over that of blocks "
                  "4..L/2, and of blocks L/2+1..L-1 (the last apart), declared together; percentile bootstrap "
                  "over sequences; a verdict that depends on the last block is open and says so",
          margin="1 and the theorem's own ratio over the same blocks",
          family=_TWO,
          deciding=(E.HALF_RATIO['smollm2'], E.HALF_RATIO['qwen'])),
    Claim("claim-redundancy-metric", "The change predicts which blocks can go",
          "The per-layer change, the theorem's quantity, tells which blocks of a real Pre-LN model "
          "can be skipped at least as well as the published redundancy metrics.",
          (("chapters/09_pretrained", "tbl-metric-rho"),),
          tuple(x for m in PRE_LN_FAMILIES
                for x in (E.METRIC_RHO_CHANGE[m], *(E.METRIC_DIFF[c, m] for c in COMPETITORS))),
          rule_metric,
          card="So the inputs the later blocks see become increasingly alike",
          primary="rho(change, skip cost) minus rho(competitor, skip cost), paired bootstrap over sequences, "
                  "for angular distance, relative contribution and deepest-first (block influence is the change "
                  "itself up to the mean and eps terms, and is not counted)",
          margin="RHO_MARGIN = 0.1, a tenth of the distance between a perfect ranking and none",
          family="one family of six (2 models x 3 competitors)",
          deciding=(E.METRIC_RHO_CHANGE['smollm2'], E.METRIC_RHO_CHANGE['qwen'])),
    Claim("claim-front", "Past the front: does the decay resume?",
          "Whether training reduces, preserves or amplifies the decay is open. Past a front of its first "
          "blocks, trained Pre-LN's per-layer change resumes the theorem's decay, offset by the front "
          r"($\omega_k^2 \approx 1/(k + k_0)$), rather than levelling off.",
          (("chapters/07b_front", "fig-front-predictions"),),
          (E.FRONT_POSITION, E.FRONT_N_RUNS, E.FRONT_PRED_WIDTH),
          rule_front,
          card="Whether training reduces, preserves or amplifies the decay is open",
          primary="each deep run's local slope over k in [L/2, L] placed between its depth's two predicted slopes "
                  "(results/predictions/front.json), u = -1 front, +1 level; mean over the deep runs",
          margin="0, the midpoint between the two predictions; the front model's own interval for its rate",
          family=_TWO,
          deciding=(E.FRONT_POSITION,)),
    Claim("claim-mechanism", "The mechanism, by intervention: less for later blocks to act on",
          "So the inputs the later blocks see become increasingly alike, and the capacity of those blocks is "
          "not that it is unusable but that there is progressively less for it to act on.",
          (("chapters/09b_intervention", "fig-intervention"),),
          (*E.INTERVENTION_MEASURED.values(), *E.INTERVENTION_T.values()),
          rule_mechanism,
          card="So the inputs the later blocks see become increasingly alike, and the capacity of those blocks is "
               "not that it is unusable but that there is progressively less for it to act on.",
          primary="T(alpha): the share of the arithmetic's change of log omega_k^2 over blocks 4..L-1 that the "
                  "real forward realises when the first 3 blocks' summed output is scaled by alpha = 1/4 and 2 "
                  "(results/predictions/intervention.json holds the arithmetic, committed first)",
          margin="TRACKING_MARGIN = 0.5, the midpoint between the mechanism (T = 1) and its negation (T = 0)",
          family="one family of ten (5 models x 2 scales; Bonferroni, 0.05 / 10 each)",
          deciding=tuple(E.INTERVENTION_T.values())),
    Claim("claim-promote", "promote_when: the cheap measurement",
          "Promote the theory when the cheap, unpublished measurement -- the per-layer change of trained "
          "Pre-LN networks -- follows the predicted rate.",
          (("chapters/07_training", "fig-exponent-training"), ("chapters/09_pretrained", "tbl-pretrained-exponents")),
          (E.TRAINED_EXP_PRE_LN, E.TRAINED_REF_PRE_LN, E.TRAINED_FITSTART_SHIFT_PRE_LN, E.EXP_T_DF, *_SMOLLM2_READING),
          rule_promote,
          card="The measurement that would settle it is cheap and nobody has published it, which is what the "
               "promote_when asks for.",
          primary="the trained Pre-LN exponent (TOST, widened by its fit-start shift) and SmolLM2's widened interval",
          margin="EXP_MARGIN = 0.1",
          family=_TWO,
          deciding=(E.TRAINED_EXP_PRE_LN, E.PRETRAINED_EXP['smollm2'])),
]


#: the pretrained claims' confirmatory reading: {claim id: the evidence its rule reads there}, the
#: same statistics of the models of :data:`~resdecay_lib.book.evidence.CONFIRMATORY_MODELS` alone
#: (Qwen2.5-Coder-1.5B's pydoc record, measured after this reading was registered), in place of
#: the claim's needs. The rules read the models a reading holds (``rules._families``); a claim not
#: here is read on the confirmatory seed set (``ledger.on_seed_set``). claim-promote has none: it
#: reads the toy runs beside SmolLM2, and its confirmatory seed set's toy runs predate this reading
CONFIRMATORY_NEEDS: dict[str, tuple] = {
    "claim-compensation": tuple(E.FLATTENING[m] for m in E.CONFIRMATORY_MODELS),
    "claim-pretrained": tuple(x for m in E.CONFIRMATORY_MODELS[:1]
                              for x in (E.PRETRAINED_EXP[m], E.PRETRAINED_REF[m], E.FITRANGE_SHIFT[m],
                                        E.PRETRAINED_DRIFT[m])),
    "claim-two-families": tuple(x for m in E.CONFIRMATORY_MODELS
                                for x in (E.PRETRAINED_EXP[m], E.PRETRAINED_REF[m], E.FITRANGE_SHIFT[m],
                                          E.PRETRAINED_DRIFT[m])),
    "claim-pretrained-idle": tuple(x for m in E.CONFIRMATORY_MODELS
                                   for x in (E.HALF_RATIO[m], E.HALF_RATIO_REF[m], E.HALF_RATIO_NO_LAST[m],
                                             E.HALF_RATIO_REF_NO_LAST[m])),
    "claim-redundancy-metric": tuple(x for m in E.CONFIRMATORY_MODELS
                                     for x in (E.METRIC_RHO_CHANGE[m], *(E.METRIC_DIFF[c, m] for c in COMPETITORS))),
}


def confirmatory_reading(claim: Claim) -> Claim:
    """``claim`` as its confirmatory reading decides it: with :data:`CONFIRMATORY_NEEDS` as its
    needs (no optional evidence; the deciding numbers are those of the needs that are intervals
    of the primary statistic) where it has one, else ``claim`` itself (read on the confirmatory
    seed set). The rule is the same function in both readings, so its registered fingerprint covers
    what decides either; which names the confirmatory reading reads is recorded in the registry
    beside it (``confirmatory_needs``) and checked by ``preregistration.reading_mismatches``."""
    if not isinstance(claim, Claim):
        from ..checks import ArgumentTypeError
        raise ArgumentTypeError(f"claim must be a Claim (book.claims.CLAIMS'), got {type(claim).__name__}")
    needs = CONFIRMATORY_NEEDS.get(claim.id)
    if needs is None:
        return claim
    primary = {e[m] for m in E.CONFIRMATORY_MODELS
               for e in (E.FLATTENING, E.PRETRAINED_EXP, E.HALF_RATIO, E.METRIC_RHO_CHANGE)}
    return dataclasses.replace(claim, needs=needs, optional=(), deciding=tuple(e for e in needs if e in primary))
