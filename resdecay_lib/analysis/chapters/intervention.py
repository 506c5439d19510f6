"""Chapter 9b's result: the front intervention, read from the committed predictions and the records.

Everything the chapter glues comes from :func:`chapter` (``results/predictions/intervention.json``,
written first, and ``results/intervention/<model>.json``, measured after it): per model the
arithmetic (a) and the real (b) curves of omega_k^2 at each front scale, the share T(alpha) of
(a)'s change that (b) realises (:func:`resdecay_lib.analysis.intervention.tracking`), the
shifted law's k0(alpha) predicted and measured, the loss under each scale, and the order of
prediction and measurement as the records state it.
"""
from __future__ import annotations

import datetime
import json
import math
from dataclasses import dataclass, field

import numpy as np

from ...book import evidence as E, rules
from ...book.glues import EvidenceGlue, Table, Words
from ...book.notebooks import book_root
from .. import intervention as I
from .pretrained import LARGE_RECORDS, SIZES, size_reading

__all__ = ["ModelReading", "InterventionResult", "chapter", "order_words", "tracking_words", "DEPARTURE_LEVEL",
           "departure_blocks", "departure_words", "Departure", "BesideResult", "beside"]


@dataclass(frozen=True)
class ModelReading:
    """One model: its prediction and, once measured, the patched forward's reading.

    ``key``: a key of :data:`~resdecay_lib.analysis.intervention.MODELS`; ``fronts``: the front
    sizes (m = 3 and the sensitivity's); ``base`` [L]: the unpatched mean omega_k^2;
    ``arith`` {m: {alpha: [L]}}: (a)'s mean curves; ``real`` the same for (b) (empty before the
    measurement); ``tracking`` {m: {alpha: Tracking}} at the family's level; ``k0_pred`` and
    ``k0_real`` {m: {alpha: (k0, lo, hi)}} (95 % bootstrap over sequences); ``loss`` {m: {alpha:
    (mean, se)}} (alpha 1: the unpatched loss); ``ordered``: the record names the committed
    prediction (its hash equals the entry's) and was measured after its commit (None: not measured)."""
    key: str
    model: str
    n_layer: int
    placement: str
    fronts: tuple
    second_front: int
    base: np.ndarray
    arith: dict
    real: dict = field(default_factory=dict)
    tracking: dict = field(default_factory=dict)
    k0_pred: dict = field(default_factory=dict)
    k0_real: dict = field(default_factory=dict)
    loss: dict = field(default_factory=dict)
    ordered: bool | None = None
    n_seq: int = 0
    prediction_commit: str = ""
    wall_s: float = math.nan
    peak_rss_mib: float = math.nan

    @property
    def measured(self) -> bool:
        return bool(self.real)


