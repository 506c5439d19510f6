"""A training run's stored result, typed: :class:`RunRecord`, what
:func:`resdecay_lib.training.runs.run_result` writes and the store reads
(:func:`resdecay_lib.training.store.load_run`), with its schema version.

The file is JSON (``results/<sweep>/<arch>_L<depth>_s<seed>.json``); :meth:`RunRecord.from_dict`
reads it, checks every field the analysis reads, and names the first one that is wrong
(``RecordError``: ``run pre_ln_L24_s0: final.val_loss.mean must be a finite number, got
'x'``); :meth:`RunRecord.to_dict` gives the JSON back, key for key. The analysis reads fields
(``r.final.val_loss.mean``, ``r.at_step(400).measure["stream"].gram``), never nested keys.

**Schema.** :data:`RUN_SCHEMA` is 2 (measured through training: checkpoints with the
per-layer metrics and the Gram matrix). A record of another schema is refused, naming the
field ``schema``: schema 1 (the measurement at the last step only) left the store before any
stored run, so no converter reads it.

Torch-free, like the store, so the book reads results where torch is not imported.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields

from ..checks import ArgumentTypeError, show
from .plan import RunPlan, TrainConfig

__all__ = ["RUN_SCHEMA", "RESULT_STATUSES", "PROVENANCE", "RecordError", "as_run", "Estimate", "CurvePoint",
           "StreamMeasure", "Checkpoint", "Ablation", "Final", "Convergence", "RunRecord"]

#: version of the result-file layout (2: measured through training)
RUN_SCHEMA = 2
#: the statuses a stored result may hold (:func:`resdecay_lib.training.runs.run_result`'s):
#: "ok" (finished), "partial" (stopped at ``stop_at``), "non_finite" (diverged: a result too)
RESULT_STATUSES = ("ok", "partial", "non_finite")


class RecordError(ValueError):
    """A stored record that is not what its schema says, naming the record and the field."""


def _real(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Real) and math.isfinite(value)


class _Reader:
    """Reads one record's fields, each error naming the run and the dotted field."""

    def __init__(self, run: str):
        self.run = run

    def fail(self, where: str, what: str, value):
        raise RecordError(f"run {self.run}: {where} must be {what}, got {show(value)}")

    def table(self, d, where: str) -> Mapping:
        if not isinstance(d, Mapping):
            self.fail(where, "a record (a JSON object)", d)
        return d

    def need(self, d: Mapping, key: str, where: str):
        if key not in d:
            raise RecordError(f"run {self.run}: {where}{'.' if where else ''}{key} is missing")
        return d[key]

    def int(self, v, where: str, lo: int = 0) -> int:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
            self.fail(where, f"an integer >= {lo}", v)
        return int(v)

    def number(self, v, where: str, none: bool = False, lo: float | None = None):
        if v is None and none:
            return None
        if not _real(v) or (lo is not None and v < lo):
            self.fail(where, "a finite number" + (f" >= {lo}" if lo is not None else "")
                      + (" (or null)" if none else ""), v)
        return v

    def numbers(self, v, where: str, none: bool = True):
        """A list (of lists) of numbers, kept as stored (JSON's null: a value not measured)."""
        if v is None and none:
            return None
        if not isinstance(v, list):
            self.fail(where, "a list of numbers", v)
        return v


@dataclass(frozen=True)
class Estimate:
    """A loss over windows: ``mean`` and its standard error ``se`` (nats/char; null where a
    diverged run has none), and, for the final validation loss, each window's loss."""
    mean: float | None
    se: float | None = None
    per_window: list | None = None

    @classmethod
    def read(cls, d, where: str, rd: _Reader, need_mean: bool = False) -> "Estimate":
        d = rd.table(d, where)
        # a finished run's loss has a finite mean and se; elsewhere null stands for "none" (diverged)
        mean = rd.number(rd.need(d, "mean", where), f"{where}.mean", none=not need_mean)
        se = rd.number(rd.need(d, "se", where) if need_mean else d.get("se"), f"{where}.se", none=not need_mean,
                       lo=0.0)
        return cls(mean, se, rd.numbers(d.get("per_window"), f"{where}.per_window"))

    def to_dict(self) -> dict:
        """As :func:`resdecay_lib.training.runs.run_result` writes it: ``mean`` and ``se`` always
        (null where there is none), ``per_window`` where it was measured."""
        out = {"mean": self.mean, "se": self.se}
        if self.per_window is not None:
            out["per_window"] = self.per_window
        return out


