"""Chapter 9's measurement of a pretrained model on a text, stored, and the analysis of it.

:func:`measure_model` runs one packaged model on one of the book's texts and returns a
JSON-ready record: the per-sequence layer metrics (:func:`resdecay_lib.nn.probe.layer_change`),
the change seen through the model's own RMSNorm with and without its gains
(:func:`resdecay_lib.nn.probe.rms_change`), the Gram matrix of the summands (for rho), Gromov's
angular distances, the skip cost of every block and, when asked, the pruning curve of every
ranking (:mod:`resdecay_lib.analysis.pruning`). ``python -m resdecay_lib record MODEL``
(:mod:`resdecay_lib.cli.record`) writes it under ``results/pretrained/`` atomically, with its
provenance, and skips a finished file.

:func:`measure_stream` is the record's ``stream`` section, what Chapter 9 reads besides: the
change of every sublayer step (``probe.measure_sublayers``), for Post-LN MiniLM the change
of the stream itself, and, for the models of :data:`ROUND_TRIPS`, the change after a 4-bit
round-trip of the weights (``quantise.quantize_q4_1_``) with how far the weights moved.
``record MODEL --only stream`` adds it to a finished record without re-running the
skip and pruning costs.

The analysis functions read such a record (or a live :class:`~resdecay_lib.nn.probe.LayerChange`):
:func:`exponent_report` (the power-law exponent of the change with its fit-range
sensitivity, its curvature test over sequences and the theorem's exponent over the same range
in the convention rho picks) and :func:`norm_growth` (the stream's growth factor per block).
"""
from __future__ import annotations

import json
import numbers
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import pruning
from ..stats import fit
from ..nn import pretrained
from ..nn import probe
from . import training_analysis
from ..stats import inference as stats
from ..checks import Name, PathArg, accepts, check_in_file, check_int, check_real, one_line, path_kind, show
from ..stats.exponents import FRONT_BLOCKS, TAIL_BLOCKS, Exponent
from ..stats.fit import loglog_slope

# measure_stream is public (the record command and Chapter 9's live check call it) but not yet
# listed: the whole-library fuzz asks every listed function for declared domains and an example
__all__ = ["TEXTS", "GPT2_XL_GROWTH", "ROUND_TRIPS", "STREAM_FIELDS", "book_text", "measure_model", "measure_stream",
           "PRETRAINED_SCHEMA", "PretrainedRecord", "StreamSection", "QuantisedChange",
           "store_path", "load_record", "load_records", "exponent_report", "ExponentReport",
           "norm_growth", "K_MINS", "output_variance_exponent", "output_flattening"]

#: the two texts of Chapter 9, by short name
TEXTS = {"shakespeare": "Shakespeare (validation)", "pydoc": "pydoc topics"}
#: fit starts of the sensitivity (the issue's k_min = 2, 3, 4)
K_MINS = (2, 3, 4)
#: the literature's figure beside :func:`norm_growth`: the residual stream's norm grows about
#: 1.045 times per layer in GPT-2 XL (Heimersheim & Turner 2023, averaged over prompts)
GPT2_XL_GROWTH = 1.045
#: the models whose ``stream`` section holds a Q4_1 round-trip, and its block offset: MiniLM's
#: float32 weights quantised once (offset 0, ggml's grid); SmolLM2's weights, already Q4_1 in
#: its GGUF file, quantised again on blocks shifted by half a block (16 of 32 columns), a grid
#: they were not fitted to (``quantise.q4_1_roundtrip``)
ROUND_TRIPS = {"all-minilm-l6": 0, "smollm2-135m": 16}
#: the fields of a record's ``stream`` section that :func:`measure_stream` measures and the
#: store keeps (its ``change`` and ``rms_change*`` repeat the record's own, for a re-check)
STREAM_FIELDS = ("sublayer_omega_sq", "raw_change", "quantised")
#: version of a stored record's layout: 2 writes it; 1 is the same layout without the field (the
#: records made before it was written), read by :func:`load_record`'s converter
PRETRAINED_SCHEMA = 2