def _utc(s: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(s)


def _mean_se(x) -> tuple[float, float]:
    x = np.asarray(x, float)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def _reading(key: str, pred: dict, rec: dict | None) -> ModelReading:
    base_seq = np.asarray(pred["base"]["omega_sq"], float)
    S0, n0 = np.asarray(pred["base"]["gram_sums"], float), np.asarray(pred["base"]["tokens"], float)
    D = int(pred["d_model"])
    fronts = tuple(int(m) for m in pred["fronts"])
    arith = {m: {float(a): np.asarray(v, float) for a, v in pred["arithmetic"][str(m)].items()} for m in fronts}
    k0_pred = {m: {a: I.k0_interval(S0, n0, D, m, a) for a in I.ALPHAS} for m in fronts}
    r = {"key": key, "model": pred["model"], "n_layer": int(pred["n_layer"]), "placement": pred["placement"],
         "fronts": fronts, "second_front": int(pred["second_front"]), "base": base_seq.mean(0),
         "arith": {m: {a: v.mean(0) for a, v in d.items()} for m, d in arith.items()}, "k0_pred": k0_pred}
    if rec is None:
        return ModelReading(**r)
    real, tr, k0r, loss = {}, {}, {}, {}
    for m in fronts:
        real[m], tr[m], k0r[m], loss[m] = {}, {}, {}, {}
        for a_s, d in rec["real"][str(m)].items():
            a = float(a_s)
            om = np.asarray(d["omega_sq"], float)
            real[m][a] = om.mean(0)
            if a != 1.0:
                tr[m][a] = I.tracking(base_seq, arith[m][a], om, m, level=I.FAMILY_LEVEL)
            k0r[m][a] = I.k0_interval(np.asarray(d["gram_sums"], float), np.asarray(d["tokens"], float), D, m)
            loss[m][a] = _mean_se(d["loss"])
    entry_ok = rec["prediction"]["sha256"] == I.entry_sha256(pred)
    after = _utc(rec["prediction"]["committed"]) < _utc(rec["measured_utc"])
    return ModelReading(**r, real=real, tracking=tr, k0_real=k0r, loss=loss, ordered=bool(entry_ok and after),
                        n_seq=int(base_seq.shape[0]), prediction_commit=rec["prediction"]["commit"][:7],
                        wall_s=float(rec["provenance"]["wall_s"]),
                        peak_rss_mib=float(rec["provenance"].get("peak_rss_mib", math.nan)))


def tracking_words(t) -> Words:
    """What one T interval says, against the margin (1 - margin, 1 + margin)."""
    lo_ok, hi_ok = 1 - I.TRACKING_MARGIN, 1 + I.TRACKING_MARGIN
    if t.hi < lo_ok:
        return Words("less than half the arithmetic's change: later blocks make up for the front's size")
    if t.lo > hi_ok:
        return Words("more than the arithmetic: later blocks also write less when the sum is larger")
    if t.lo >= lo_ok and t.hi <= hi_ok:
        return Words("within the margin of the arithmetic of the sum")
    return Words("the interval crosses the margin: the data cannot tell")


def order_words(readings) -> Words:
    """The order of prediction and measurement, as the records state it."""
    done = [r for r in readings if r.measured]
    if not done:
        return Words("No model has been measured yet: every prediction stands alone.")
    bad = [r.model for r in done if not r.ordered]
    if bad:
        return Words(f"The records of {', '.join(bad)} do not name their committed prediction, "
                     f"or were measured before it: their reading is not a test of a prediction.")
    return Words(f"Each of the {len(done)} measured models' records names the commit of its prediction, "
                 f"whose entry's hash it carries, and was measured after that commit.")


def _fmt(x, d=2) -> str:
    return "--" if x is None or not math.isfinite(x) else f"{x:.{d}f}"


@dataclass(frozen=True)
class InterventionResult:
    """Chapter 9b's numbers (see the module docstring); ``readings`` one per predicted model."""
    readings: tuple
    declared: dict

    def reading(self, key: str) -> ModelReading | None:
        return next((r for r in self.readings if r.key == key), None)

    def tracking_table(self) -> Table:
        rows = []
        for r in self.readings:
            for m in r.fronts:
                cells = [r.model + ("" if r.key in I.RULE_MODELS else " (outside the family)"), str(m)]
                for a in (0.25, 0.5, 2.0):
                    t = r.tracking.get(m, {}).get(a)
                    cells.append(f"{t.value:.2f} [{t.lo:.2f}, {t.hi:.2f}]" if t else "not measured")
                rows.append(cells)
        return Table.of(["model", "front m", "T at alpha 1/4", "T at 1/2", "T at 2"], rows)

    def k0_table(self) -> Table:
        rows = []
        for r in self.readings:
            m = I.FRONT_M
            for a in I.ALPHAS:
                p = r.k0_pred[m][a]
                q = r.k0_real.get(m, {}).get(a)
                ls = r.loss.get(m, {}).get(a)
                rows.append([r.model, f"{a:g}", f"{p[0]:.1f} [{p[1]:.1f}, {p[2]:.1f}]",
                             f"{q[0]:.1f} [{q[1]:.1f}, {q[2]:.1f}]" if q else "not measured",
                             f"{ls[0]:.3f} ± {ls[1]:.3f}" if ls else "not measured"])
        return Table.of(["model", "alpha", "k0 predicted", "k0 measured", "loss (nats/token)"], rows)

    def departure(self, key: str, m: int, alpha: float) -> np.ndarray:
        """log(W^b_k / W^a_k) for k = 1..L: how far the real curve departs from the arithmetic."""
        r = self.reading(key)
        return np.log(r.real[m][alpha] / r.arith[m][alpha])

    @property
    def curve_panels(self) -> dict:
        """:func:`resdecay_lib.book.plots.line_panels`'s panels: per model, at m = 3, the unpatched
        mean omega_k^2, (a) and, once measured, (b) at the primary scales."""
        panels = {}
        for r in self.readings:
            m, k = I.FRONT_M, list(range(1, r.n_layer + 1))
            lines = [{"k": k, "y": r.base.tolist(), "fmt": "k-", "label": "unpatched"}]
            for a, color in zip(I.PRIMARY_ALPHAS, ("C0", "C3")):
                lines.append({"k": k, "y": r.arith[m][a].tolist(), "fmt": "--", "color": color,
                              "label": f"(a) arithmetic, alpha {a:g}"})
                if r.measured:
                    lines.append({"k": k, "y": r.real[m][a].tolist(), "fmt": "o-", "color": color,
                                  "label": f"(b) real, alpha {a:g}"})
            panels[r.model] = lines
        return panels

    def cost_table(self) -> Table:
        """Each measured model's record: wall time, peak memory, the prediction's commit."""
        rows = [[r.model, f"{r.wall_s:.0f}", f"{r.peak_rss_mib:.0f}", r.prediction_commit]
                for r in self.readings if r.measured]
        return Table.of(["model", "wall time (s)", "peak memory (MiB)", "prediction's commit"], rows)

    def glues(self) -> dict:
        g = {"intervention_tracking_table": self.tracking_table(), "intervention_k0_table": self.k0_table(),
             "intervention_cost_table": self.cost_table(),
             "intervention_order": order_words(self.readings),
             "intervention_margin": I.TRACKING_MARGIN, "intervention_front_m": I.FRONT_M,
             "intervention_family_level": round(100 * I.FAMILY_LEVEL, 1),
             "intervention_n_predicted": len(self.readings),
             "intervention_n_measured": sum(r.measured for r in self.readings)}
        for m in E.INTERVENTION_MODELS:
            r = self.reading(m)
            ok = r is not None and r.measured
            g[E.INTERVENTION_MEASURED[m].name] = EvidenceGlue(float(r.n_seq if ok else 0))
            for a_name, a in E.INTERVENTION_ALPHAS.items():
                t = r.tracking[I.FRONT_M][a] if ok else None
                g[E.INTERVENTION_T[m, a_name].name] = (EvidenceGlue(t.value, lo=t.lo, hi=t.hi, digits=3) if t
                                                       else EvidenceGlue.nan("interval"))
        return g


def chapter(root) -> InterventionResult:
    """Chapter 9b's result from ``results/predictions/intervention.json`` and the records
    under ``results/intervention`` of the book's folder ``root``; a record without its
    model's prediction raises ValueError."""
    root = book_root(root)
    path = root / I.PREDICTIONS
    pred = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"models": {}, "declared": I.DECLARED}
    recs = {}
    folder = root / I.RECORDS
    for f in sorted(folder.glob("*.json")) if folder.exists() else []:
        rec = json.loads(f.read_text(encoding="utf-8"))
        if rec["key"] not in pred["models"]:
            raise ValueError(f"{f} measures {rec['key']!r}, which {I.PREDICTIONS} does not predict")
        recs[rec["key"]] = rec
    order = [k for k in I.MODELS if k in pred["models"]]
    return InterventionResult(tuple(_reading(k, pred["models"][k], recs.get(k)) for k in order), pred["declared"])