@dataclass(frozen=True)
class CurvePoint:
    """One point of the validation-loss curve: the step and the loss there (null: diverged)."""
    step: int
    mean: float | None
    se: float | None = None


@dataclass(frozen=True)
class StreamMeasure:
    """One stream's measurement at a checkpoint (:func:`resdecay_lib.nn.probe.measure_zoo`):
    ``metrics[m]`` and ``metrics[m + "_se"]``, [L] lists for the metrics m of
    ``nn.probe.LayerChange.METRICS`` (``influence`` is absent from records made before it was measured);
    ``omega_sq_per_sequence`` [n_seq][L]; ``gram`` [L+1][L+1], the Gram matrix of the summands
    per coordinate (embedding, then each block's output). Every stored run holds all of them; a
    reader of one that is None (a hand-made record) says it is missing."""
    metrics: Mapping
    omega_sq_per_sequence: list | None = None
    gram: list | None = None

    @classmethod
    def read(cls, d, where: str, rd: _Reader) -> "StreamMeasure":
        d = rd.table(d, where)
        per = rd.numbers(d.get("omega_sq_per_sequence"), f"{where}.omega_sq_per_sequence")
        gram = rd.numbers(d.get("gram"), f"{where}.gram")
        metrics = {k: rd.numbers(v, f"{where}.{k}") for k, v in d.items()
                   if k not in ("omega_sq_per_sequence", "gram")}
        return cls(metrics, per, gram)

    @classmethod
    def from_dict(cls, d, where: str = "measure") -> "StreamMeasure":
        """A measurement as :func:`resdecay_lib.nn.probe.measure_zoo` returns it for one part
        (not yet stored), checked as the store checks one."""
        return cls.read(d, where, _Reader("live"))

    def to_dict(self) -> dict:
        return {**self.metrics, **{k: v for k, v in (("omega_sq_per_sequence", self.omega_sq_per_sequence),
                                                     ("gram", self.gram)) if v is not None}}


@dataclass(frozen=True)
class Checkpoint:
    """A measured step: the validation loss there and, per part of the stream (``"stream"``;
    ResiDual's ``"post_ln"`` and ``"dual"``), its :class:`StreamMeasure` (None: not measured)."""
    step: int
    val_loss: Estimate | None = None
    measure: Mapping | None = None

    @classmethod
    def read(cls, d, where: str, rd: _Reader) -> "Checkpoint":
        d = rd.table(d, where)
        step = rd.int(rd.need(d, "step", where), f"{where}.step")
        val = Estimate.read(d["val_loss"], f"{where}.val_loss", rd) if d.get("val_loss") is not None else None
        meas = None
        if d.get("measure") is not None:
            m = rd.table(d["measure"], f"{where}.measure")
            meas = {part: StreamMeasure.read(v, f"{where}.measure.{part}", rd) for part, v in m.items()}
        return cls(step, val, meas)

    def to_dict(self) -> dict:
        out = {"step": self.step}
        if self.val_loss is not None:
            out["val_loss"] = self.val_loss.to_dict()
        if self.measure is not None:
            out["measure"] = {p: m.to_dict() for p, m in self.measure.items()}
        return out


@dataclass(frozen=True)
class Ablation:
    """The loss with each block removed (:func:`resdecay_lib.nn.evaluation.ablation_losses`),
    [L] each: ``loss``, ``delta`` (its increase over the intact model), ``delta_se`` and
    ``delta_per_window`` [L][windows]."""
    delta: list
    delta_se: list
    loss: list | None = None
    delta_per_window: list | None = None