@dataclass(frozen=True, eq=False)
class QuantisedChange:
    """A ``stream`` section's 4-bit round-trip (:data:`ROUND_TRIPS`): the ``format`` ("q4_1"),
    the block ``offset``, ``relative_weight_change`` (sqrt(sum ||W_q - W||_F^2 / sum ||W||_F^2)
    over the weight matrices) and the per-block change after it, ``omega_sq`` [n_seq, L]."""
    format: str
    offset: int
    relative_weight_change: float
    omega_sq: np.ndarray


@dataclass(frozen=True, eq=False)
class StreamSection:
    """What one pass at sublayer granularity adds to a record (:func:`measure_stream`):
    ``sublayer_omega_sq`` [n_seq, 2L] (step 2k-1 block k's attention, 2k its MLP),
    ``raw_change`` [n_seq, L] (Post-LN: the change of the stream itself), ``quantised``
    (:class:`QuantisedChange`) and the pass's ``provenance``; None where the model has none."""
    sublayer_omega_sq: np.ndarray
    raw_change: np.ndarray | None = None
    quantised: QuantisedChange | None = None
    provenance: dict | None = None

    @property
    def present(self) -> set:
        """The names of :data:`STREAM_FIELDS` this section holds."""
        return {f for f in STREAM_FIELDS if getattr(self, f) is not None}


@dataclass(frozen=True, eq=False)
class PretrainedRecord:
    """One model measured on one text (:func:`measure_model`'s record, read by :func:`load_record`;
    fields as ``results/pretrained/README.md`` lists them). ``change``: {metric: [n_seq, L]}
    (:data:`resdecay_lib.nn.probe.LayerChange.METRICS`); ``gram``, ``angular_distances``
    [L+1, L+1]; ``rms_change``, ``rms_change_gain`` [n_seq, L] (Pre-LN models; else None);
    ``skip`` and each ``prune[ranking]``: :class:`~resdecay_lib.analysis.pruning.RemovalCost`
    (``prune`` None for a text measured without the pruning curves); ``stream``:
    :class:`StreamSection` or None; ``provenance``: where and how it was measured."""
    model: str
    n_layer: int
    cost_kind: str
    change: dict
    gram: np.ndarray
    skip: pruning.RemovalCost
    schema: int = PRETRAINED_SCHEMA
    text: str | None = None
    d_model: int | None = None
    n_seq: int | None = None
    n_tokens: int | None = None
    placement: str | None = None
    source: str | None = None
    note: str | None = None
    angular_distances: np.ndarray | None = None
    rms_change: np.ndarray | None = None
    rms_change_gain: np.ndarray | None = None
    prune: dict | None = None
    stream: StreamSection | None = None
    provenance: dict | None = None

    @classmethod
    def from_dict(cls, d) -> "PretrainedRecord":
        """A record's JSON object, checked (``ValueError`` naming the field: :func:`_check_record`)
        and read, arrays as numpy arrays and costs as
        :class:`~resdecay_lib.analysis.pruning.RemovalCost`; what :func:`load_record` does with a
        file's. Schema 1 (no ``schema`` field) has schema 2's layout and is read as it is;
        ``schema`` says which it was."""
        _check_record(d)
        arr = (lambda v: None if v is None else np.asarray(v, float))
        kind, L = d["cost_kind"], d["n_layer"]
        skip = pruning.RemovalCost(kind, tuple((k,) for k in range(1, L + 1)), arr(d["skip"]["base"]),
                                   arr(d["skip"]["value"]))
        prune = None
        if "prune" in d:
            prune = {name: pruning.RemovalCost(kind, tuple(tuple(t) for t in p["sets"]), skip.base, arr(p["value"]))
                     for name, p in d["prune"].items()}
        stream = None
        if "stream" in d:
            st, q = d["stream"], d["stream"].get("quantised")
            stream = StreamSection(arr(st["sublayer_omega_sq"]), arr(st.get("raw_change")),
                                   None if q is None else QuantisedChange(q["format"], int(q["offset"]),
                                                                          float(q["relative_weight_change"]),
                                                                          arr(q["omega_sq"])),
                                   st.get("provenance"))
        return cls(model=d["model"], n_layer=int(L), cost_kind=kind, change={m: arr(v) for m, v in d["change"].items()},
                   gram=arr(d["gram"]), skip=skip, schema=d.get("schema", 1), text=d.get("text"),
                   d_model=d.get("d_model"), n_seq=d.get("n_seq"), n_tokens=d.get("n_tokens"),
                   placement=d.get("placement"), source=d.get("source"), note=d.get("note"),
                   angular_distances=arr(d.get("angular_distances")), rms_change=arr(d.get("rms_change")),
                   rms_change_gain=arr(d.get("rms_change_gain")), prune=prune, stream=stream,
                   provenance=d.get("provenance"))