# ----------------------------------------------------------------------------- beside the evidence
# What the chapter shows beside the ledger's evidence (no rule reads it): how far the real forward
# departs from the arithmetic block by block, the published anchors beside the theorem and the
# book's records, Hu et al.'s effective depth, and the identity checked per token.

#: the Pre-LN models the anchors' table reads (Chapter 9's records and results/anchors), and their names
ANCHOR_MODELS = {"smollm2-135m": "SmolLM2-135M", "qwen2.5-coder-0.5b": "Qwen2.5-Coder-0.5B",
                 "qwen2.5-coder-1.5b": "Qwen2.5-Coder-1.5B"}
#: the level of the block-by-block departures' intervals (95 %, described: no rule reads them)
DEPARTURE_LEVEL = 0.95


def departure_blocks(L: int, m: int) -> tuple:
    """The blocks at which the departure table reads a model of ``L`` blocks and front ``m``: the
    first later block, then about a quarter, a half and three quarters of the depth, and the last
    block before the tail (1-based, sorted, each past the front)."""
    ks = {m + 1, round(L / 4), round(L / 2), round(3 * L / 4), L - I.TAIL}
    return tuple(sorted(k for k in ks if m < k <= L - I.TAIL))


def departure_words(lo: float, hi: float) -> Words:
    """What one block's departure interval says: the real change is larger than the arithmetic
    (the interval above 0), smaller (below 0), or as the arithmetic (0 inside)."""
    if lo > 0:
        return Words("more")
    if hi < 0:
        return Words("less")
    return Words("as the arithmetic")


