"""Layer 2, statistics (no torch): ``inference`` (t intervals, equivalence tests, Bonferroni,
Spearman), ``fit`` (power-law fits with bootstrap intervals, ``loglog_slope``) and
``exponents`` (rho, the index convention, the theorem's reference exponent, the front and tail
blocks, half ratios). Imports only the layers below it (checks, maths)."""