def book_text(name: str) -> str:
    """The text ``name`` of :data:`TEXTS`: the validation split of the training corpus, or the
    standard library's pydoc topics."""
    from ..training import data
    if name == "shakespeare":
        corpus = data.shakespeare_text()
        return corpus[int(round(len(corpus) * (1 - data.VAL_FRACTION))):]
    if name == "pydoc":
        return data.pydoc_text()
    raise ValueError(f"text must be one of {sorted(TEXTS)}, got {name!r}")


def _per_seq(ch) -> dict:
    return {m: np.asarray(ch.per_sequence[m]).tolist() for m in probe.LayerChange.METRICS}


def measure_model(pre, text: str, n_seq: int = 16, n_tokens: int = 128, prune: bool = False,
                  batch_size: int = 8, progress: bool = False) -> dict:
    """Everything Chapter 9 reads about one model on one text (see the module docstring).

    Pruning curves (``prune``) remove n = 1..floor(L/2) blocks by each ranking, read from
    this text's intact stream.
    """
    check_int("n_seq", n_seq, 2, 100_000)
    inputs, mask = pretrained.sample_inputs(pre.tokenizer, text, n_seq, n_tokens)
    stream, ch = probe.measure(pre.body, inputs, mask, blocks=pre.blocks, batch_size=batch_size,
                               progress=progress, desc=pre.name)
    keep = mask.bool()
    tokens = stream[:, keep]                                    # [L+1, N, D]: text tokens only
    rec = {"schema": PRETRAINED_SCHEMA, "model": pre.name, "n_layer": pre.n_layer, "d_model": pre.d_model,
           "placement": pre.placement, "note": pre.note, "source": pre.source,
           "n_seq": int(ch.n_sequences), "n_tokens": int(n_tokens),
           "change": _per_seq(ch), "gram": probe.gram(tokens).tolist(),
           "angular_distances": probe.angular_distances(stream, mask).tolist()}
    try:
        gains = pruning.reader_gains(pre)
    except ValueError:
        gains = None                      # Post-LN: the blocks read the stream itself
    if gains is not None:
        eps = float(getattr(pre.model.config, "rms_norm_eps", 1e-6))
        rec["rms_change"] = probe.rms_change(stream, None, mask, eps).per_sequence.tolist()
        rec["rms_change_gain"] = probe.rms_change(stream, gains, mask, eps).per_sequence.tolist()
    del stream, tokens
    kind = pruning.cost_kind(pre)
    skip = pruning.skip_costs(pre, inputs, mask, batch_size, progress)
    rec["cost_kind"] = kind
    rec["skip"] = {"base": skip.base.tolist(), "value": skip.value.tolist()}
    if prune:
        n_max = pre.n_layer // 2
        scores = pruning.ranking_scores(ch)
        sets = {name: pruning.nested_sets(s.mean(0), n_max) for name, s in scores.items()
                if name != "angular"}
        sets["angular"] = pruning.gromov_sets(np.asarray(rec["angular_distances"]), n_max)
        rec["prune"] = {}
        for name in pruning.RANKINGS:
            c = pruning.removal_costs(pre, inputs, mask, sets[name], batch_size, progress)
            rec["prune"][name] = {"sets": [list(s) for s in c.sets], "value": c.value.tolist()}
    return rec