@dataclass(frozen=True)
class Departure:
    """One model's departure of (b) from (a) at front ``m`` and scale ``alpha``: d_k, lo, hi [L]
    (:func:`resdecay_lib.analysis.intervention.departure`), with the loss (mean, se) under that
    scale and unpatched."""
    key: str
    model: str
    m: int
    alpha: float
    d: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    loss: tuple
    loss_base: tuple


def _departures(root, pred: dict) -> tuple:
    out = []
    folder = root / I.RECORDS
    for key in [k for k in I.MODELS if k in pred["models"]]:
        path = folder / f"{key}.json"
        if not path.exists():
            continue
        rec = json.loads(path.read_text(encoding="utf-8"))
        p = pred["models"][key]
        m = I.FRONT_M
        base_loss = _mean_se(rec["real"][str(m)]["1.0"]["loss"])
        for a in I.PRIMARY_ALPHAS:
            arith = np.asarray(p["arithmetic"][str(m)][str(a)], float)
            real = np.asarray(rec["real"][str(m)][str(a)]["omega_sq"], float)
            d, lo, hi = I.departure(arith, real, DEPARTURE_LEVEL)
            out.append(Departure(key, p["model"], m, a, d, lo, hi, _mean_se(rec["real"][str(m)][str(a)]["loss"]),
                                 base_loss))
    return tuple(out)


