"""A run's final weights, stored beside its result, so that what the trained model does can be
evaluated again in seconds instead of training it again.

* :func:`weights_path`: where a result's weights go, ``<result stem>.weights.pt`` beside the
  result JSON (``results/train_long/pre_ln_L2_s0.json`` ->
  ``results/train_long/pre_ln_L2_s0.weights.pt``).
* :func:`save_weights`: the trained model's ``state_dict`` (every tensor float32, on the CPU),
  with the run's name, its configuration (the ``TrainConfig`` fields, as the result's
  ``config``), the step, the vocabulary size and the provenance of the process that trained it
  (code version, library versions, CPU model and capability, platform, threads), written
  atomically (:func:`~resdecay_lib.training.store.replacing`: complete or absent).
* :func:`load_weights`: one read back with ``torch.load(..., weights_only=True)`` (tensors,
  dicts, lists, strings and numbers: nothing in the file runs code), checked whole and, given
  the stored result of its run, checked to be that run's (its name and configuration); a
  :class:`StoredWeights`, whose :meth:`~StoredWeights.model` is the trained model, rebuilt.

Who writes them: :func:`resdecay_lib.training.runs.run_result` with ``weights=PATH``, the
``train`` command with ``--keep-weights`` and the ``sweep`` command with ``--keep-weights``
(each finished run's weights beside its result). Keeping them changes neither the result JSON
nor the run's configuration or name: ``TrainConfig`` has no field for it, so the result's
``config`` (which a sweep compares with its own to recognise a stored run) is the same with or
without weights. A run that does not finish (a non-finite loss, ``stop_at``) stores none.

Size: 4 bytes per parameter plus about 1 kB per tensor of torch's zip archive (460 kB for the
115,072 parameters of the sweep's Pre-LN L = 2; about 5 MB at L = 24).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch

from ..checks import DeviceName, Instance, Int, PathArg, Text, accepts, check_in_file, check_out_file, one_line, show
from .plan import TrainConfig
from .records import RunRecord, as_run
from .store import replacing

__all__ = ["WEIGHTS_FORMAT", "WEIGHTS_SUFFIX", "StoredWeights", "weights_path", "save_weights", "load_weights"]

#: the marker of a weights file this library wrote (its "format" key)
WEIGHTS_FORMAT = "resdecay-weights/1"
#: what replaces a result file's ``.json`` in its weights file's name
WEIGHTS_SUFFIX = ".weights.pt"
#: the keys of a weights file
_KEYS = ("format", "name", "config", "step", "vocab_size", "provenance", "state_dict")


@accepts(result=PathArg())
def weights_path(result: str | Path) -> Path:
    """``<stem>.weights.pt`` beside the result file ``<stem>.json`` (a name without ``.json``
    gets ``.weights.pt`` appended): where a run's weights are stored."""
    p = Path(result)
    return p.with_name((p.stem if p.suffix == ".json" else p.name) + WEIGHTS_SUFFIX)


@accepts(model=Instance(torch.nn.Module, "a trained model (resdecay_lib.nn.models.GPT)"),
         cfg=Instance(TrainConfig, "the run's TrainConfig"), path=PathArg(), step=Int(0),
         provenance=Instance(dict, "the run's provenance (runs.provenance's dict)"), name=Text(none=True))
def save_weights(model, cfg: TrainConfig, path: str | Path, step: int, provenance: dict,
                 name: str | None = None) -> Path:
    """Write ``model``'s final weights to ``path`` atomically; returns ``path``.

    The file holds ``{"format": WEIGHTS_FORMAT, "name", "config": asdict(cfg), "step",
    "vocab_size", "provenance", "state_dict"}``, the ``state_dict``'s tensors copied to the CPU
    as float32 (the models train in float32: a copy of the same bits). ``name``: the run's name
    in its store (default ``cfg.run_name()``). ``path`` is checked before anything is written
    (:func:`~resdecay_lib.checks.check_out_file`)."""
    path = check_out_file("path", path)
    state = {k: v.detach().to("cpu", torch.float32).clone() for k, v in model.state_dict().items()}
    wte = state.get("wte.weight")
    if wte is None or wte.ndim != 2:
        raise ValueError(f"model must be a model of resdecay_lib.nn.models (with a token table wte), got "
                         f"{type(model).__name__} with tensors {show(sorted(state))}")
    record = {"format": WEIGHTS_FORMAT, "name": name or cfg.run_name(),
              "config": {f.name: getattr(cfg, f.name) for f in fields(TrainConfig)}, "step": int(step),
              "vocab_size": int(wte.shape[0]), "provenance": _plain(provenance), "state_dict": state}
    with replacing(path) as tmp:
        torch.save(record, tmp)
    return path