def measure_stream(pre, text: str, n_seq: int = 16, n_tokens: int = 128, round_trip: int | None = None,
                   batch_size: int = 8) -> dict:
    """What Chapter 9 reads of ``pre`` on ``text`` besides :func:`measure_model`'s record, from one
    pass at sublayer granularity (the inputs are :func:`measure_model`'s: the same
    ``pretrained.sample_inputs``, the same batches):

    * ``sublayer_omega_sq`` [n_seq, 2L]: the change of each residual addition,
      (1/d) |LN0(x') - LN0(x)|^2, step 2k-1 block k's attention step and step 2k its MLP step
      (``probe.measure_sublayers``);
    * ``change`` {metric: [n_seq, L]}: the per-block metrics of the same pass's block stream
      (``probe.layer_change``), and ``rms_change``, ``rms_change_gain`` [n_seq, L] through the
      model's RMSNorm (decoders), or ``raw_change`` [n_seq, L], (1/d) |x_{k+1} - x_k|^2, the
      change of what Post-LN blocks read (``probe.rms_change(..., normalise=False)``);
    * with ``round_trip`` (a block offset, :data:`ROUND_TRIPS`): ``quantised`` {``format``:
      "q4_1", ``offset``, ``relative_weight_change``: sqrt(sum |W_q - W|_F^2 / sum |W|_F^2) over
      the weight matrices (``quantise.relative_weight_change``), ``omega_sq`` [n_seq, L]: the
      per-block change after every linear and embedding weight's Q4_1 round-trip
      (``quantise.quantize_q4_1_``, then ``probe.measure``)}. The weights are quantised in place
      and restored, bit for bit, before this returns.

    Lists, JSON-ready; :data:`STREAM_FIELDS` are what a record's ``stream`` section keeps."""
    from ..nn import quantise
    check_int("n_seq", n_seq, 2, 100_000)
    check_int("batch_size", batch_size, 1, 100_000)
    if round_trip is not None:
        check_int("round_trip", round_trip, 0, 1_000_000)
    inputs, mask = pretrained.sample_inputs(pre.tokenizer, text, n_seq, n_tokens)
    sub_stream, sub = probe.measure_sublayers(pre.body, inputs, mask, pre.blocks,
                                              [pretrained.sublayer_points(b) for b in pre.blocks],
                                              batch_size=batch_size)
    stream = sub_stream.block_inputs                           # [L+1, B, T, D]
    out = {"sublayer_omega_sq": np.asarray(sub.per_sequence["omega_sq"]).tolist(),
           "change": _per_seq(probe.layer_change(stream, mask=mask))}
    try:
        gains = pruning.reader_gains(pre)
    except ValueError:
        gains = None                                           # Post-LN: the blocks read x_k itself
    if gains is not None:
        eps = float(getattr(pre.model.config, "rms_norm_eps", 1e-6))
        out["rms_change"] = probe.rms_change(stream, None, mask, eps).per_sequence.tolist()
        out["rms_change_gain"] = probe.rms_change(stream, gains, mask, eps).per_sequence.tolist()
    else:
        out["raw_change"] = probe.rms_change(stream, None, mask, normalise=False).per_sequence.tolist()
    del sub_stream, stream
    if round_trip is not None:
        before = {n: p.detach().clone() for n, p in pre.model.named_parameters() if p.dim() == 2}
        try:
            quantise.quantize_q4_1_(pre.model, offset=round_trip)
            err = quantise.relative_weight_change(pre.model, before)
            _, q = probe.measure(pre.body, inputs, mask, blocks=pre.blocks, batch_size=batch_size)
        finally:                                               # the caller's model as it came
            import torch
            with torch.no_grad():
                for n, p in pre.model.named_parameters():
                    if n in before:
                        p.copy_(before[n])
        out["quantised"] = {"format": "q4_1", "offset": int(round_trip), "relative_weight_change": float(err),
                            "omega_sq": np.asarray(q.per_sequence["omega_sq"]).tolist()}
    return out


# ----------------------------------------------------------------------------- the store

#: a model's or a text's name in the store: a plain file name without "__" (which separates
#: the two in ``<model>__<text>.json``), so a record stays inside its root and reads back
_STORE_NAME = Name(forbid=("__",))


@accepts(root=PathArg(), model=_STORE_NAME, text=_STORE_NAME)
def store_path(root, model: str, text: str) -> Path:
    """``<root>/<model>__<text>.json``, the stored record of ``model`` on ``text``."""
    return Path(root) / f"{model}__{text}.json"


class _BadRecord(ValueError):
    pass