@dataclass(frozen=True)
class BesideResult:
    """What Chapter 9b shows beside its evidence: ``departures`` (one :class:`Departure` per
    measured model and primary scale), the anchors' ``rows`` (:func:`resdecay_lib.analysis.anchors.table`
    over Chapter 9's records), the ``anchor_records`` (``results/anchors``: Hu et al.'s cosines
    and the identity's check per model)."""
    departures: tuple
    rows: tuple
    anchor_records: dict
    readings: tuple = ()
    sizes: tuple = ()
    mean_theta: dict = field(default_factory=dict)

    def sizes_table(self) -> Table:
        """The two Qwen sizes side by side (Chapter 9's measurements of each record)."""
        rows = []
        for z in self.sizes:
            e = z.exponent
            rows.append([SIZES[z.model], str(z.n_layer), f"{e.exponent:.2f} [{e.lo:.2f}, {e.hi:.2f}] against {z.reference:.2f}",
                         f"{z.k0_per_block:.2f}", f"{z.jump.mean:.2f} [{z.jump.lo:.2f}, {z.jump.hi:.2f}]",
                         f"{z.skip_ratio:.2f} against {z.skip_ref:.2f}",
                         f"{z.skip_ratio_no_last:.2f} against {z.skip_ref_no_last:.2f}"])
        return Table.of(["model", "blocks L", "exponent, k = 2..L, against the theorem's", "k0 / L",
                         "last block's jump", "skip cost, later over earlier half",
                         "the same without the last block"], rows)

    def _reading(self, key: str):
        return next((r for r in self.readings if r.key == key), None)

    def model_words(self, key: str) -> Words:
        """One model's T at m = 3 at alpha = 1/4 and 2, with what each interval says."""
        r = self._reading(key)
        if r is None or not r.measured:
            return Words("not measured yet")
        parts = []
        for a in I.PRIMARY_ALPHAS:
            t = r.tracking[I.FRONT_M][a]
            v, lo, hi = (round(x, 3) for x in (t.value, t.lo, t.hi))   # as the evidence glues them
            parts.append(f"T = {v:.2f} [{lo:.2f}, {hi:.2f}] at alpha = {a:g} "
                         f"({tracking_words(t)})")
        return Words("; ".join(parts))

    def family_words(self) -> Words:
        """How the family's measured intervals fall against the margin, counted."""
        ts = [r.tracking[I.FRONT_M][a] for r in self.readings if r.key in I.RULE_MODELS and r.measured
              for a in I.PRIMARY_ALPHAS]
        if not ts:
            return Words("no model of the family is measured yet")
        n = rules.tracking_counts((t.lo, t.hi) for t in ts)
        return Words(f"of the {len(ts)} intervals measured so far, {n['within']} lie within the margin of the "
                     f"arithmetic, {n['above']} wholly above it, {n['below']} wholly below it and "
                     f"{n['across']} cross its edge")

    def loss_words(self) -> Words:
        """Whether a quarter of the front costs each measured Pre-LN model more loss than twice the
        front, and either more than none (alpha = 1), at m = 3."""
        pre = [r for r in self.readings if r.measured and r.placement == "pre_ln"]
        if not pre:
            return Words("no Pre-LN model is measured yet")
        order = [r.model for r in pre if r.loss[I.FRONT_M][0.25][0] > r.loss[I.FRONT_M][2.0][0]
                 > r.loss[I.FRONT_M][1.0][0]]
        if len(order) == len(pre):
            return Words(f"in each of the {len(pre)} measured Pre-LN models a quarter of the front raises the loss "
                         f"more than twice the front does, and both raise it")
        other = [r.model for r in pre if r.model not in order]
        return Words(f"a quarter of the front raises the loss more than twice the front, and both raise it, in "
                     f"{len(order)} of the {len(pre)} measured Pre-LN models; not in {', '.join(other)}")

    def k0_words(self) -> Words:
        """How often the measured offset k0 (alpha != 1, m = 3) lies inside the predicted offset's
        95 % interval, and where it does not."""
        inside, outside = 0, []
        for r in self.readings:
            if not r.measured:
                continue
            for a in I.ALPHAS:
                if a == 1.0:
                    continue
                p, q = r.k0_pred[I.FRONT_M][a], r.k0_real[I.FRONT_M][a]
                if p[1] <= q[0] <= p[2]:
                    inside += 1
                else:
                    outside.append(f"{r.model} at alpha {a:g} ({q[0]:.1f} against {p[0]:.1f} [{p[1]:.1f}, {p[2]:.1f}])")
        n = inside + len(outside)
        if n == 0:
            return Words("no model is measured yet")
        tail = f"; outside it: {'; '.join(outside)}" if outside else ""
        return Words(f"the measured offset lies inside the predicted offset's 95 % interval in {inside} of {n} "
                     f"cases{tail}")

    def hu_words(self) -> Words:
        """The book's Qwen2.5-Coder-1.5B against the effective-depth ratios Hu et al. print for
        Qwen2.5-1.5B-Instruct (the same shape; another fine-tune, other texts, other weights' precision)."""
        from .. import anchors
        ed = self.effective_depths().get("qwen2.5-coder-1.5b")
        theirs = [(ds, (e + 1) / L) for m, L, ds, e in anchors.HU_COSINE_ED if m == "Qwen2.5-1.5B-Instruct"]
        if ed is None or not theirs:
            return Words("the 1.5B's cosines are not measured yet" if ed is None else "no published figure to set it beside")
        lo, hi = min(r for _, r in theirs), max(r for _, r in theirs)
        where = "inside" if lo <= ed.ratio <= hi else "below" if ed.ratio < lo else "above"
        return Words(f"Qwen2.5-Coder-1.5B's effective-depth ratio here is {ed.ratio:.2f} (ED {ed.ed} of {ed.L}), "
                     f"{where} the range {lo:.2f} to {hi:.2f} that Hu et al. print for Qwen2.5-1.5B-Instruct on "
                     f"{', '.join(ds for ds, _ in theirs)}")

    def csordas_words(self) -> Words:
        """Each Pre-LN model's later-over-earlier ratio of the relative contribution r_k against the
        theorem's at its depth and against 1."""
        parts = []
        for m, name in ANCHOR_MODELS.items():
            row = next((r for r in self.rows if r.anchor == "csordas" and r.model == m), None)
            if row is None:
                continue
            iv, th = row.book["shakespeare"], row.theorem["shakespeare"]
            side = "above" if iv.lo > th else "below" if iv.hi < th else "at"
            one = "above 1" if iv.lo > 1 else "below 1" if iv.hi < 1 else "at 1"
            parts.append(f"{name}'s ratio {iv.mean:.2f} [{iv.lo:.2f}, {iv.hi:.2f}] lies {side} the theorem's "
                         f"{th:.2f} and {one}")
        return Words("; ".join(parts) if parts else "no Pre-LN record is stored")

    def sizes_change_words(self) -> Words:
        """What changes from the 0.5B to the 1.5B in Chapter 9's measurements, each difference read
        against the two intervals (apart: they do not overlap)."""
        if len(self.sizes) < 2:
            return Words("the 1.5B's Chapter 9 record is not stored yet")
        a, b = self.sizes[0], self.sizes[1]

        def moved(name, x, y, xl, xh, yl, yh, digits=2):
            apart = xh < yl or yh < xl
            return f"{name} {x:.{digits}f} -> {y:.{digits}f} ({'apart' if apart else 'the intervals overlap'})"
        parts = [moved("the exponent", a.exponent.exponent, b.exponent.exponent, a.exponent.lo, a.exponent.hi,
                       b.exponent.lo, b.exponent.hi),
                 f"k0 / L {a.k0_per_block:.2f} -> {b.k0_per_block:.2f}",
                 moved("the last block's jump", a.jump.mean, b.jump.mean, a.jump.lo, a.jump.hi, b.jump.lo, b.jump.hi),
                 moved("the skip-cost ratio", a.skip_ratio.rho, b.skip_ratio.rho, a.skip_ratio.lo, a.skip_ratio.hi,
                       b.skip_ratio.lo, b.skip_ratio.hi),
                 moved("without the last block", a.skip_ratio_no_last.rho, b.skip_ratio_no_last.rho,
                       a.skip_ratio_no_last.lo, a.skip_ratio_no_last.hi, b.skip_ratio_no_last.lo,
                       b.skip_ratio_no_last.hi)]
        return Words("From the 0.5B to the 1.5B: " + "; ".join(parts))

    def sizes_words(self) -> Words:
        """What changes from Qwen2.5-Coder-0.5B to 1.5B: T at the two scales, the measured offset
        k0 per block unpatched, the unpatched loss and Hu et al.'s effective-depth ratio."""
        small, large = self._reading("qwen"), self._reading("qwen15")
        if small is None or large is None or not (small.measured and large.measured):
            return Words("the 1.5B is not measured yet")
        eds = self.effective_depths()

        def one(r, name):
            t = [r.tracking[I.FRONT_M][a] for a in I.PRIMARY_ALPHAS]
            k0 = r.k0_real[I.FRONT_M][1.0][0]
            ed = eds.get(name)
            hu = "no crossing" if ed is None else f"{ed.ratio:.2f}"
            return (f"T {t[0].value:.2f} and {t[1].value:.2f}, k0/L {k0 / r.n_layer:.2f}, "
                    f"loss {r.loss[I.FRONT_M][1.0][0]:.2f} nats per token, effective-depth ratio {hu}")
        return Words(f"Qwen2.5-Coder-0.5B ({small.n_layer} blocks): {one(small, 'qwen2.5-coder-0.5b')}; "
                     f"Qwen2.5-Coder-1.5B ({large.n_layer} blocks): {one(large, 'qwen2.5-coder-1.5b')}")

    def departure_table(self) -> Table:
        rows = []
        for dp in self.departures:
            L = dp.d.size
            cells = []
            for k in departure_blocks(L, dp.m):
                j = k - 1
                cells.append(f"k={k}: {dp.d[j]:+.2f} [{dp.lo[j]:+.2f}, {dp.hi[j]:+.2f}] "
                             f"({departure_words(dp.lo[j], dp.hi[j])})")
            rows.append([dp.model, f"{dp.alpha:g}", "; ".join(cells),
                         f"{dp.loss[0]:.2f} ± {dp.loss[1]:.2f} (unpatched {dp.loss_base[0]:.2f})"])
        return Table.of(["model", "alpha", "log(W^b_k / W^a_k) at block k, 95 % bootstrap over sequences",
                         "loss (nats per token; a character for the toy)"], rows)

    def reading(self, key: str, alpha: float) -> Words:
        """One model's departure over its later blocks at ``alpha``, in words: how many of the
        blocks m+1..L-1 write more than the arithmetic, less, or as it."""
        dp = next((d for d in self.departures if d.key == key and d.alpha == alpha), None)
        if dp is None:
            return Words("not measured")
        words = self._later_words(dp)
        return Words(f"{words.count('more')} of {len(words)} later blocks write more than the arithmetic, "
                     f"{words.count('less')} less, {words.count('as the arithmetic')} as it")

    @staticmethod
    def _later_words(dp) -> list:
        """:func:`departure_words` of each later block m+1..L-1 of one departure."""
        return [departure_words(dp.lo[j], dp.hi[j]) for j in range(dp.m, dp.d.size - I.TAIL)]

    def lean_words(self) -> Words:
        """Which way the later blocks lean, model by model: at alpha = 1/4, do more of them write
        more than the arithmetic than less; at alpha = 2, more of them less than more; the
        models where they do not, named."""
        parts = []
        for alpha, word, other in ((0.25, "more", "less"), (2.0, "less", "more")):
            deps = [d for d in self.departures if d.alpha == alpha]
            if not deps:
                continue
            off = [d.model for d in deps if (w := self._later_words(d)).count(word) <= w.count(other)]
            parts.append(f"at alpha = {alpha:g}, more later blocks write {word} than the arithmetic says than the "
                         f"other way in {len(deps) - len(off)} of the {len(deps)} measured models"
                         + (f" (not in {', '.join(off)})" if off else ""))
        return Words("; ".join(parts) if parts else "no model is measured yet")

    def effective_depths(self) -> dict:
        from .. import anchors
        return {m: anchors.effective_depth(r) for m, r in self.anchor_records.items()}

    def hu_table(self) -> Table:
        rows = []
        eds = self.effective_depths()
        for m, rec in self.anchor_records.items():
            ed = eds[m]
            rows.append([m, str(rec["n_layer"]), "no crossing" if ed is None else str(ed.ed),
                         "--" if ed is None else f"{ed.ratio:.2f}"])
        return Table.of(["model", "blocks L", "effective depth (0-based)", "ratio (ED + 1) / L"], rows)

    def published_hu(self) -> Table:
        from .. import anchors
        rows = [[m, str(L), ds, str(ed), f"{(ed + 1) / L:.2f}"] for m, L, ds, ed in anchors.HU_COSINE_ED]
        return Table.of(["model (Hu et al.)", "L", "data", "ED", "ratio"], rows)

    def identity_table(self) -> Table:
        rows = []
        for m, rec in self.anchor_records.items():
            idn = rec["identity"]
            n_small = int(np.sum(idn["n_small"]))
            total = idn["n_tokens"] * len(idn["n_small"])
            lead = [v for v in idn["lead_rel_err_mean"] if v is not None]
            rows.append([m, f"{max(idn['max_rel_err']):.1e}", f"{n_small} of {total}",
                         f"{max(idn['max_over_bound']):.2f}", "--" if not lead else f"{np.median(lead):.3f}"])
        return Table.of(["model", "largest relative error of the exact form, over every token and block",
                         "tokens with r~ <= 1/2", "largest remainder / bound there",
                         "median over blocks of the leading order's mean relative error there"], rows)

    def anchors_table(self) -> Table:
        """One row per anchor: its metric, what it publishes, the theorem's value at each Pre-LN
        model's depth and the book's on that model (Chapter 9's records, 95 % t intervals over
        sequences; Hu et al.'s from ``results/anchors``)."""
        from .. import anchors
        models = [m for m in ANCHOR_MODELS if any(r.model == m for r in self.rows) or m in self.anchor_records]
        header = ["anchor", "metric", "published", "the theorem"] + [ANCHOR_MODELS[m] for m in models]
        out = []
        for key, anchor in anchors.ANCHORS.items():
            rows = {r.model: r for r in self.rows if r.anchor == key}
            if key == "hu":
                vals = [p.value for p in anchor.published]
                published = f"Qwen2.5 1.5B to 32B: {min(vals):.2f} to {max(vals):.2f} ({len(vals)} figures)"
                theorem = "undefined (its cosines are 0)"
                eds = self.effective_depths()
                book = ["not measured" if m not in eds else "no crossing" if eds[m] is None
                        else f"{eds[m].ratio:.2f} (ED {eds[m].ed} of {eds[m].L})" for m in models]
            else:
                published = "; ".join(f"{p.model}: {'none readable' if p.value is None else f'{p.value:.3g}'}"
                                      for p in anchor.published)
                theorem = "; ".join(f"{ANCHOR_MODELS[m]} {rows[m].theorem['shakespeare']:.2f}"
                                    for m in models if m in rows)
                book = [f"{rows[m].book['shakespeare']:.3g}" if m in rows else "not measured" for m in models]
                if key == "liu":       # "uniform and small": the ratio says uniform, the mean angle small
                    book = [b if m not in self.mean_theta else f"{b}; mean {self.mean_theta[m].mean:.2f} rad"
                            for b, m in zip(book, models)]
            out.append([f"{anchor.paper.split(',')[0]} ({anchor.arxiv})", anchor.metric.replace("|", "\\|"),
                        published, theorem, *book])
        return Table.of(header, out)

    def glues(self) -> dict:
        g = {"intervention_departure_table": self.departure_table(), "intervention_hu_table": self.hu_table(),
             "intervention_hu_published": self.published_hu(), "intervention_identity_table": self.identity_table(),
             "intervention_anchors_table": self.anchors_table(),
             "intervention_departure_level": round(100 * DEPARTURE_LEVEL)}
        for dp in self.departures:
            g[f"intervention_reading_{dp.key}_{'quarter' if dp.alpha < 1 else 'two'}"] = self.reading(dp.key, dp.alpha)
        for key in I.MODELS:
            g[f"intervention_words_{key}"] = self.model_words(key)
        g["intervention_family_words"] = self.family_words()
        g["intervention_loss_words"] = self.loss_words()
        g["intervention_k0_words"] = self.k0_words()
        g["intervention_csordas_words"] = self.csordas_words()
        g["intervention_hu_words"] = self.hu_words()
        g["intervention_lean_words"] = self.lean_words()
        g["intervention_sizes_words"] = self.sizes_words()
        g["intervention_sizes_table"] = self.sizes_table()
        g["intervention_sizes_change"] = self.sizes_change_words()
        return g