@dataclass(frozen=True)
class Final:
    """After the last step: the validation loss (mean, se, per window), the loss on pydoc (out of
    domain) and the ablation."""
    val_loss: Estimate
    pydoc_loss: Estimate | None = None
    ablation: Ablation | None = None


@dataclass(frozen=True)
class Convergence:
    """:func:`resdecay_lib.training.runs.convergence`'s verdict on the validation-loss curve."""
    met: bool
    diverged: bool
    improvement: float | None = None
    from_step: int | None = None
    criterion: str | None = None


def _plain(obj) -> dict:
    """A record part as JSON, without the fields it does not hold (None)."""
    return {k: v for k, v in asdict(obj).items() if v is not None}


#: the top-level fields of the provenance a result holds (:func:`resdecay_lib.training.runs.provenance`),
#: kept as stored
PROVENANCE = ("code_version", "library_versions", "device", "cpu_model", "cpu_capability", "platform", "threads",
              "seeds", "provenance_backfill", "wall_time_s", "resumed_from_step", "wall_time_complete")


@dataclass(frozen=True)
class RunRecord:
    """One training run's stored result (schema :data:`RUN_SCHEMA`).

    ``name`` (``<arch>_L<depth>_s<seed>``), ``config`` (its :class:`TrainConfig`), ``plan`` (its
    :class:`RunPlan`; None in a hand-made record), ``seed``, ``status`` (one of
    :data:`RESULT_STATUSES`), ``checkpoints`` (the measured steps, :class:`Checkpoint`),
    ``val_curve`` (:class:`CurvePoint` per evaluated step), ``train_loss`` (per step),
    ``final`` (:class:`Final`, a finished run's), ``convergence`` (:class:`Convergence`),
    ``failed_step`` (the step a non-finite loss stopped it at), ``n_params``, ``flops_per_step``,
    ``provenance`` (:data:`PROVENANCE`'s fields, as stored) and ``extra`` (any other top-level
    field, kept as stored, so that nothing is lost when a record is written back)."""
    name: str
    config: TrainConfig
    status: str
    seed: int
    schema: int = RUN_SCHEMA
    plan: RunPlan | None = None
    checkpoints: tuple = ()
    val_curve: tuple = ()
    train_loss: list | None = None
    final: Final | None = None
    convergence: Convergence | None = None
    failed_step: int | None = None
    n_params: int | None = None
    flops_per_step: float | None = None
    provenance: Mapping = field(default_factory=dict)
    extra: Mapping = field(default_factory=dict)

    @property
    def arch(self) -> str:
        return self.config.arch

    @property
    def n_layer(self) -> int:
        return self.config.n_layer

    @property
    def wall_time_s(self) -> float | None:
        """The run's training wall time (s), summed over its resumed segments."""
        return self.provenance.get("wall_time_s")

    @property
    def code_version(self) -> str | None:
        """``git:<commit>`` of the code that trained the run."""
        return self.provenance.get("code_version")

    @property
    def library_versions(self) -> Mapping:
        """{library: version} of the run's Python, torch and NumPy."""
        return self.provenance.get("library_versions", {})

    @property
    def measured_steps(self) -> list:
        """The steps whose checkpoint holds a measurement."""
        return [c.step for c in self.checkpoints if c.measure is not None]

    def at_step(self, step: int) -> Checkpoint:
        """The checkpoint at ``step``; ValueError naming the run and its steps otherwise."""
        for c in self.checkpoints:
            if c.step == step:
                return c
        raise ValueError(f"step must be a step run {self.name} has a checkpoint at "
                         f"({[c.step for c in self.checkpoints]}), got {step}")

    @classmethod
    def from_dict(cls, d) -> "RunRecord":
        """Read a stored result (the JSON object), checking each field; :class:`RecordError`
        names the run and the first wrong field. An object that is not a dict raises
        :class:`ArgumentTypeError`."""
        if not isinstance(d, Mapping):
            raise ArgumentTypeError(f"a stored run result must be a dict (a JSON object), got {type(d).__name__}")
        rd = _Reader(d["name"] if isinstance(d.get("name"), str) else "?")
        schema = rd.need(d, "schema", "")
        if schema != RUN_SCHEMA or isinstance(schema, bool):
            rd.fail("schema", f"{RUN_SCHEMA} (a result measured through training; no converter reads "
                              f"schema {show(schema)})", schema)
        name = rd.need(d, "name", "")
        if not isinstance(name, str) or not name.strip():
            rd.fail("name", "the run's name (a non-empty str)", name)
        status = rd.need(d, "status", "")
        if not isinstance(status, str) or status not in RESULT_STATUSES:
            rd.fail("status", f"one of {list(RESULT_STATUSES)}", status)
        conf = rd.table(rd.need(d, "config", ""), "config")
        for f in fields(TrainConfig):            # every field, as the store writes them: no default read in
            rd.need(conf, f.name, "config")
        try:
            config = TrainConfig.from_dict(dict(conf))
        except (TypeError, ValueError) as exc:
            raise RecordError(f"run {rd.run}: config must hold the TrainConfig fields: {exc}") from None
        plan = None
        if d.get("plan") is not None:
            p = rd.table(d["plan"], "plan")
            ms = rd.need(p, "measure_steps", "plan")
            if not isinstance(ms, list):
                rd.fail("plan.measure_steps", "a list of steps", ms)
            plan = RunPlan(tuple(rd.int(s, f"plan.measure_steps[{i}]") for i, s in enumerate(ms)),
                           rd.int(rd.need(p, "eval_every", "plan"), "plan.eval_every"))
        seed = rd.int(rd.need(d, "seed", ""), "seed")
        if seed != config.seed:
            rd.fail("seed", f"the config's seed {config.seed}", seed)
        # a finished run holds its checkpoints and its curve (a run stopped early may lack them)
        cks = rd.need(d, "checkpoints", "") if status == "ok" else d.get("checkpoints", [])
        if not isinstance(cks, list):
            rd.fail("checkpoints", "a list of checkpoint records", cks)
        checkpoints = tuple(Checkpoint.read(c, f"checkpoints[{i}]", rd) for i, c in enumerate(cks))
        curve = rd.need(d, "val_curve", "") if status == "ok" else d.get("val_curve", [])
        if not isinstance(curve, list):
            rd.fail("val_curve", "a list of step records", curve)
        val_curve = []
        for i, p in enumerate(curve):
            p = rd.table(p, f"val_curve[{i}]")
            val_curve.append(CurvePoint(rd.int(rd.need(p, "step", f"val_curve[{i}]"), f"val_curve[{i}].step"),
                                        rd.number(rd.need(p, "mean", f"val_curve[{i}]"), f"val_curve[{i}].mean",
                                                  none=True),
                                        rd.number(p.get("se"), f"val_curve[{i}].se", none=True, lo=0.0)))
        final = None
        if status == "ok" or d.get("final") is not None:
            f = rd.table(rd.need(d, "final", ""), "final")
            val = Estimate.read(rd.need(f, "val_loss", "final"), "final.val_loss", rd, need_mean=True)
            pydoc = Estimate.read(f["pydoc_loss"], "final.pydoc_loss", rd) if f.get("pydoc_loss") is not None else None
            abl = None
            if f.get("ablation") is not None:
                a = rd.table(f["ablation"], "final.ablation")
                abl = Ablation(rd.numbers(rd.need(a, "delta", "final.ablation"), "final.ablation.delta", none=False),
                               rd.numbers(rd.need(a, "delta_se", "final.ablation"), "final.ablation.delta_se",
                                          none=False),
                               rd.numbers(a.get("loss"), "final.ablation.loss"),
                               rd.numbers(a.get("delta_per_window"), "final.ablation.delta_per_window"))
            final = Final(val, pydoc, abl)
        conv = None
        if status == "ok" or d.get("convergence") is not None:      # run_result writes it for a finished run
            c = rd.table(rd.need(d, "convergence", ""), "convergence")
            met, div = rd.need(c, "met", "convergence"), rd.need(c, "diverged", "convergence")
            for k, v in (("met", met), ("diverged", div)):
                if not isinstance(v, bool):
                    rd.fail(f"convergence.{k}", "true or false", v)
            from_step = c.get("from_step")
            conv = Convergence(met, div, rd.number(c.get("improvement"), "convergence.improvement", none=True),
                               None if from_step is None else rd.int(from_step, "convergence.from_step"),
                               c.get("criterion"))
        failed = None
        if status == "non_finite" or "failed_step" in d:
            failed = rd.int(rd.need(d, "failed_step", ""), "failed_step")
        n_params = None if d.get("n_params") is None else rd.int(d["n_params"], "n_params", 1)
        flops = rd.number(d.get("flops_per_step"), "flops_per_step", none=True, lo=0.0)
        rd.number(d.get("wall_time_s"), "wall_time_s", none=True, lo=0.0)
        train_loss = rd.numbers(d.get("train_loss"), "train_loss")
        return cls(name=name, config=config, status=status, seed=seed, schema=schema, plan=plan,
                   checkpoints=checkpoints, val_curve=tuple(val_curve), train_loss=train_loss,
                   final=final, convergence=conv, failed_step=failed, n_params=n_params, flops_per_step=flops,
                   provenance={k: d[k] for k in PROVENANCE if k in d},
                   extra={k: v for k, v in d.items() if k not in _KNOWN})

    def to_dict(self) -> dict:
        """The stored JSON object: the keys and values :func:`resdecay_lib.training.runs.run_result`
        writes (a record read from a file gives that file's object back; the order of its keys aside)."""
        out = {"schema": self.schema, "name": self.name, "config": asdict(self.config)}
        if self.plan is not None:
            out["plan"] = {"measure_steps": list(self.plan.measure_steps), "eval_every": self.plan.eval_every}
        out["seed"] = self.seed
        out.update(self.provenance)
        for k in ("n_params", "flops_per_step"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        out["status"] = self.status
        if self.failed_step is not None:
            out["failed_step"] = self.failed_step
        out["checkpoints"] = [c.to_dict() for c in self.checkpoints]
        out["val_curve"] = [{"step": p.step, "mean": p.mean, "se": p.se} for p in self.val_curve]
        if self.train_loss is not None:
            out["train_loss"] = self.train_loss
        if self.final is not None:
            out["final"] = {"val_loss": self.final.val_loss.to_dict()}
            if self.final.pydoc_loss is not None:
                out["final"]["pydoc_loss"] = self.final.pydoc_loss.to_dict()
            if self.final.ablation is not None:
                out["final"]["ablation"] = _plain(self.final.ablation)
        if self.convergence is not None:
            out["convergence"] = asdict(self.convergence)       # every field, null included, as written
        out.update(self.extra)
        return out


#: the top-level fields :meth:`RunRecord.from_dict` reads (any other is kept in ``extra``)
_KNOWN = {"schema", "name", "config", "plan", "seed", "status", "checkpoints", "val_curve", "train_loss", "final",
          "convergence", "failed_step", "n_params", "flops_per_step", *PROVENANCE}


def as_run(r, name: str = "r") -> RunRecord:
    """``r`` as a :class:`RunRecord`: itself, or a stored result's dict read by
    :meth:`RunRecord.from_dict` (its fields checked); :class:`ArgumentTypeError` naming ``name``
    for anything else."""
    if isinstance(r, RunRecord):
        return r
    if isinstance(r, Mapping):
        try:
            return RunRecord.from_dict(r)
        except RecordError as exc:
            raise RecordError(f"{name}: {exc}") from None
    raise ArgumentTypeError(f"{name} must be a stored run result (a RunRecord, or its dict), got {type(r).__name__}")