def _array(key, value, shape, finite=True):
    """``value`` as a float array of ``shape`` (None: any length on that axis), or _BadRecord naming ``key``."""
    try:
        a = np.asarray(value, float)
    except (TypeError, ValueError):
        raise _BadRecord(f"{key} must be an array of numbers of shape {list(shape)}, got {show(value)}") from None
    if a.ndim != len(shape) or any(n is not None and m != n for m, n in zip(a.shape, shape)) or 0 in a.shape:
        raise _BadRecord(f"{key} must be an array of shape {[('n' if n is None else n) for n in shape]}, "
                         f"got shape {list(a.shape)}")
    if finite and not np.all(np.isfinite(a)):
        raise _BadRecord(f"{key} must hold finite numbers, got NaN or an infinity")
    return a


def _check_record(rec) -> None:
    """The fields :func:`load_record` and Chapter 9 read, each checked (:class:`_BadRecord` naming it)."""
    if not isinstance(rec, dict):
        raise _BadRecord(f"it must be a JSON object (a record of measure_model), got {type(rec).__name__}")
    if rec.get("schema", 1) not in (1, PRETRAINED_SCHEMA) or isinstance(rec.get("schema"), bool):
        raise _BadRecord(f"schema must be {PRETRAINED_SCHEMA} (or absent: 1, the same layout), got "
                         f"{show(rec.get('schema'))}")
    for key in ("model", "n_layer", "cost_kind", "change", "gram", "skip"):
        if key not in rec:
            raise _BadRecord(f"it lacks the field {key!r}")
    if not isinstance(rec["model"], str) or not rec["model"].strip():
        raise _BadRecord(f"model must be a non-empty str, got {show(rec['model'])}")
    L = rec["n_layer"]
    if isinstance(L, bool) or not isinstance(L, numbers.Integral) or L < 1:
        raise _BadRecord(f"n_layer must be an integer >= 1, got {show(L)}")
    if not isinstance(rec["cost_kind"], str) or rec["cost_kind"] not in pruning.COSTS:
        raise _BadRecord(f"cost_kind must be one of {sorted(pruning.COSTS)}, got {show(rec['cost_kind'])}")
    for key in ("d_model", "n_seq", "n_tokens"):       # sizes Chapter 9 prints: integers when present
        v = rec.get(key)
        if key in rec and (isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1):
            raise _BadRecord(f"{key} must be an integer >= 1, got {show(v)}")
    for key in ("text", "placement", "source", "note"):
        if key in rec and not isinstance(rec[key], str):
            raise _BadRecord(f"{key} must be a str, got {show(rec[key])}")
    if "provenance" in rec and not isinstance(rec["provenance"], dict):
        raise _BadRecord(f"provenance must be a dict, got {show(rec['provenance'])}")
    ch = rec["change"]
    if not isinstance(ch, dict) or set(probe.LayerChange.METRICS) - set(ch):
        raise _BadRecord(f"change must be a dict holding the metrics {list(probe.LayerChange.METRICS)}, got "
                         f"{show(sorted(ch) if isinstance(ch, dict) else ch)}")
    B = None
    for m, v in ch.items():
        B = _array(f"change.{m}", v, (B, L)).shape[0]
    _array("gram", rec["gram"], (L + 1, L + 1))
    if "angular_distances" in rec:
        _array("angular_distances", rec["angular_distances"], (L + 1, L + 1))
    for key in ("rms_change", "rms_change_gain"):
        if key in rec:
            _array(key, rec[key], (B, L))
    sk = rec["skip"]
    if not isinstance(sk, dict) or "base" not in sk or "value" not in sk:
        raise _BadRecord(f"skip must be a dict {{base, value}}, got {show(sk)}")
    _array("skip.base", sk["base"], (B,))
    _array("skip.value", sk["value"], (L, B))
    if "prune" in rec:
        if not isinstance(rec["prune"], dict):
            raise _BadRecord(f"prune must be a dict {{ranking: {{sets, value}}}}, got {show(rec['prune'])}")
        for name, p in rec["prune"].items():
            sets = p.get("sets") if isinstance(p, dict) else None
            if not isinstance(sets, list) or not sets or not all(
                    isinstance(t, list) and t and all(isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= L
                                                      for k in t) for t in sets):
                raise _BadRecord(f"prune.{name}.sets must be a non-empty list of non-empty lists of blocks "
                                 f"in 1..{L}, got {show(sets if isinstance(p, dict) else p)}")
            _array(f"prune.{name}.value", p.get("value"), (len(sets), B))
    if "stream" in rec:
        _check_stream(rec["stream"], B, L)


