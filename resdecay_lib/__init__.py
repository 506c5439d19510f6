"""resdecay_lib: the companion library of the resdecay book.

Does a Pre-LN transformer block's change to the normalised residual stream shrink like
1/sqrt(k)? (Xie et al. 2023, "ResiDual", arXiv:2304.14802, Theorem 3.3.)

Module map, in layers. Data flows one way: a module imports only its own layer and the layers
to its left (``tests/package/test_layers.py`` checks it, with no import cycle and no private name
crossing modules)::

    checks < maths < stats < nn < training < book < analysis < cli

* ``checks``: argument checks that name the parameter and its range (``@accepts``, domains)
* ``maths`` (no torch): ``maths.theory`` (SymPy: Theorem 3.3, its corollaries and
  generalisations; the one face the chapters import, re-exporting ``maths.theorem``,
  ``maths.finite_d``, ``maths.corollaries`` and ``maths.beyond``), ``maths.gaussian`` (Monte
  Carlo of the idealised Gaussian stream with a real LayerNorm; ``LN_EPS``, ``bonferroni_z_crit``),
  ``maths.identity`` (the change in the raw ratio and cosine a measurement records, with the
  coordinate means and eps; its leading order and the bound on its remainder)
* ``stats`` (no torch): ``stats.inference`` (t intervals, equivalence tests, Bonferroni,
  Spearman), ``stats.fit`` (power-law fits with bootstrap intervals, ``loglog_slope``),
  ``stats.exponents`` (rho, the index convention, the theorem's reference exponent,
  ``FRONT_BLOCKS``/``TAIL_BLOCKS``, ``halves``/``half_ratio``)
* ``nn``: ``nn.config`` (the model's configuration, no torch: ``ARCH_NAMES``, ``GPTConfig``),
  ``nn.models`` (one block class per norm placement, the registry ``ARCHS``), ``nn.hooks``
  (every capture, patch and ablation: the residual stream captured with hooks, blocks removed
  and replayed), ``nn.metrics`` (per-layer metrics of a captured stream, Gram matrices),
  ``nn.progress`` (progress bars and log lines), ``nn.probe`` (batched measurement,
  ``probe.exponent``, init-time profiles; the one face the chapters import, re-exporting the
  capture of ``nn.hooks``, the metrics of ``nn.metrics`` and ``progress_bar``),
  ``nn.evaluation`` (validation losses, block ablations), ``nn.pretrained`` (offline loaders
  for pretrained models shipped in PyPI wheels), ``nn.intervention`` (the front's sum scaled:
  the patched forward and the arithmetic of the sum), ``nn.quantise``, ``nn.device`` (where torch
  runs, thread pinning, seeds, the cache folder)
* ``training``: ``training.plan`` (what a run is and when it is measured: ``TrainConfig``, ``RunPlan``; no torch),
  ``training.records`` (no torch: a run's stored result, typed and checked: ``RunRecord``, its
  schema version), ``training.store`` (no torch: the one atomic write, the sweep loader
  ``load_sweep``, ``result_path``, ``run_id``, ``sweep_runs``, ``load_run``, ``read_result``, run
  claims, provenance),
  ``training.data`` (offline corpora, vocabulary, deterministic batches),
  ``training.baselines`` (n-gram losses), ``training.train`` (the loop), ``training.runs``
  (one run measured through training), ``training.sweep`` (grids of runs over any executor),
  ``training.engines`` (local, Dask and SLURM executors), ``training.weights`` (a run's final
  weights stored beside its result, and read back)
* ``book``: ``book.evidence`` (every value a verdict reads, declared once, and the glue that
  writes it); the claims ledger by job: ``book.verdicts`` (``Verdict``, ``Claim``, the verdict
  words), ``book.notebooks`` (the glued evidence and the table of contents, read from the
  stored notebooks), ``book.rules`` (one rule per claim, with its helpers and margins),
  ``book.claims`` (the catalogue ``CLAIMS``), ``book.render`` (verdicts in MyST Markdown),
  ``book.ledger`` (the evaluation; the one face the chapters import, re-exporting the others'
  names); ``book.preregistration`` (the claims' fingerprints), ``book.carries`` (when a
  re-registration that moved no rule and no value dates from the registration before it), ``book.producers`` (the library
  function that produces each evidence, which a claim's fingerprint follows), ``book.history`` (each verdict's
  label, confirmatory, exploratory or derived, computed from the commit order that
  ``results/history.json`` records), ``book.findings``,
  ``book.plots`` (the book's figure kinds), ``book.glues`` (what a chapter's typed result
  glues: ``Words``, ``Table``, ``EvidenceGlue``, ``glue_all``), ``book.citation`` (the version, commit and
  label a result is cited by; ``cite_line``, CITATION.cff/.bib)
* ``analysis``: ``analysis.training_analysis`` (stored sweeps and the analysis Chapter 7
  rests on), ``analysis.init_analysis`` (Chapter 6: the zoo's profiles at initialisation),
  ``analysis.depth_analysis`` (Chapter 8: ablations, the depth ladder, law and
  slope, gaps at equal depth), ``analysis.pretrained_analysis`` (Chapter 9: the pretrained models'
  measurements and their exponent reports), ``analysis.pruning`` (skip and removal costs),
  ``analysis.front`` (the front of trained Pre-LN and its predictions), ``analysis.recheck``
  (a stored run re-run live), ``analysis.training_claims``, ``analysis.intervention`` (Chapter
  9b: the front intervention, predicted and measured), ``analysis.anchors`` (the published
  anchors' metrics, the theorem's values and the book's); ``analysis.chapters.<name>``: one
  typed result per chapter, ``chapter(root)``, with the wording functions of its sentences
* ``cli``: ``__main__`` (the command line, also the ``resdecay`` console script: routes each
  command to its module; ``--version`` prints the name, :data:`__version__` and the commit);
  one module per command, which parses, prints and exits while the layers below do the work:
  ``cli.prepare_corpus`` (``prepare-corpus``), ``cli.prepare_models`` (``prepare-models``),
  ``cli.train``, ``cli.sweep``, ``cli.measure``, ``cli.record``,
  ``cli.analyse``, ``cli.intervene``, ``cli.anchors``; no other module imports argparse

"""
__version__ = "0.4.0"
