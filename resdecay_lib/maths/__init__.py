"""Layer 1, mathematics (no torch): ``theory`` (SymPy: Theorem 3.3, its corollaries and
generalisations) and ``gaussian`` (Monte Carlo of the idealised Gaussian stream with a real
LayerNorm). Imports only :mod:`resdecay_lib.checks`."""