def _check_stream(st, B, L) -> None:
    """A record's ``stream`` section (:func:`measure_stream`'s :data:`STREAM_FIELDS`, and its provenance)."""
    if not isinstance(st, dict) or "sublayer_omega_sq" not in st:
        raise _BadRecord(f"stream must be a dict holding sublayer_omega_sq (record --only stream's), "
                         f"got {show(sorted(st) if isinstance(st, dict) else st)}")
    _array("stream.sublayer_omega_sq", st["sublayer_omega_sq"], (B, 2 * L))
    if "raw_change" in st:
        _array("stream.raw_change", st["raw_change"], (B, L))
    if "quantised" in st:
        q = st["quantised"]
        if not isinstance(q, dict) or {"format", "offset", "relative_weight_change", "omega_sq"} - set(q):
            raise _BadRecord(f"stream.quantised must be a dict {{format, offset, relative_weight_change, omega_sq}}, "
                             f"got {show(sorted(q) if isinstance(q, dict) else q)}")
        if q["format"] != "q4_1":
            raise _BadRecord(f"stream.quantised.format must be 'q4_1', got {show(q['format'])}")
        off = q["offset"]
        if isinstance(off, bool) or not isinstance(off, numbers.Integral) or off < 0:
            raise _BadRecord(f"stream.quantised.offset must be an integer >= 0, got {show(off)}")
        err = q["relative_weight_change"]
        if isinstance(err, bool) or not isinstance(err, numbers.Real) or not np.isfinite(err) or err < 0:
            raise _BadRecord(f"stream.quantised.relative_weight_change must be a finite number >= 0, got {show(err)}")
        _array("stream.quantised.omega_sq", q["omega_sq"], (B, L))
    if "provenance" in st and not isinstance(st["provenance"], dict):
        raise _BadRecord(f"stream.provenance must be a dict, got {show(st['provenance'])}")


@accepts(path=PathArg())
def load_record(path) -> PretrainedRecord:
    """One stored record (:func:`measure_model`'s, as ``results/pretrained/`` holds them), read as a
    :class:`PretrainedRecord`: its arrays as numpy arrays, its costs as
    :class:`~resdecay_lib.analysis.pruning.RemovalCost`.

    ``path`` must name a regular file (:func:`resdecay_lib.checks.check_in_file`: a folder, a FIFO,
    a device or an ``int`` is refused before anything is opened). The fields read here and by
    Chapter 9 are checked before use, and a record that lacks one or holds the wrong type or
    shape (``schema`` :data:`PRETRAINED_SCHEMA`, or absent: schema 1, the same layout, which the
    converter reads as it is; ``model`` a str, ``n_layer`` an integer >= 1, ``cost_kind`` one of
    ``pruning.COSTS``, ``change`` every metric [n_seq, L], ``gram`` and
    ``angular_distances`` [L+1, L+1], ``rms_change`` [n_seq, L], ``skip`` {base [n_seq], value
    [L, n_seq]}, ``prune`` {ranking: {sets of blocks in 1..L, value [n_sets, n_seq]}}, the
    optional ``stream`` section {``sublayer_omega_sq`` [n_seq, 2L], ``raw_change`` [n_seq, L],
    ``quantised`` {format "q4_1", offset an integer >= 0, relative_weight_change >= 0,
    omega_sq [n_seq, L]}}, all finite) raises ``ValueError`` naming the path and the field. Nothing is moved or written."""
    path = check_in_file("path", path)
    try:
        rec = PretrainedRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        why = str(exc) if isinstance(exc, _BadRecord) else f"it is not JSON ({type(exc).__name__}: {one_line(exc)[:200]})"
        raise ValueError(f"path {str(path)!r} is not a usable pretrained record: {why}") from None
    return rec


