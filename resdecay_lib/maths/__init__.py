"""Layer 1, mathematics (no torch). Imports only :mod:`resdecay_lib.checks`.

* ``theory`` (SymPy: Theorem 3.3, its corollaries and generalisations): the one module the
  chapters import; it re-exports the four that derive them, each importing only those before
  it: ``theorem`` (the model, its conventions, Theorem 3.3, the LayerNorm identity),
  ``finite_d`` (a real LayerNorm at width d), ``corollaries`` (Corollaries 3.4 and 3.5) and
  ``beyond`` (beyond independence)
* ``gaussian`` (Monte Carlo of the idealised Gaussian stream with a real LayerNorm)
"""
