"""Chapter 9 (``chapters/09_pretrained.ipynb``): four pretrained models, read from their stored
records, one of them re-measured live, as one :class:`PretrainedResult`.

:func:`chapter` is :func:`stored` with :func:`live_check`:

1. **stored** (:func:`stored`; ``pretrained_analysis.load_records``, ``results/pretrained/``): the
   records of SmolLM2-135M, Qwen2.5-Coder-0.5B, Gemma-3-270M and all-MiniLM-L6 on the two texts,
   made by ``python -m resdecay_lib record MODEL`` (about an hour): the per-block change of
   :data:`N_SEQ` x :data:`N_TOKENS` samples (``probe.layer_change``), the Gram matrix of the
   summands, the change through the model's own RMSNorm with and without its gain
   (``probe.rms_change``), the skip costs, the pruning curves and the redundancy rankings, and
   the record's ``stream`` section (``record MODEL --only stream``, minutes): the sublayer
   steps (``probe.measure_sublayers``), the change of Post-LN MiniLM's stream itself, and a 4-bit
   round-trip (``quantise.quantize_q4_1_``: MiniLM float32 -> Q4_1, SmolLM2 Q4_1 -> a second
   Q4_1 on blocks shifted by 16 columns). No model is loaded: seconds;
2. **live** (:func:`live_check`): loads :data:`LIVE_MODEL` (SmolLM2-135M, the smallest Pre-LN
   model) from the local cache, re-measures on Shakespeare every stored field of its record the
   chapter reads but the costs (block metrics, RMSNorm readings, sublayer steps, the round-trip)
   and compares them with the stored ones (within :data:`RTOL`), and re-measures its skip cost
   of blocks 2 and 15 and its first three deepest-first removals (``pruning.removal_costs``).
   About a minute on one thread;
3. the analysis of the records (``pretrained_analysis.exponent_report``, ``norm_growth``,
   ``output_variance_exponent``; ``pruning.skip_trend``, ``skip_half_ratio``,
   ``predicts_cost``, ``leaves_noise_band``; ``training_analysis.theorem_half_ratio``).

The chapter's exponent intervals are at :data:`LEVEL` = 1 - 0.05/2 (Bonferroni over the two
Pre-LN families), the sublayer fits' at :data:`LEVEL_SUB` = 1 - 0.05/8 (4 models x attention,
MLP), the ranking comparisons' at 1 - 0.05/:data:`N_COMPARISONS` = 1 - 0.05/6.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from .. import pretrained_analysis, pruning, training_analysis
from ...book import evidence as E, ledger
from ...book.glues import EvidenceGlue, Table, Words
from ...nn.hooks import steps_by_kind
from ...stats import fit

__all__ = ["MODELS", "SHORT", "PRE_LN", "TEXTS", "SH", "N_SEQ", "N_TOKENS", "LEVEL", "LEVEL_SUB",
           "N_COMPARISONS", "K_TICKS", "convention_name", "se_distance_words",
           "band_exit_words", "geometric_limit", "interval_words", "section_words", "LIVE_MODEL", "RTOL", "ATOL", "Curves",
           "LiveCheck", "live_check", "stored", "chapter", "PretrainedResult", "CONFIRMATORY", "CONFIRMATORY_DIR",
           "LARGE_RECORDS", "SIZES", "SIZE_LEVEL", "Size", "size_reading", "SecondSize", "second_size",
           "confirmatory"]

#: the four packaged models (keys of ``nn.pretrained.PACKAGED``) and the names the chapter prints
MODELS = {"smollm2-135m": "SmolLM2-135M", "qwen2.5-coder-0.5b": "Qwen2.5-Coder-0.5B",
          "gemma3-270m": "Gemma-3-270M", "all-minilm-l6": "all-MiniLM-L6"}
#: each model's short name in the glue names (``pt_exp_smollm2``, ``ev_pretrained_exp_qwen``)
SHORT = {"smollm2-135m": "smollm2", "qwen2.5-coder-0.5b": "qwen", "gemma3-270m": "gemma3",
         "all-minilm-l6": "minilm"}
#: the two Pre-LN families, the models the theorem is about (the ledger reads these)
PRE_LN = ("smollm2-135m", "qwen2.5-coder-0.5b")
#: the two texts (``pretrained_analysis.TEXTS``) and the one the figures and the ledger read
TEXTS = tuple(pretrained_analysis.TEXTS)
SH = "shakespeare"
N_SEQ, N_TOKENS = 16, 128   # sequences per text, text tokens per sequence
LEVEL = 1 - 0.05 / 2        # every interval of a Pre-LN verdict: Bonferroni over the two families
LEVEL_SUB = 1 - 0.05 / 8    # the sublayer claims read 8 intervals (4 models x attention, MLP)
N_COMPARISONS = 2 * 3       # two Pre-LN models x three competitors (influence is the change itself):
#                             the ranking differences and the claims on them are at 1 - 0.05/6
K_TICKS = (1, 2, 3, 5, 10, 20, 30)   # block indices labelled on the log k axes
#: the re-measured removals besides the first three deepest-first sets: skipping blocks 2 and 15
RECHECK_BLOCKS = (2, 15)
#: the model too large for one machine of the last section: 80 blocks of width 8192
L_BIG, D_BIG = 80, 8192
#: the readings of the stream through each model's norm: (curve, tag of its glue names)
READINGS = (("RMSNorm", "rms"), ("RMSNorm with gain", "gain"), ("the stream itself", "raw"))


# ----------------------------------------------------------------------------- small pieces

def convention_name(embedding_counted: bool) -> str:
    """The index convention rho picks, as the table names it: "embedding-counted"
    (var(x_k) = k sigma^2, rho >= 1/2) or "seed" (var(x_k) = (k-1) sigma^2)."""
    return "embedding-counted" if embedding_counted else "seed"


def se_distance_words(z: float) -> Words:
    """How far a live re-measurement lies from the stored value, in the stored value's standard
    errors: "within 0.01" below 0.01 (the difference is the CPU's float noise, whose digits
    another machine's kernels change), else "within z" to two decimals."""
    return Words("within 0.01" if abs(z) < 0.01 else f"within {abs(z):.2f}")


def band_exit_words(n, L: int) -> Words:
    """Where a pruning curve leaves its noise band: after ``n`` removed blocks of ``L`` (and the
    share of the blocks), or "beyond L//2 (>50%)" when it stays inside up to half of them
    (``n`` None, as ``pruning.leaves_noise_band`` says)."""
    if n is None:
        return Words(f"beyond {L // 2} (>{0.5:.0%})")
    return Words(f"{n} ({n / L:.0%})")


def geometric_limit(g: float) -> float:
    """The change of a geometrically growing stream of independent blocks whose norm grows by
    ``g`` per block, 2 (1 - 1/g) (Chapter 5, ``theory.geometric_change``); NaN for g <= 1,
    where no geometric growth is there to read."""
    from ...maths import theory
    return theory.geometric_change(g) if g > 1 else float("nan")


def interval_words(x, spec: str = ".2f") -> Words:
    """An estimate with its interval, "p [lo, hi]" (anything with ``exponent`` or ``rho`` or
    ``mean``, and ``lo``, ``hi``)."""
    v = next(getattr(x, a) for a in ("exponent", "rho", "mean") if hasattr(x, a))
    return Words(f"{v:{spec}} [{x.lo:{spec}}, {x.hi:{spec}}]")


def _display(out: dict, name: str, value, lo, hi, digits: int = 4) -> None:
    """What ``evidence.glue_display`` glues: ``name``, ``name_lo``, ``name_hi``, floats rounded."""
    for suffix, v in (("", value), ("_lo", lo), ("_hi", hi)):
        v = float(v)
        out[name + suffix] = round(v, digits) if math.isfinite(v) else v


def _iv(x, digits: int = 4) -> EvidenceGlue:
    v = x.exponent if hasattr(x, "exponent") else x.rho if hasattr(x, "rho") else x.mean
    return EvidenceGlue(v, lo=x.lo, hi=x.hi, digits=digits)


# ----------------------------------------------------------------------------- the stored curves

@dataclass(frozen=True)
class Curves:
    """Per-sequence curves read from a stored record, ``per_sequence[m]`` [B, n] for each metric
    ``m``, with what ``probe.layer_change`` derives from them: ``k`` = 1..n, ``m`` the mean over
    sequences, ``m_se`` its standard error, std(ddof=1) / sqrt(B) (the same float64 operations,
    so a curve read back equals the measured one)."""
    per_sequence: dict

    @property
    def k(self) -> np.ndarray:
        return np.arange(1, np.shape(next(iter(self.per_sequence.values())))[1] + 1, dtype=np.int64)

    def __getattr__(self, name):
        ps = self.__dict__.get("per_sequence", {})
        base = name[:-3] if name.endswith("_se") else name
        if base not in ps:
            raise AttributeError(f"these curves hold {sorted(ps)}, not {name!r}")
        y = np.asarray(ps[base], float)
        return y.std(0, ddof=1) / np.sqrt(y.shape[0]) if name.endswith("_se") else y.mean(0)


def _runs(records) -> dict:
    """{(model, text): the curves the chapter reads from each record}: "block" (the record's
    ``change``), "gram", "rms" and "rms_gain" (decoders), and, where the record has its
    ``stream`` section, "sub" (its sublayer steps), "raw" (Post-LN) and "quant"."""
    runs = {}
    for key, rec in records.items():
        r = {"block": Curves(rec.change), "gram": rec.gram}
        if rec.rms_change is not None:
            r["rms"], r["rms_gain"] = Curves({"change": rec.rms_change}), Curves({"change": rec.rms_change_gain})
        st = rec.stream
        if st is not None:
            r["sub"] = Curves({"omega_sq": st.sublayer_omega_sq})
            if st.raw_change is not None:
                r["raw"] = Curves({"change": st.raw_change})
            if st.quantised is not None:
                r["quant"] = st.quantised
        runs[key] = r
    return runs


def section_words(rec) -> Words:
    """A record's ``stream`` section as the records table shows it: "code version, minutes, threads"
    from its own provenance, or "none" (the chapter reads it on Shakespeare only)."""
    if rec.stream is None:
        return Words("none")
    p = rec.stream.provenance or {}
    return Words(f"{p.get('code_version', '?')}, {p.get('wall_s', float('nan')) / 60:.1f}, {p.get('threads', '?')}")


# ----------------------------------------------------------------------------- the live check

#: the model re-measured live, on :data:`SH`: the smallest Pre-LN model, the one whose removals
#: are re-checked and whose weights are re-quantised
LIVE_MODEL = "smollm2-135m"
#: a re-measured value agrees with the stored one when |live - stored| <= RTOL |stored| + ATOL.
#: The records were measured on 1 thread, as the check runs; on another CPU, or under nbval with
#: torch's portable kernels, a forward's float32 sums run in another order, and the values then
#: differ by about 1e-6 relative (2^-24 ~ 6e-8 per rounding, over some tens of chained
#: reductions of width d); RTOL is 100 times that, and 1000 times below the spread over
#: sequences that the book's intervals read (the per-block change's se is about 10 % of its
#: mean), so any change of the code that could move an interval fails it, and float noise never
#: does. ATOL covers the alignment c_k near 0 (its noise is relative to the O(1) terms it is a
#: ratio of). Seen: on this machine's kernels every value equals the record bit for bit (on 1
#: thread and on 2); with ATEN_CPU_CAPABILITY=default at most 1.1e-6 relative, c_k 1.7e-7
#: absolute at c_k = 4e-4: a tenth of the tolerance at most.
RTOL, ATOL = 1e-4, 1e-6


@dataclass(frozen=True)
class LiveCheck:
    """:func:`live_check`'s re-measurement of :data:`LIVE_MODEL` on :data:`SH`.

    ``agrees[field]``: (number of values compared, whether every one is within RTOL |stored| +
    ATOL of the stored one): the block metrics (``change.*``), the change through its RMSNorm
    (``rms_change``, ``rms_change_gain``), the sublayer steps (``stream.sublayer_omega_sq``) and
    the Q4_1 round-trip (``stream.quantised.*``); ``recheck``: (sets, the live RemovalCost) of the
    re-measured removals; ``recheck_worst``: largest |live - stored| / se over them;
    ``tables``, ``values``: what the chapter glues from it."""
    agrees: dict
    recheck: tuple
    recheck_worst: float
    tables: dict = field(repr=False)
    values: dict = field(repr=False)


def live_check(root, records: dict | None = None) -> LiveCheck:
    """Re-measure :data:`LIVE_MODEL` on :data:`SH` now, on one thread (the records', and one per
    process as ``make test`` runs them), and compare with its stored
    record (``records``, default those under ``root/results/pretrained``): one pass at sublayer
    granularity (``pretrained_analysis.measure_stream``: the block metrics, the RMSNorm readings,
    the sublayer steps and the Q4_1 round-trip the chapter reads from the records), then the
    skip cost of blocks 2 and 15 and the first three deepest-first removals
    (``pruning.removal_costs``). About a minute."""
    from ...book.notebooks import book_root
    from ...nn import pretrained as nn_pretrained
    from ...nn.device import pin_threads
    if records is None:
        records = pretrained_analysis.load_records(book_root(root) / "results" / "pretrained")
    rec = records.get((LIVE_MODEL, SH))
    if rec is None or rec.stream is None or rec.stream.quantised is None:
        raise ValueError(f"records lack {LIVE_MODEL}'s {SH} record with its stream section, which the chapter "
                         f"re-measures: run python -m resdecay_lib record {LIVE_MODEL} (--only stream)")
    pin_threads(1)
    pre = nn_pretrained.load(LIVE_MODEL)
    text = pretrained_analysis.book_text(SH)
    live = pretrained_analysis.measure_stream(pre, text, rec.n_seq, rec.n_tokens,
                                              round_trip=pretrained_analysis.ROUND_TRIPS[LIVE_MODEL])
    st, q = rec.stream, rec.stream.quantised
    pairs = {**{f"change.{m}": (live["change"][m], rec.change[m]) for m in rec.change},
             "rms_change": (live["rms_change"], rec.rms_change),
             "rms_change_gain": (live["rms_change_gain"], rec.rms_change_gain),
             "stream.sublayer_omega_sq": (live["sublayer_omega_sq"], st.sublayer_omega_sq),
             "stream.quantised.relative_weight_change": (live["quantised"]["relative_weight_change"],
                                                         q.relative_weight_change),
             "stream.quantised.omega_sq": (live["quantised"]["omega_sq"], q.omega_sq)}
    agrees = {name: (int(np.size(s)), bool(np.allclose(np.asarray(l, float), s, rtol=RTOL, atol=ATOL)))
              for name, (l, s) in pairs.items()}
    inputs, mask = nn_pretrained.sample_inputs(pre.tokenizer, text, rec.n_seq, rec.n_tokens)
    sets = [(k,) for k in RECHECK_BLOCKS] + [tuple(s) for s in rec.prune["deepest"].sets[:3]]
    cost = pruning.removal_costs(pre, inputs, mask, sets)
    worst, recheck_table = _recheck((sets, cost), rec)
    tables = {"pt_recheck_table": recheck_table,
              "pt_live_table": Table.of(["stored field", "values compared", "live equals stored"],
                                        [[f"`{n}`", size, "yes" if ok else "no"] for n, (size, ok) in agrees.items()])}
    values = {"pt_recheck_worst": float(round(worst, 2)),   # a float on every CPU (worst starts as 0.0)
              "pt_live_model": MODELS[LIVE_MODEL], "pt_live_fields": len(agrees),
              "pt_live_values": sum(size for size, _ in agrees.values()), "pt_live_rtol": RTOL}
    return LiveCheck(agrees, (sets, cost), worst, tables, values)


# ----------------------------------------------------------------------------- the result

@dataclass(frozen=True)
class PretrainedResult:
    """Everything Chapter 9 shows (keys ``(model, text)`` or ``model``, as in :data:`MODELS`).

    ``reports``: ``pretrained_analysis.ExponentReport`` of the change per model and text;
    ``readings[model]``: {"LN0", "RMSNorm", "RMSNorm with gain" | "the stream itself":
    PowerLawFit} (Shakespeare); ``growth[model]``: norm growth per block (t interval at 0.95);
    ``sub_fits[model]``: {"attention", "mlp": PowerLawFit at :data:`LEVEL_SUB`};
    ``records``: the stored records; ``missing``: (model, text) without one; ``trends``, ``half``, ``half_ref``: skip-cost rank trend (k >= 2), later over
    earlier half and the theorem's ratio; ``metric_corr`` (95 %), ``metric_corr_fw`` and
    ``metric_diff`` (at 1 - 0.05/:data:`N_COMPARISONS`); ``leaves[model, ranking]``: blocks
    removed when the loss leaves its noise band (None: beyond L/2); ``quant_shift``: largest
    |exponent change| of a Q4_1 round-trip; ``gap``: SmolLM2's exponent minus the theorem's;
    ``var_exp[model]``: (slope, lo, hi) of log |f_k|^2 on log k; ``influence_residual``:
    SymPy's residual of influence = omega^2/2; ``panels``: each figure's data; ``tables``:
    each glued Table; ``values``: every other glued value; ``live``: the :class:`LiveCheck` of
    :data:`LIVE_MODEL` (None for :func:`stored`'s result, which reads the records alone)."""
    reports: dict
    readings: dict
    growth: dict
    sub_fits: dict
    records: dict
    missing: list
    trends: dict
    half: dict
    half_ref: dict
    metric_corr: dict
    metric_corr_fw: dict
    metric_diff: dict
    leaves: dict
    quant_shift: float
    gap: float
    var_exp: dict
    influence_residual: object
    panels: dict = field(repr=False)
    tables: dict = field(repr=False)
    values: dict = field(repr=False)
    live: LiveCheck | None = None

    def glues(self) -> dict:
        """Every name the chapter glues (its figures apart), with its value; the live check's
        only when it ran (:func:`chapter`, not :func:`stored`)."""
        live = {**self.live.values, **self.live.tables} if self.live is not None else {}
        return {**self.values, **self.tables, **live}


def _exponent_glues(out, reports):
    for name, s in SHORT.items():
        rep = reports[name, SH]
        out[f"pt_L_{s}"] = rep.main.k_max
        out[f"pt_rho_{s}"] = float(f"{rep.rho:.4g}")
        out[f"pt_conv_{s}"] = convention_name(rep.embedding_counted)
        _display(out, f"pt_exp_{s}", rep.main.exponent, rep.main.lo, rep.main.hi)
        out[f"pt_ref_{s}"] = round(rep.main.reference, 4)
        out[f"pt_shift_{s}"] = round(rep.range_shift, 4)
        d = rep.curvature["drift"]
        _display(out, f"pt_drift_{s}", d.mean, d.lo, d.hi)
        out[f"pt_shape_{s}"] = rep.curvature["shape"]
        out[f"pt_exp_{s}_py"] = round(reports[name, "pydoc"].main.exponent, 4)
    out["pt_level"] = round(LEVEL, 4)
    out["pt_drift_margin"] = training_analysis.DRIFT_MARGIN
    out["pt_exp_margin"] = ledger.EXP_MARGIN


def _curve_panels(runs_all, reports):
    from ...maths import theory
    from ...nn import pretrained as nn_pretrained
    panels = {}
    for name in MODELS:
        runs = {short: runs_all[name, short]["block"] for short in TEXTS}
        lines = [{"k": runs[short].k, "y": runs[short].omega_sq, "yerr": 2 * runs[short].omega_sq_se,
                  "fmt": marker + "-", "label": pretrained_analysis.TEXTS[short]}
                 for short, marker in zip(TEXTS, "os")]
        k = runs[SH].k
        f = reports[name, SH].main
        kk = np.arange(f.k_min, f.k_max + 1)
        lines += [{"k": k, "y": [float(theory.omega_sq(int(j), True)) for j in k], "fmt": "k-",
                   "label": "theorem, embedding-counted"},
                  {"k": k[1:], "y": [float(theory.omega_sq(int(j), False)) for j in k[1:]], "fmt": "k--",
                   "label": "theorem, seed convention"},
                  {"k": kk, "y": f.fit.prefactor * kk ** f.exponent, "fmt": ":", "color": "C3",
                   "label": f"fit $k^{{{f.exponent:.2f}}}$ (Shakespeare)"}]
        panels[f"{MODELS[name]} ({nn_pretrained.PACKAGED[name].placement})"] = lines
    return panels


def _readings(runs):
    readings, panels = {}, {}
    for name in MODELS:
        r = runs[name, SH]
        k = r["block"].k
        curves = {"LN0": r["block"].per_sequence["omega_sq"]}
        lines = {"centred LN (theorem)": (k, r["block"].omega_sq)}
        if "rms" in r:
            curves.update({"RMSNorm": r["rms"].per_sequence["change"],
                           "RMSNorm with gain": r["rms_gain"].per_sequence["change"]})
            lines["RMSNorm, no gain"] = (k, r["rms"].change)
            lines["RMSNorm with the reader's gain"] = (k, r["rms_gain"].change)
        else:
            curves["the stream itself"] = r["raw"].per_sequence["change"]
            lines["what the block reads: the stream"] = (k, r["raw"].change)
        readings[name] = {key: fit.power_law(k, y, k_min=2, n_boot=2000, level=LEVEL, seed=0)
                          for key, y in curves.items()}
        panels[MODELS[name]] = lines
    return readings, panels


def _growth(runs):
    from ...maths import theory
    growth, panels = {}, {}
    for name in MODELS:
        ch = runs[name, SH]["block"]
        growth[name] = pretrained_analysis.norm_growth(ch.per_sequence["norm"], k_min=2, level=0.95)
        gk = ch.norm[1:] / ch.norm[:-1]                # g_k, k = 1..L-1
        panels[MODELS[name]] = [
            {"k": ch.k, "y": ch.omega_sq, "fmt": "o-", "label": "measured change"},
            {"k": ch.k[:-1], "y": [theory.geometric_change(x) if x > 1 else np.nan for x in gk], "fmt": "s--",
             "label": r"geometric reading $2(1-1/g_k)$"},
            {"k": ch.k, "y": theory.change_sq_rc(ch.rel_update, np.clip(ch.alignment, -1, 1)), "fmt": "^:",
             "label": r"from $r_k, c_k$"}]
    return growth, panels


def _sublayer_fits(runs):
    fits, panels = {}, {}
    for name in MODELS:
        sub = runs[name, SH]["sub"]
        k = np.arange(1, len(sub.k) // 2 + 1)
        mean, per_seq = steps_by_kind(sub.omega_sq), steps_by_kind(sub.per_sequence["omega_sq"])
        panels[MODELS[name]] = (k, mean["attention"], mean["mlp"])
        fits[name] = {part: fit.power_law(k, per_seq[part], k_min=2, n_boot=2000, level=LEVEL_SUB)
                      for part in ("attention", "mlp")}
    return fits, panels


def _recheck(recheck, stored):
    sets, cost = recheck
    deepest = stored.prune["deepest"]
    ref = {(k,): (stored.skip.mean[k - 1], stored.skip.se[k - 1]) for k in RECHECK_BLOCKS}
    ref.update({s: (deepest.mean[i], deepest.se[i]) for i, s in enumerate(sets[len(RECHECK_BLOCKS):])})
    worst, rows = 0.0, []
    for s, mean in zip(sets, cost.mean):
        sm, se = ref[s]
        z = abs(mean - sm) / se
        worst = max(worst, z)
        # the stored value shown; the live one only through its distance in standard errors (its
        # last digits are the CPU's float noise, which another machine's kernels change)
        rows.append([", ".join(map(str, s)), f"{sm:.4f}", f"{se:.4f}", se_distance_words(z)])
    return worst, Table.of(["blocks removed", "stored increase", "its se", "live re-run, in se"], rows)


def stored(root) -> PretrainedResult:
    """Chapter 9's result from the stored records under ``root/results/pretrained`` alone (no
    model is loaded: seconds), ``live`` None; :func:`chapter` adds the live check."""
    from ...book.notebooks import book_root
    from ...maths import theory
    from ...nn import pretrained as nn_pretrained
    root = book_root(root)
    records = pretrained_analysis.load_records(root / "results" / "pretrained")
    missing = [(m, t) for m in MODELS for t in TEXTS if (m, t) not in records]
    if missing:
        raise ValueError(f"{root / 'results' / 'pretrained'} lacks the records {missing}, which the chapter "
                         f"reads: run python -m resdecay_lib record MODEL")
    lacking = [m for m in MODELS if {"sublayer_omega_sq", *(() if records[m, SH].rms_change is not None else ("raw_change",)),
                                     *(("quantised",) if m in pretrained_analysis.ROUND_TRIPS else ())}
               - (records[m, SH].stream.present if records[m, SH].stream is not None else set())]
    if lacking:
        raise ValueError(f"the Shakespeare records of {lacking} lack their stream section, which the chapter reads: "
                         f"run python -m resdecay_lib record MODEL --only stream --text {SH}")
    runs = _runs(records)
    values, tables, panels = {}, {}, {}

    # the models and the texts
    tables["pt_models_table"] = Table.of(
        ["model", "blocks $L$", "width $d$", "placement", "weights"],
        [[MODELS[m], rec.n_layer, rec.d_model, rec.placement, rec.note]
         for m, rec in ((m, records[m, SH]) for m in MODELS)])

    # the exponents
    reports = {(m, t): pretrained_analysis.exponent_report(runs[m, t]["block"].per_sequence["omega_sq"],
                                                           runs[m, t]["gram"], level=LEVEL)
               for m in MODELS for t in TEXTS}
    values["pt_dropped"] = sum(f.fit.n_dropped for rep in reports.values() for f in rep.fits.values())
    tables["pt_fits_table"] = Table.of(
        ["model", "text", r"$\rho$ (convention)", "$k$", "$p$ [interval]", "theorem, same range",
         r"$p$, $k_{\min} = 3$", r"$p$, $k_{\min} = 4$", "drift [interval]", "shape"],
        [[MODELS[m], pretrained_analysis.TEXTS[t], f"{rep.rho:.2g} ({convention_name(rep.embedding_counted)})",
          f"{rep.main.k_min}..{rep.main.k_max}", interval_words(rep.main), f"{rep.main.reference:.3f}",
          f"{rep.fits[3].exponent:.2f}", f"{rep.fits[4].exponent:.2f}", interval_words(rep.curvature["drift"]),
          rep.curvature["shape"]] for (m, t), rep in reports.items()])
    _exponent_glues(values, reports)
    panels["curves"] = _curve_panels(runs, reports)

    # through each model's own norm
    readings, panels["norms"] = _readings(runs)
    for name, s in SHORT.items():
        for key, tag in READINGS:
            if key in readings[name]:
                f = readings[name][key]
                _display(values, f"pt_{tag}_exp_{s}", f.exponent, f.lo, f.hi)
    values["pt_dropped_readings"] = sum(f.n_dropped for rd in readings.values() for f in rd.values())
    tables["pt_readings_table"] = Table.of(
        ["model", "centred LN (theorem)", "RMSNorm, no gain", "RMSNorm with gain", "the stream itself"],
        [[MODELS[m], *(interval_words(rd[key]) if key in rd else "" for key in ("LN0", *(k for k, _ in READINGS)))]
         for m, rd in readings.items()])

    # norm growth
    growth, panels["growth"] = _growth(runs)
    values["pt_ht_growth"] = pretrained_analysis.GPT2_XL_GROWTH
    rows = []
    for name, s in SHORT.items():
        g, ch = growth[name], runs[name, SH]["block"]
        _display(values, f"pt_growth_{s}", g.mean, g.lo, g.hi)
        values[f"pt_cmean_{s}"] = round(float(np.mean(ch.alignment[1:])), 4)
        values[f"pt_geolimit_{s}"] = round(theory.geometric_change(g.mean), 4) if g.mean > 1 else float("nan")
        values[f"pt_median_{s}"] = round(float(np.median(ch.omega_sq[1:])), 4)
        rows.append([MODELS[name], f"{ch.norm[0]:.3g}", f"{ch.norm[-1]:.3g}", interval_words(g, ".4f"),
                     f"{geometric_limit(g.mean):.2g}", f"{np.median(ch.omega_sq[1:]):.2g}",
                     f"{np.mean(ch.alignment[1:]):.2f}"])
    tables["pt_growth_table"] = Table.of(
        ["model", r"$\lVert x_1\rVert$", r"$\lVert x_L\rVert$", "growth per block [95 % interval]",
         "geometric change $2(1 - 1/g)$", "median change, $k \\ge 2$", "mean $c_k$, $k \\ge 2$"], rows)

    # attention and MLP
    sub_fits, panels["sublayers"] = _sublayer_fits(runs)
    values["pt_level_sub"] = round(LEVEL_SUB, 4)
    values["pt_dropped_sub"] = sum(f.n_dropped for pair in sub_fits.values() for f in pair.values())
    tables["pt_sublayers_table"] = Table.of(
        ["model", "attention $p$ [interval]", "MLP $p$ [interval]", "mean change, attention", "mean change, MLP"],
        [[MODELS[m], interval_words(f["attention"]), interval_words(f["mlp"]),
          f"{panels['sublayers'][MODELS[m]][1].mean():.2g}", f"{panels['sublayers'][MODELS[m]][2].mean():.2g}"]
         for m, f in sub_fits.items()])

    # the stored records, tied to the code
    tables["pt_records_table"] = Table.of(
        ["model", "text", "cost", "code version", "minutes", "threads", "pruning curves",
         "stream section: code version, minutes, threads"],
        [[MODELS[m], pretrained_analysis.TEXTS[t], rec.cost_kind, rec.provenance["code_version"],
          f"{rec.provenance['wall_s'] / 60:.1f}", rec.provenance["threads"], "yes" if rec.prune is not None else "no",
          section_words(rec)]
         for (m, t), rec in sorted(records.items())])

    # skipping one block
    panels["skip"] = {f"{MODELS[m]} ({nn_pretrained.PACKAGED[m].placement})": (
        np.arange(1, records[m, SH].n_layer + 1), records[m, SH].skip.mean, records[m, SH].skip.se,
        "loss increase (nats/token)" if records[m, SH].cost_kind == "next_token" else "1 - cos(pooled output)")
        for m in MODELS}
    trends, rows = {}, []
    for name in MODELS:
        sk, L = records[name, SH].skip, records[name, SH].n_layer
        trends[name] = pruning.skip_trend(sk, k_min=2, level=LEVEL)
        rows.append([MODELS[name], f"{sk.base.mean():.3f}", f"{sk.mean[0]:.3g} ({sk.se[0]:.2g})", f"{sk.mean[-1]:.3g}",
                     f"{np.median(sk.mean[1:]):.3g}", f"{sk.mean[L // 2:].sum() / sk.mean[1:].sum():.2f}",
                     f"{trends[name]:.2f}", f"{pruning.skip_trend(records[name, 'pydoc'].skip, level=LEVEL):.2f}"])
    tables["pt_skip_table"] = Table.of(
        ["model", "intact loss", "block 1 (se)", "block $L$", "median, $k = 2..L$", "later half's share, $k \\ge 2$",
         "rank trend with $k$ [interval]", "the same on pydoc"], rows)
    for name, s in SHORT.items():
        sk = records[name, SH].skip
        values[f"pt_block1_{s}"] = round(float(sk.mean[0]), 4)
        values[f"pt_blockL_{s}"] = round(float(sk.mean[-1]), 4)
        values[f"pt_skipmed_{s}"] = round(float(np.median(sk.mean[1:])), 4)
        _display(values, f"pt_trend_{s}", trends[name].rho, trends[name].lo, trends[name].hi)
    half, half_ref = {}, {}
    for name in PRE_LN:
        rec = records[name, SH]
        half[name] = pruning.skip_half_ratio(rec.skip, level=LEVEL)
        half_ref[name] = training_analysis.theorem_half_ratio(rec.n_layer, reports[name, SH].embedding_counted)
        _display(values, f"pt_half_{SHORT[name]}", half[name].rho, half[name].lo, half[name].hi)

    # which ranking predicts the cost
    _, influence_residual, _ = theory.derive_influence_identity()
    tables["pt_influence_table"] = Table.of(
        ["model", r"stored influence / $(\omega_k^2 / 2)$, smallest", "largest"],
        [[MODELS[m], f"{r.min():.3f}", f"{r.max():.3f}"] for m, r in (
            (m, records[m, SH].change["influence"].mean(0) / (records[m, SH].change["omega_sq"].mean(0) / 2))
            for m in PRE_LN)])
    metric_corr, metric_corr_fw, metric_diff = {}, {}, {}
    for name in MODELS:
        rec = records[name, SH]
        scores = pruning.ranking_scores(rec.change)
        metric_corr[name], _ = pruning.predicts_cost(scores, rec.skip, level=0.95)
        # the same bootstrap at the family-wise level 1 - 0.05/6: what the claims read
        metric_corr_fw[name], metric_diff[name] = pruning.predicts_cost(scores, rec.skip,
                                                                        level=1 - 0.05 / N_COMPARISONS)
    for name, s in SHORT.items():
        for k, v in metric_corr[name].items():
            _display(values, f"pt_rho_{k}_{s}", v.rho, v.lo, v.hi)
    tables["pt_metric_diff_table"] = Table.of(
        ["model", "minus block influence", "minus angular distance", "minus relative contribution",
         "minus deepest first"],
        [[MODELS[m], *(interval_words(metric_diff[m][k]) for k in ("influence", "angular", "relative", "deepest"))]
         for m in PRE_LN])

    # how many blocks can go
    values["pt_noise_z"] = pruning.NOISE_Z
    panels["pruning"], leaves, rows = {}, {}, []
    for name in MODELS:
        rec = records[name, SH]
        L = rec.n_layer
        band = pruning.noise_band(rec.prune["deepest"])    # the intact loss's; for MiniLM, deepest-first's
        curves = {}
        for rk in pruning.RANKINGS:
            c = rec.prune[rk]
            curves[rk] = (np.array([len(s) / L for s in c.sets]), c.mean)
            leaves[name, rk] = pruning.leaves_noise_band(c)
        panels["pruning"][f"{MODELS[name]} ({nn_pretrained.PACKAGED[name].placement})"] = (
            curves, band, "loss increase" if rec.cost_kind == "next_token" else "1 - cos")
        rows.append([MODELS[name], L, f"{band:.3g}",
                     *(band_exit_words(leaves[name, rk], L) for rk in pruning.RANKINGS)])
    tables["pt_leaves_table"] = Table.of(["model", "$L$", "noise band", *pruning.RANKINGS], rows)
    for name, s in SHORT.items():
        for rk in ("change", "deepest"):
            n = leaves[name, rk]
            values[f"pt_leaves_{rk}_{s}"] = n if n is not None else float("nan")
        # blocks the best ranking removes while the loss stays inside its band
        L = records[name, SH].n_layer
        values[f"pt_best_kept_{s}"] = max(L // 2 if n is None else n - 1 for (m, _), n in leaves.items() if m == name)

    # 4-bit quantisation
    quant = {m: (runs[m, SH]["quant"].relative_weight_change,
                 pretrained_analysis.exponent_report(runs[m, SH]["quant"].omega_sq, runs[m, SH]["gram"],
                                                     level=LEVEL).main.exponent)
             for m in ("all-minilm-l6", "smollm2-135m")}
    shift = {m: q - reports[m, SH].main.exponent for m, (_, q) in quant.items()}
    quant_shift = max(abs(v) for v in shift.values())
    values["ev_quant_shift"] = EvidenceGlue(quant_shift, digits=4)
    values["pt_err_mini"] = round(quant["all-minilm-l6"][0], 4)
    values["pt_err_smol"] = round(quant["smollm2-135m"][0], 4)
    tables["pt_quant_table"] = Table.of(
        ["model", "round-trip", "relative weight change", "exponent moves by"],
        [[MODELS["all-minilm-l6"], "float32 to Q4_1", f"{quant['all-minilm-l6'][0]:.3f}",
          f"{shift['all-minilm-l6']:+.3f}"],
         [MODELS["smollm2-135m"], f"Q4_1 to Q4_1, blocks shifted by {runs['smollm2-135m', SH]['quant'].offset}",
          f"{quant['smollm2-135m'][0]:.3f}", f"{shift['smollm2-135m']:+.3f}"]])
    gap = reports["smollm2-135m", SH].main.exponent - reports["smollm2-135m", SH].main.reference
    values["pt_gap_smollm2"] = round(gap, 4)
    values["pt_stream_gb"] = round((L_BIG + 1) * N_SEQ * N_TOKENS * D_BIG * 4 / 1e9, 4)

    # the evidence for the ledger: the exploratory reading, and the confirmatory one (NaN until measured)
    values.update(_evidence(reports, runs, records, trends, metric_corr, metric_diff, half, half_ref,
                            influence_residual))
    values.update(confirmatory(root))
    var_exp = {m: pretrained_analysis.output_variance_exponent(records[m, SH].change["rel_update"],
                                                               records[m, SH].change["norm"], level=1 - 0.05 / 3)
               for m in PRE_LN}
    values["ev_var_exp_smollm2"] = EvidenceGlue(var_exp["smollm2-135m"][0], lo=var_exp["smollm2-135m"][1],
                                                hi=var_exp["smollm2-135m"][2], digits=3)
    values["ev_var_exp_qwen"] = EvidenceGlue(var_exp["qwen2.5-coder-0.5b"][0], lo=var_exp["qwen2.5-coder-0.5b"][1],
                                             hi=var_exp["qwen2.5-coder-0.5b"][2], digits=3)
    # claim-compensation's reading: how much the output scales past the front flatten the decay
    flat = {m: pretrained_analysis.output_flattening(records[m, SH].change["rel_update"], records[m, SH].change["norm"],
                                                     reports[m, SH].embedding_counted, level=1 - 0.05 / 3)
            for m in PRE_LN}
    values["ev_flattening_smollm2"] = EvidenceGlue(flat["smollm2-135m"][0], lo=flat["smollm2-135m"][1],
                                                   hi=flat["smollm2-135m"][2], digits=3)
    values["ev_flattening_qwen"] = EvidenceGlue(flat["qwen2.5-coder-0.5b"][0], lo=flat["qwen2.5-coder-0.5b"][1],
                                                hi=flat["qwen2.5-coder-0.5b"][2], digits=3)
    # claim-pretrained-idle's second reading, declared with the first: the last block apart
    half_nl = {m: pruning.skip_half_ratio(records[m, SH].skip, level=LEVEL, last=False) for m in PRE_LN}
    half_ref_nl = {m: training_analysis.theorem_half_ratio(records[m, SH].n_layer, reports[m, SH].embedding_counted,
                                                           last=False) for m in PRE_LN}
    values["ev_half_ratio_no_last_smollm2"] = _iv(half_nl["smollm2-135m"])
    values["ev_half_ratio_no_last_qwen"] = _iv(half_nl["qwen2.5-coder-0.5b"])
    values["ev_half_ratio_ref_no_last_smollm2"] = EvidenceGlue(half_ref_nl["smollm2-135m"], digits=4)
    values["ev_half_ratio_ref_no_last_qwen"] = EvidenceGlue(half_ref_nl["qwen2.5-coder-0.5b"], digits=4)
    for name in PRE_LN:
        _display(values, f"pt_half_no_last_{SHORT[name]}", half_nl[name].rho, half_nl[name].lo, half_nl[name].hi)
    return PretrainedResult(reports, readings, growth, sub_fits, records, missing, trends, half, half_ref, metric_corr, metric_corr_fw, metric_diff, leaves, quant_shift, gap, var_exp,
                            influence_residual, panels, tables, values)


#: where the large model's Chapter 9 record is stored (relative to the book's folder), apart from
#: results/pretrained, every record of which Chapter 9 reads
LARGE_RECORDS = "results/pretrained_large"
#: the two sizes of the Qwen family, by their records' model names
SIZES = {"qwen2.5-coder-0.5b": "Qwen2.5-Coder-0.5B", "qwen2.5-coder-1.5b": "Qwen2.5-Coder-1.5B"}
#: the level of the sizes' intervals (95 %, described: no rule reads them)
SIZE_LEVEL = 0.95


@dataclass(frozen=True)
class Size:
    """One Qwen size from its Chapter 9 record: the exponent over k = 2..L with
    the theorem's over the same range and convention, k0 / L from the Gram (m = 3, the last
    block apart), the last block's jump (``anchors.final_jump``), and the later-over-earlier
    skip-cost ratio with and without the last block beside the theorem's; intervals at
    :data:`SIZE_LEVEL` over sequences."""
    model: str
    n_layer: int
    exponent: object
    reference: float
    k0_per_block: float
    jump: object
    skip_ratio: object
    skip_ratio_no_last: object
    skip_ref: float
    skip_ref_no_last: float


def size_reading(name: str, rec) -> Size:
    """One model's :class:`Size` from its Chapter 9 record ``rec`` (any text)."""
    from ...checks import ArgumentTypeError, show
    if not isinstance(rec, pretrained_analysis.PretrainedRecord):
        raise ArgumentTypeError(f"rec must be a pretrained record (pretrained_analysis.load_record's), got "
                                f"{type(rec).__name__} {show(rec)}")
    from .. import anchors, front
    from .. import intervention as I
    from ...stats import inference
    rep = pretrained_analysis.exponent_report(rec.change["omega_sq"], rec.gram, level=SIZE_LEVEL)
    L = int(rec.n_layer)
    return Size(name, L, rep.main, rep.main.reference,
                front.block_profile(rec.gram, I.FRONT_M, I.TAIL).k0 / L,
                inference.t_interval(anchors.final_jump(rec.change["angular"]), SIZE_LEVEL),
                pruning.skip_half_ratio(rec.skip, level=SIZE_LEVEL),
                pruning.skip_half_ratio(rec.skip, level=SIZE_LEVEL, last=False),
                training_analysis.theorem_half_ratio(L, rep.embedding_counted),
                training_analysis.theorem_half_ratio(L, rep.embedding_counted, last=False))


#: the confirmatory reading of the pretrained rules (``book.evidence.CONFIRMATORY_MODELS``): its
#: model's short name -> (model, text) of its record under ``results/pretrained_large``, measured
#: after the reading was registered (``resdecay record qwen2.5-coder-1.5b --text pydoc --out
#: results/pretrained_large``)
CONFIRMATORY = {"qwen15": ("qwen2.5-coder-1.5b", "pydoc")}
#: where the confirmatory records lie (beside ``results/pretrained``, which Chapter 9 reads whole)
CONFIRMATORY_DIR = ("results", "pretrained_large")


def confirmatory(root) -> dict:
    """The confirmatory reading's evidence, glue name -> EvidenceGlue: for each model of
    :data:`CONFIRMATORY`, the statistics :func:`stored` computes for SmolLM2 and Qwen, with the
    same functions at the same levels, on its record under ``root/results/pretrained_large``
    (the exponent report at :data:`LEVEL`, its fit-start shift and drift; the flattening at
    1 - 0.05/3; the skip cost's half ratios at :data:`LEVEL` and the theorem's; the change's rank
    correlation with the skip cost at 95 % and its differences from the competitors at
    1 - 0.05/:data:`N_COMPARISONS`). While the record is not stored every name is NaN, so the
    reading's verdicts are open and the ledger says "not yet"."""
    from ...book import evidence as E
    from ...book.notebooks import book_root
    records = pretrained_analysis.load_records(book_root(root).joinpath(*CONFIRMATORY_DIR))
    out = {}
    for short, key in CONFIRMATORY.items():
        rec = records.get(key)
        if rec is None:
            for table in (E.PRETRAINED_EXP, E.PRETRAINED_REF, E.FITRANGE_SHIFT, E.PRETRAINED_DRIFT, E.FLATTENING,
                          E.HALF_RATIO, E.HALF_RATIO_REF, E.HALF_RATIO_NO_LAST, E.HALF_RATIO_REF_NO_LAST,
                          E.METRIC_RHO_CHANGE):
                out[table[short]] = EvidenceGlue.nan(table[short].kind)
            for c in ("influence", "angular", "relative", "deepest"):
                out[E.METRIC_DIFF[c, short]] = EvidenceGlue.nan(E.METRIC_DIFF[c, short].kind)
            continue
        out.update(_confirmatory_evidence(rec))
    return {str(k): v for k, v in out.items()}


def _confirmatory_evidence(rec) -> dict:
    """The confirmatory reading's evidence from the 1.5B's pydoc record ``rec``, each name
    written out (a reviewer's search finds it); the statistics are :func:`stored`'s."""
    rep = pretrained_analysis.exponent_report(rec.change["omega_sq"], rec.gram, level=LEVEL)
    flat = pretrained_analysis.output_flattening(rec.change["rel_update"], rec.change["norm"], rep.embedding_counted,
                                                 level=1 - 0.05 / 3)
    half = pruning.skip_half_ratio(rec.skip, level=LEVEL)
    half_nl = pruning.skip_half_ratio(rec.skip, level=LEVEL, last=False)
    scores = pruning.ranking_scores(rec.change)
    corr, _ = pruning.predicts_cost(scores, rec.skip, level=0.95)
    _, diff = pruning.predicts_cost(scores, rec.skip, level=1 - 0.05 / N_COMPARISONS)
    return {
        "ev_pretrained_exp_qwen15": _iv(rep.main),
        "ev_pretrained_ref_qwen15": EvidenceGlue(rep.main.reference, digits=4),
        "ev_fitrange_shift_qwen15": EvidenceGlue(rep.range_shift, digits=4),
        "ev_pretrained_drift_qwen15": _iv(rep.curvature["drift"]),
        "ev_flattening_qwen15": EvidenceGlue(flat[0], lo=flat[1], hi=flat[2], digits=3),
        "ev_half_ratio_qwen15": _iv(half),
        "ev_half_ratio_ref_qwen15": EvidenceGlue(
            training_analysis.theorem_half_ratio(rec.n_layer, rep.embedding_counted), digits=4),
        "ev_half_ratio_no_last_qwen15": _iv(half_nl),
        "ev_half_ratio_ref_no_last_qwen15": EvidenceGlue(
            training_analysis.theorem_half_ratio(rec.n_layer, rep.embedding_counted, last=False), digits=4),
        "ev_metric_rho_change_qwen15": _iv(corr["change"]),
        "ev_metric_diff_influence_qwen15": _iv(diff["influence"]),
        "ev_metric_diff_angular_qwen15": _iv(diff["angular"]),
        "ev_metric_diff_relative_qwen15": _iv(diff["relative"]),
        "ev_metric_diff_deepest_qwen15": _iv(diff["deepest"]),
    }


#: the rows of the confirmatory reading's table: (per-model evidence table, what the row shows)
_CONFIRM_ROWS = ((E.PRETRAINED_EXP, "exponent of the change, k = 2..L"),
                 (E.PRETRAINED_REF, "the theorem's over the same range and convention"),
                 (E.FITRANGE_SHIFT, "fit-start shift (k_min = 3, 4)"),
                 (E.PRETRAINED_DRIFT, "curvature drift (0: a power law)"),
                 (E.FLATTENING, "flattening by the output scales past the front"),
                 (E.HALF_RATIO, "skip cost, later half over earlier (last block in)"),
                 (E.HALF_RATIO_REF, "the theorem's ratio"),
                 (E.HALF_RATIO_NO_LAST, "the same without the last block"),
                 (E.HALF_RATIO_REF_NO_LAST, "the theorem's ratio without it"),
                 (E.METRIC_RHO_CHANGE, "rank correlation of the change with the skip cost"))


def _glued_words(g) -> str:
    """An EvidenceGlue as the tables print it: "v [lo, hi]" or "v" to 3 decimals, "not measured" for NaN."""
    if not math.isfinite(g.value):
        return "not measured"
    return f"{g.value:.3f}" + (f" [{g.lo:.3f}, {g.hi:.3f}]" if g.lo is not None else "")


@dataclass(frozen=True)
class SecondSize:
    """Chapter 9's second size of the Qwen family: ``sizes`` ((model, text, :class:`Size`) of
    the 0.5B and the 1.5B on each text stored; the 1.5B's pydoc record is the confirmatory
    reading's), ``values`` {glue name: EvidenceGlue} of the exploratory families and of the
    confirmatory reading (:func:`stored`'s and :func:`confirmatory`'s), and ``measured``:
    whether the confirmatory record is stored."""
    sizes: tuple
    values: dict = field(repr=False)
    measured: bool
    records: dict = field(default_factory=dict, repr=False)

    def panels(self) -> dict:
        """The figure's data: per size, its change per block on each text measured (mean over
        sequences, +/- 2 standard errors) and the theorem's omega_k^2 in both conventions."""
        from ...maths import theory
        panels = {}
        for m, shown in SIZES.items():
            lines = [{"k": c.k, "y": c.omega_sq, "yerr": 2 * c.omega_sq_se, "fmt": marker + "-",
                      "label": pretrained_analysis.TEXTS[t]}
                     for t, marker in zip(TEXTS, "os") if (m, t) in self.records
                     for c in (Curves(self.records[m, t].change),)]
            if not lines:
                continue
            k = lines[0]["k"]
            lines += [{"k": k, "y": [float(theory.omega_sq(int(j), True)) for j in k], "fmt": "k-",
                       "label": "theorem, embedding-counted"},
                      {"k": k[1:], "y": [float(theory.omega_sq(int(j), False)) for j in k[1:]], "fmt": "k--",
                       "label": "theorem, seed convention"}]
            panels[shown] = lines
        return panels

    def sizes_table(self) -> Table:
        rows = [[SIZES[m], pretrained_analysis.TEXTS[t], str(z.n_layer),
                 f"{z.exponent.exponent:.2f} [{z.exponent.lo:.2f}, {z.exponent.hi:.2f}] against {z.reference:.2f}",
                 f"{z.k0_per_block:.2f}", f"{z.jump.mean:.2f} [{z.jump.lo:.2f}, {z.jump.hi:.2f}]",
                 f"{z.skip_ratio.rho:.2f} against {z.skip_ref:.2f}",
                 f"{z.skip_ratio_no_last.rho:.2f} against {z.skip_ref_no_last:.2f}"] for m, t, z in self.sizes]
        return Table.of(["model", "text", "blocks L", "exponent, k = 2..L, against the theorem's", "k0 / L",
                         "last block's jump", "skip cost, later over earlier half", "the same without the last block"],
                        rows)

    def confirm_table(self) -> Table:
        models = (*E.PRE_LN_FAMILIES, *E.CONFIRMATORY_MODELS)
        rows = [[what, *(_glued_words(self.values[str(table[m])]) for m in models)] for table, what in _CONFIRM_ROWS]
        for c in ledger.COMPETITORS:
            rows.append([f"rho(change) - rho({c})", *(_glued_words(self.values[str(E.METRIC_DIFF[c, m])])
                                                      for m in models)])
        return Table.of(["statistic", "SmolLM2-135M, Shakespeare", "Qwen2.5-Coder-0.5B, Shakespeare",
                         "Qwen2.5-Coder-1.5B, pydoc (confirmatory)"], rows)

    def change_words(self) -> Words:
        """What changes from the 0.5B to the 1.5B on each text both were measured on, in words."""
        small, large = SIZES
        by = {(m, t): z for m, t, z in self.sizes}
        parts = []
        for t in TEXTS:
            if (small, t) in by and (large, t) in by:
                a, b = by[small, t], by[large, t]
                parts.append(
                    f"on {pretrained_analysis.TEXTS[t]}, the exponent goes from {a.exponent.exponent:.2f} to "
                    f"{b.exponent.exponent:.2f} (the theorem's {a.reference:.2f} and {b.reference:.2f}), k0 / L from "
                    f"{a.k0_per_block:.2f} to {b.k0_per_block:.2f}, the last block's jump from {a.jump.mean:.2f} to "
                    f"{b.jump.mean:.2f}, and the later half's skip cost over the earlier half's from "
                    f"{a.skip_ratio.rho:.2f} to {b.skip_ratio.rho:.2f} ({a.skip_ratio_no_last.rho:.2f} to "
                    f"{b.skip_ratio_no_last.rho:.2f} without the last block)")
        return Words("; ".join(parts) if parts else "no text has both sizes measured yet")

    def glues(self) -> dict:
        return {"pt_sizes_table": self.sizes_table(), "pt_confirm_table": self.confirm_table(),
                "pt_sizes_change": self.change_words(),
                "pt_confirm_measured": Words("measured" if self.measured else "not measured yet")}


def second_size(root, result: PretrainedResult) -> SecondSize:
    """The second Qwen size beside the first (:class:`SecondSize`) from the records under
    ``root/results/pretrained`` and ``root/results/pretrained_large`` and Chapter 9's ``result``
    (whose values hold both readings' evidence). Described, not read by a rule: the rules read
    the confirmatory reading's evidence, which :func:`stored` glues."""
    from ...book.notebooks import book_root
    from ...checks import ArgumentTypeError, show
    root = book_root(root)
    if not isinstance(result, PretrainedResult):
        raise ArgumentTypeError(f"result must be Chapter 9's result (pretrained.stored's or chapter's), got "
                                f"{type(result).__name__} {show(result)}")
    records = {k: v for k, v in result.records.items() if k[0] in SIZES}
    records.update({k: v for k, v in pretrained_analysis.load_records(root / LARGE_RECORDS).items() if k[0] in SIZES})
    sizes = tuple((m, t, size_reading(m, records[m, t])) for m in SIZES for t in TEXTS if (m, t) in records)
    return SecondSize(sizes, dict(result.values), all(k in records for k in CONFIRMATORY.values()), records)


def chapter(root) -> PretrainedResult:
    """Chapter 9's result: :func:`stored` (the four models' records under ``root/results/pretrained``)
    with :func:`live_check` (:data:`LIVE_MODEL` re-measured now and compared with its record)."""
    result = stored(root)
    return replace(result, live=live_check(root, result.records))


def _evidence(reports, runs, records, trends, metric_corr, metric_diff, half, half_ref, influence_residual) -> dict:
    """Every ``ev_`` name the ledger reads from Chapter 9 but ``ev_quant_shift``, ``ev_var_exp_smollm2`` and
    ``ev_var_exp_qwen`` (glued by :func:`chapter`), each written out (a reviewer's search finds it)."""
    smol, qwen = reports["smollm2-135m", SH], reports["qwen2.5-coder-0.5b", SH]
    gem, mini = reports["gemma3-270m", SH], reports["all-minilm-l6", SH]
    gs, gq = (pretrained_analysis.norm_growth(runs[m, SH]["block"].per_sequence["norm"], k_min=2, level=LEVEL)
              for m in PRE_LN)
    ds, dq = metric_diff["smollm2-135m"], metric_diff["qwen2.5-coder-0.5b"]
    return {
        "ev_influence_identity_residual": EvidenceGlue(float(influence_residual)),
        "ev_pretrained_exp_smollm2": _iv(smol.main),
        "ev_pretrained_exp_qwen": _iv(qwen.main),
        "ev_pretrained_exp_gemma3": _iv(gem.main),
        "ev_pretrained_exp_minilm": _iv(mini.main),
        "ev_pretrained_ref_smollm2": EvidenceGlue(smol.main.reference, digits=4),
        "ev_pretrained_ref_qwen": EvidenceGlue(qwen.main.reference, digits=4),
        "ev_fitrange_shift_smollm2": EvidenceGlue(smol.range_shift, digits=4),
        "ev_fitrange_shift_qwen": EvidenceGlue(qwen.range_shift, digits=4),
        "ev_pretrained_drift_smollm2": _iv(smol.curvature["drift"]),
        "ev_pretrained_drift_qwen": _iv(qwen.curvature["drift"]),
        "ev_norm_growth_smollm2": _iv(gs),
        "ev_norm_growth_qwen": _iv(gq),
        "ev_skip_trend_smollm2": _iv(trends["smollm2-135m"]),
        "ev_skip_trend_qwen": _iv(trends["qwen2.5-coder-0.5b"]),
        "ev_skip_block1_smollm2": EvidenceGlue(records["smollm2-135m", SH].skip.mean[0], digits=4),
        "ev_skip_block1_qwen": EvidenceGlue(records["qwen2.5-coder-0.5b", SH].skip.mean[0], digits=4),
        "ev_metric_rho_change_smollm2": _iv(metric_corr["smollm2-135m"]["change"]),
        "ev_metric_rho_change_qwen": _iv(metric_corr["qwen2.5-coder-0.5b"]["change"]),
        "ev_metric_diff_influence_smollm2": _iv(ds["influence"]),
        "ev_metric_diff_angular_smollm2": _iv(ds["angular"]),
        "ev_metric_diff_relative_smollm2": _iv(ds["relative"]),
        "ev_metric_diff_deepest_smollm2": _iv(ds["deepest"]),
        "ev_metric_diff_influence_qwen": _iv(dq["influence"]),
        "ev_metric_diff_angular_qwen": _iv(dq["angular"]),
        "ev_metric_diff_relative_qwen": _iv(dq["relative"]),
        "ev_metric_diff_deepest_qwen": _iv(dq["deepest"]),
        "ev_half_ratio_smollm2": _iv(half["smollm2-135m"]),
        "ev_half_ratio_qwen": _iv(half["qwen2.5-coder-0.5b"]),
        "ev_half_ratio_ref_smollm2": EvidenceGlue(half_ref["smollm2-135m"], digits=4),
        "ev_half_ratio_ref_qwen": EvidenceGlue(half_ref["qwen2.5-coder-0.5b"], digits=4),
    }