@accepts(root=PathArg())
def load_records(root) -> dict:
    """{(model, text): record} of every finished record under ``root`` (``<model>__<text>.json``,
    each read by :func:`load_record`; a record whose ``model`` or ``text`` is not the one its
    name says raises ``ValueError`` naming it). A missing ``root`` holds none ({}); a file, a
    FIFO or anything but a folder at ``root`` raises ``ValueError`` naming ``root``."""
    kind = path_kind(Path(root))
    if kind is None:
        for parent in Path(root).parents:           # under a file nothing can ever be: say so
            above = path_kind(parent)
            if above is not None:
                if above != "the folder":
                    raise ValueError(f"root must be a folder of stored records, got a path under {above} "
                                     f"{str(parent)!r}")
                break
        return {}
    if kind != "the folder":
        raise ValueError(f"root must be a folder of stored records, got {kind} {str(root)!r}")
    out = {}
    for path in sorted(Path(root).glob("*__*.json")):
        parts = path.stem.split("__")
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"root holds {path.name!r}, named like a record but not <model>__<text>.json")
        model, text = parts
        rec = load_record(path)
        said = text if rec.text is None else rec.text
        if rec.model != model or said != text:
            raise ValueError(f"path {str(path)!r} holds the record of {rec.model!r} on {said!r}, not the one its "
                             f"name says")
        out[model, text] = rec
    return out


# ----------------------------------------------------------------------------- analysis

@dataclass(frozen=True)
class ExponentReport:
    """The exponent of a per-sequence curve [B, L] over k = k_min..L for each k_min of
    :data:`K_MINS` (``fits`` {k_min: :class:`~resdecay_lib.stats.exponents.Exponent`}, a
    percentile bootstrap over sequences at ``level``, each beside the theorem's exponent over
    its own range in the convention rho picks), its curvature test over sequences
    (:func:`resdecay_lib.analysis.training_analysis.curvature` with sequences as the
    replicates, fit range from ``K_MINS[0]``), and rho and the convention it picks."""
    fits: dict
    curvature: dict
    rho: float
    embedding_counted: bool

    @property
    def main(self):
        return self.fits[K_MINS[0]]

    @property
    def range_shift(self) -> float:
        """Largest |exponent(k_min) - exponent(2)| over k_min = 3, 4."""
        return max(abs(f.exponent - self.main.exponent) for f in self.fits.values())


def exponent_report(per_sequence, gram, level: float = 0.95, n_boot: int = 2000,
                    seed: int = 0) -> ExponentReport:
    """:class:`ExponentReport` of ``per_sequence`` [B, L] with the summands' ``gram`` [L+1, L+1]."""
    y = np.asarray(per_sequence, float)
    if y.ndim != 2 or y.shape[1] < max(K_MINS) + 2:
        raise ValueError(f"per_sequence must be [B, L] with L >= {max(K_MINS) + 2}, got shape {y.shape}")
    L = y.shape[1]
    k = np.arange(1, L + 1)
    r = training_analysis.rho(gram)
    emb = training_analysis.convention(r)
    fits = {}
    for m in K_MINS:
        f = fit.power_law(k, y, k_min=m, n_boot=n_boot, level=level, seed=seed)
        fits[m] = Exponent(exponent=f.exponent, lo=f.lo, hi=f.hi, level=level,
                           reference=training_analysis.reference_exponent(m, L, emb), embedding_counted=emb, rho=r,
                           k_min=f.k_min, k_max=f.k_max, n=y.shape[0], over="sequences", fit=f)
    return ExponentReport(fits, training_analysis.curvature(y, K_MINS[0], level), r, emb)


