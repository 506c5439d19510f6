"""resdecay_lib: the companion library of the resdecay book.

Does a Pre-LN transformer block's change to the normalised residual stream shrink like
1/sqrt(k)? (Xie et al. 2023, "ResiDual", arXiv:2304.14802, Theorem 3.3.)

Modules, by room (data flows one way; theory, gaussian, fit, stats, baselines and results
know nothing of torch; the probe knows nothing of training; models do not know they are
measured):

* theory and simulation: ``theory`` (SymPy: Theorem 3.3, its corollaries and
  generalisations), ``gaussian`` (Monte Carlo of the idealised Gaussian stream with a real
  LayerNorm), ``fit`` (power-law fits with bootstrap intervals), ``stats`` (t intervals,
  equivalence tests, Bonferroni, Spearman; SciPy's t and ranks)
* models and measurement: ``models`` (one block class per norm placement, a registry),
  ``probe`` (residual-stream capture with hooks on any model and any mapping of inputs,
  per-layer metrics, Gram matrices, the exponent against the theorem's: ``probe.exponent``),
  ``evaluation`` (validation losses, block ablations), ``pretrained`` (offline loaders for
  pretrained models shipped in PyPI wheels)
* data: ``data`` (offline corpora, vocabulary, deterministic batches), ``baselines``
  (n-gram losses of the same split)
* real models: ``realmodels`` (the pretrained models' measurements, stored per model and
  text, and their exponent reports), ``depthcost`` (skip and removal costs, the redundancy
  rankings they are compared with)
* runs: ``train`` (the training loop), ``runs`` (one run measured through training),
  ``sweep`` (grids of runs over any executor, claims, atomic store), ``engines`` (local,
  Dask and SLURM executors), ``recheck`` (a stored run re-run live)
* analysis and the book: ``results`` (reading stored sweeps and the analysis the training
  chapters rest on), ``evidence`` (every value a verdict reads, declared once, and the glue
  that writes it), ``ledger`` (the claims and their computed verdicts), ``plots`` (the
  book's figure kinds)
* ``device`` (where torch runs, thread pinning, seeds), ``_checks`` (argument checks that
  name the parameter and its range), ``__main__`` (the command line, also installed as the
  ``resdecay`` console script: routes ``train``, ``sweep``, ``measure``, ``depth-cost``,
  ``prepare-models``, ``prepare-corpus``; ``--version`` prints :data:`__version__`)
"""
__version__ = "0.1.0"
