"""resdecay_lib: the companion library of the resdecay book.

Does a Pre-LN transformer block's change to the normalised residual stream shrink like
1/sqrt(k)? (Xie et al. 2023, "ResiDual", arXiv:2304.14802, Theorem 3.3.)

Module map, in layers. Data flows one way: a module imports only its own layer and the layers
to its left (``tests/test_layers.py`` checks it, with no import cycle and no private name
crossing modules)::

    checks < maths < stats < nn < training < book < analysis < cli

* ``checks``: argument checks that name the parameter and its range (``@accepts``, domains)
* ``maths`` (no torch): ``maths.theory`` (SymPy: Theorem 3.3, its corollaries and
  generalisations; the one face the chapters import, re-exporting ``maths.theorem``,
  ``maths.finite_d``, ``maths.corollaries`` and ``maths.beyond``), ``maths.gaussian`` (Monte
  Carlo of the idealised Gaussian stream with a real LayerNorm; ``LN_EPS``, ``bonferroni_z_crit``)
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
  for pretrained models shipped in PyPI wheels), ``nn.quantise``, ``nn.device`` (where torch
  runs, thread pinning, seeds, the cache folder)
* ``training``: ``training.config`` (``TrainConfig``, ``RunPlan``; no torch),
  ``training.store`` (no torch: the one atomic write, the sweep loader ``load_sweep``,
  ``result_path``, ``run_id``, ``sweep_runs``, ``read_result``, run claims, provenance),
  ``training.data`` (offline corpora, vocabulary, deterministic batches),
  ``training.baselines`` (n-gram losses), ``training.train`` (the loop), ``training.runs``
  (one run measured through training), ``training.sweep`` (grids of runs over any executor),
  ``training.engines`` (local, Dask and SLURM executors)
* ``book``: ``book.evidence`` (every value a verdict reads, declared once, and the glue that
  writes it); the claims ledger by job: ``book.verdicts`` (``Verdict``, ``Claim``, the verdict
  words), ``book.notebooks`` (the glued evidence and the table of contents, read from the
  stored notebooks), ``book.rules`` (one rule per claim, with its helpers and margins),
  ``book.claims`` (the catalogue ``CLAIMS``), ``book.render`` (verdicts in MyST Markdown),
  ``book.ledger`` (the evaluation; the one face the chapters import, re-exporting the others'
  names); ``book.preregistration`` (the rules' fingerprints), ``book.findings``,
  ``book.plots`` (the book's figure kinds)
* ``analysis``: ``analysis.training_analysis`` (stored sweeps and the analysis Chapter 7
  rests on), ``analysis.init_analysis`` (Chapter 6: the zoo's profiles at initialisation),
  ``analysis.depth_analysis`` (Chapter 8: ablations, the depth ladder, law and
  slope, gaps at equal depth), ``analysis.pretrained_analysis`` (Chapter 9: the pretrained models'
  measurements and their exponent reports), ``analysis.depthcost`` (skip and removal costs),
  ``analysis.front`` (the front of trained Pre-LN and its predictions), ``analysis.recheck``
  (a stored run re-run live), ``analysis.training_claims``
* ``cli``: ``__main__`` (the command line, also the ``resdecay`` console script: routes
  ``train``, ``sweep``, ``measure``, ``depth-cost``, ``analyse``, ``prepare-models``,
  ``prepare-corpus``; ``--version`` prints the name, :data:`__version__` and the commit),
  ``cli.measure``, ``cli.depth_cost``, ``cli.analyse``

Old flat module -> new module (issue 21; ``tools/migrate_imports.py`` rewrites imports)::

    _checks -> checks                       data -> training.data
    theory -> maths.theory                  baselines -> training.baselines
    gaussian -> maths.gaussian              train -> training.train (TrainConfig: training.config)
    stats -> stats.inference                runs -> training.runs (RunPlan: training.config;
    fit -> stats.fit                            code_version, library_versions, machine,
    models -> nn.models (GPTConfig,             cpu_model, cpu_capability: training.store)
        MAX_SIZES: nn.config)               sweep -> training.sweep (load_sweep, sweep_runs, run_id,
    probe -> nn.probe                           result_path, read_result, plan_of,
    evaluation -> nn.evaluation                 write_json_atomic, claim: training.store;
    pretrained -> nn.pretrained                 local_executor: training.engines)
    quantise -> nn.quantise                 engines -> training.engines
    device -> nn.device                     evidence, ledger, preregistration, findings,
    results -> analysis.training_analysis       plots -> book.<same name>
        (rho, convention, reference_exponent, realmodels -> analysis.pretrained_analysis
        halves, half_ratio: stats.exponents)    (the depth-cost command: cli.depth_cost)
    front -> analysis.front (FRONT_BLOCKS,  depthcost, recheck, training_claims
        TAIL_BLOCKS: stats.exponents)           -> analysis.<same name>
    data.cache_dir -> nn.device.cache_dir   measure_cli -> cli.measure

Nothing is re-exported under an old name.
"""
__version__ = "0.1.0"