def _plain(obj):
    """``obj`` as what ``torch.load(weights_only=True)`` reads back: dicts, lists, str, int,
    float, bool, None (a tuple becomes a list)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    raise ValueError(f"provenance must hold only dicts, lists, str, numbers and None, got {type(obj).__name__} "
                     f"{show(obj)}")


@dataclass(frozen=True)
class StoredWeights:
    """A weights file read back (:func:`load_weights`): ``name``, ``config`` (a
    :class:`~resdecay_lib.training.plan.TrainConfig`), ``step`` (the steps it was trained),
    ``vocab_size``, ``provenance`` (of the process that trained it: ``code_version``, ...),
    ``state_dict`` {name: float32 tensor} and ``path``."""
    name: str
    config: TrainConfig
    step: int
    vocab_size: int
    provenance: dict
    state_dict: dict
    path: Path

    @accepts(device=DeviceName())
    def model(self, device: str = "cpu"):
        """The trained model: ``models.build`` of the configuration, its weights loaded (every
        tensor, none left over or missing), in eval mode on ``device``."""
        from ..nn.models import build
        c = self.config
        m = build(c.arch, c.n_layer, c.d_model, c.n_head, self.vocab_size, c.block_size, seed=c.seed, device="cpu")
        try:
            m.load_state_dict(self.state_dict, strict=True)
        except RuntimeError as exc:
            raise ValueError(f"weights file {str(self.path)!r} does not fit the model of its configuration "
                             f"({one_line(exc)[:300]})") from None
        return m.to(device).eval()


@accepts(path=PathArg(), stored=Instance((RunRecord, dict), "the stored result of the weights' run (a RunRecord, or "
                                                           "its JSON, parsed)", none=True))
def load_weights(path: str | Path, stored=None) -> StoredWeights:
    """Read the weights file at ``path`` (``torch.load(..., weights_only=True)``), checked
    whole: the library's format marker, every key of :func:`save_weights`, a valid
    configuration, a ``state_dict`` of finite float32 tensors. ``stored``: the result of the
    run the weights should be (a :class:`~resdecay_lib.training.records.RunRecord`, or its JSON,
    parsed): its ``name`` and ``config`` must be the
    weights'. ``ValueError`` in one line naming the path and what is wrong otherwise."""
    path = check_in_file("path", path)
    where = f"weights file {str(path)!r}"
    try:
        raw = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:   # not a torch archive, truncated, or pickled objects weights_only refuses
        raise ValueError(f"{where} cannot be read as weights ({type(exc).__name__}: {one_line(exc)[:200]})") from None
    if not isinstance(raw, dict) or raw.get("format") != WEIGHTS_FORMAT:
        raise ValueError(f"{where} is not a weights file of this library (no 'format': {WEIGHTS_FORMAT!r})")
    missing = [k for k in _KEYS if k not in raw]
    if missing:
        raise ValueError(f"{where} lacks {missing}")
    try:
        cfg = TrainConfig.from_dict(raw["config"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: config: {one_line(exc)}") from None
    for key, kind in (("name", str), ("step", int), ("vocab_size", int), ("provenance", dict), ("state_dict", dict)):
        if not isinstance(raw[key], kind) or isinstance(raw[key], bool):
            raise ValueError(f"{where}: {key} must be a {kind.__name__}, got {type(raw[key]).__name__}")
    for k, t in raw["state_dict"].items():
        if not isinstance(t, torch.Tensor) or t.dtype != torch.float32:
            raise ValueError(f"{where}: state_dict[{k!r}] must be a float32 tensor, got "
                             f"{getattr(t, 'dtype', type(t).__name__)}")
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"{where}: state_dict[{k!r}] holds NaN or an infinity")
    if raw["step"] != cfg.steps:
        raise ValueError(f"{where}: step must be the configuration's last step {cfg.steps} (final weights), got "
                         f"{raw['step']}")
    if stored is not None:
        stored = as_run(stored, "stored")
        if stored.name != raw["name"] or stored.config != cfg:
            raise ValueError(f"{where} holds the weights of run {raw['name']!r} ({show(raw['config'], 200)}), not "
                             f"those of stored {show(stored.name)} ({show(asdict(stored.config), 200)})")
        if stored.status != "ok":
            raise ValueError(f"stored must be a finished run (status 'ok'), got status {show(stored.status)}")
    return StoredWeights(raw["name"], cfg, raw["step"], raw["vocab_size"], raw["provenance"], raw["state_dict"], path)