def beside(root, result: InterventionResult | None = None) -> BesideResult:
    """Chapter 9b's described readings (no rule reads them) from the stored predictions and
    records (``results/predictions/intervention.json``, ``results/intervention``,
    ``results/pretrained`` and ``results/anchors`` under the book's folder ``root``);
    ``result``: the chapter's :func:`chapter` of the same ``root``, when already computed."""
    from .. import anchors, pretrained_analysis
    root = book_root(root)
    path = root / I.PREDICTIONS
    pred = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"models": {}}
    records = {k: v for k, v in pretrained_analysis.load_records(root / "results" / "pretrained").items()
               if k[1] == "shakespeare"}
    # the 1.5B's record lies apart (results/pretrained_large): Chapter 9 reads results/pretrained whole
    large = root / LARGE_RECORDS
    records.update({k: v for k, v in (pretrained_analysis.load_records(large) if large.is_dir() else {}).items()
                    if k[1] == "shakespeare"})
    sizes = tuple(size_reading(m, records[m, "shakespeare"]) for m in SIZES if (m, "shakespeare") in records)
    theta = {m: v["liu_mean_theta"] for (m, _), v in anchors.book_values(records).items()} if records else {}
    return BesideResult(_departures(root, pred), tuple(anchors.table(records)) if records else (),
                        anchors.read_records(root),
                        (chapter(root) if result is None else result).readings, sizes, theta)