def norm_growth(norm_per_sequence, k_min: int = 2, level: float = 0.95) -> stats.TInterval:
    """Growth factor of the stream norm per block: exp of the per-sequence least-squares
    slope of log |x_k| on k over k = k_min..L, a t interval over sequences (exponentiated).
    Heimersheim & Turner (2023) report about :data:`GPT2_XL_GROWTH` per layer for GPT-2 XL."""
    y = np.log(np.asarray(norm_per_sequence, float))
    if y.ndim != 2 or y.shape[1] - k_min < 1:
        raise ValueError(f"norm_per_sequence must be [B, L] with at least two blocks from k_min, got {y.shape}")
    k = np.arange(1, y.shape[1] + 1)[k_min - 1:]
    kc = k - k.mean()
    slopes = (y[:, k_min - 1:] - y[:, k_min - 1:].mean(1, keepdims=True)) @ kc / (kc @ kc)
    iv = stats.t_interval(slopes, level)
    return stats.TInterval(float(np.exp(iv.mean)), float(np.exp(iv.lo)), float(np.exp(iv.hi)),
                           iv.se, iv.t, iv.n, iv.level)


def output_variance_exponent(rel_update, norm, front: int | None = None, tail: int | None = None,
                             n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """Slope of log s_k^2 on log k, s_k^2 the mean over sequences of |f_k|^2 = (r_k |x_k|)^2 (block
    k's output), over k = front + 1..L - tail (:func:`resdecay_lib.analysis.training_analysis.block_variance_exponent`'s
    range), with a percentile bootstrap interval over sequences: (slope, lo, hi). ``rel_update``
    and ``norm``: per-sequence r_k and |x_k|, [B, L]."""
    front = FRONT_BLOCKS if front is None else front
    tail = TAIL_BLOCKS if tail is None else tail
    r = np.asarray(rel_update, float)
    x = np.asarray(norm, float)
    if r.ndim != 2 or r.shape != x.shape:
        raise ValueError(f"rel_update and norm must be [B, L] of one shape, got {r.shape} and {x.shape}")
    if not (np.all(np.isfinite(r)) and np.all(np.isfinite(x)) and np.all(r > 0) and np.all(x > 0)):
        raise ValueError("rel_update and norm must be positive and finite")
    B, L = r.shape
    if L - front - tail < 3:
        raise ValueError(f"the fit needs 3 blocks past the front and before the tail: L = {L}")
    f2 = (r * x) ** 2
    k = np.arange(front + 1, L - tail + 1)
    sel = slice(front, L - tail)
    slope = lambda rows: loglog_slope(k, f2[rows][:, sel].mean(0))[0]   # noqa: E731
    rng = np.random.default_rng(seed)
    boot = np.array([slope(rng.integers(0, B, size=B)) for _ in range(n_boot)])
    a = (1 - level) / 2
    lo, hi = np.quantile(boot, [a, 1 - a])
    return float(slope(np.arange(B))), float(lo), float(hi)


def output_flattening(rel_update, norm, embedding_counted: bool, front: int | None = None, tail: int | None = None,
                      n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """:func:`resdecay_lib.analysis.training_analysis.flattening` of a real model's summands, with a
    percentile bootstrap interval over sequences: (value, lo, hi). The summands' mean square norms
    are the embedding's, |x_1|^2, and block k's output's, |f_k|^2 = (r_k |x_k|)^2, averaged over
    the sequences drawn; ``rel_update`` and ``norm``: per-sequence r_k and |x_k|, [B, L];
    ``embedding_counted``: the convention the model's rho chooses."""
    r = np.asarray(rel_update, float)
    x = np.asarray(norm, float)
    if r.ndim != 2 or r.shape != x.shape:
        raise ValueError(f"rel_update and norm must be [B, L] of one shape, got {r.shape} and {x.shape}")
    if not (np.all(np.isfinite(r)) and np.all(np.isfinite(x)) and np.all(r > 0) and np.all(x > 0)):
        raise ValueError("rel_update and norm must be positive and finite")
    check_int("n_boot", n_boot, 100, 1_000_000)
    check_real("level", level, 0, 1, lo_open=True, hi_open=True)
    B = r.shape[0]
    summands = np.concatenate([x[:, :1] ** 2, (r * x) ** 2], axis=1)          # [B, L + 1]
    value = lambda rows: training_analysis.flattening(summands[rows].mean(0), embedding_counted, front, tail)  # noqa: E731
    rng = np.random.default_rng(seed)
    boot = np.array([value(rng.integers(0, B, size=B)) for _ in range(n_boot)])
    a = (1 - level) / 2
    lo, hi = np.quantile(boot, [a, 1 - a])
    return float(value(np.arange(B))), float(lo), float(hi)

