"""resdecay_lib: the companion library of the resdecay book.

Does a Pre-LN transformer block's change to the normalised residual stream shrink like
1/sqrt(k)? (Xie et al. 2023, "ResiDual", arXiv:2304.14802, Theorem 3.3.)

Modules (data flows one way; theory and gaussian know nothing of torch):

* ``theory``   -- SymPy: Theorem 3.3, its corollaries and generalisations
* ``gaussian`` -- Monte Carlo of the idealised Gaussian stream with a real LayerNorm
"""
__version__ = "0.1.0"
