"""Theorem 3.3 of Xie et al. (2023), "ResiDual", arXiv:2304.14802, section 3.2, its Corollaries
3.4 and 3.5 and what lies beyond its assumptions, in SymPy: the one module the chapters import.

Every name is defined once, in the module of what it derives, and re-exported here unchanged,
so that a chapter writes ``from resdecay_lib.maths import theory as th; th.omega_sq(k)``:

* :mod:`resdecay_lib.maths.theorem`: the model, its two index conventions (``CONVENTIONS``,
  ``first_valid_k``), Theorem 3.3 and its derivation from the assumptions (``omega_sq``,
  ``derive_omega_sq``), the LayerNorm identity and its error for eps > 0 (Chapters 1 and 2);
* :mod:`resdecay_lib.maths.finite_d`: the change with a real LayerNorm at width d: the
  theorem's stream to O(1/d^2) and exactly, the eps allowance (``omega_sq_finite_d``,
  ``omega_sq_exact_d``, ``eps_bias_bound``; Chapter 2), and any norm ratio and cosine by the
  delta method (``finite_d_terms``, ``change_sq_finite_d``, ``mean_abs_finite_d``; Chapters 3-5);
* :mod:`resdecay_lib.maths.corollaries`: Corollary 3.4, the mean absolute change, omega_k's
  series and its remainder (Chapter 3), and Corollary 3.5, the output change from one more
  block (``output_change_*``; Chapter 4);
* :mod:`resdecay_lib.maths.beyond`: beyond independence: unequal variances, aligned updates
  (``change_sq_rc``), feedback and ``stream_writes_change`` (Chapter 5), and block influence
  (``derive_influence_identity``; Chapter 9).

Each module imports only those before it in this list. The argument checks they share
(``check_k``, ``check_symbolic``, ``check_rc``) are not re-exported. None of them knows
torch; they return SymPy expressions, and NumPy arrays or floats where a function evaluates a
derived formula on numbers (e.g. ``omega_sq_hetero``, ``change_sq_rc``).
"""
from __future__ import annotations

from .beyond import (
    MAX_AB,
    MAX_DEPTH,
    MAX_GROWTH,
    MAX_SERIES_ORDER,
    change_sq_rc,
    change_sq_rc_series,
    derive_change_sq_rc,
    derive_geometric_limit,
    derive_influence_identity,
    derive_omega_sq_hetero,
    derive_power_law_limit,
    feedback_fixed_point,
    feedback_recursion,
    geometric_change,
    omega_sq_hetero,
    rc_hetero,
    stream_writes_change,
)
from .corollaries import (
    MAX_SERIES_TERMS,
    derive_mean_abs_gaussian,
    derive_output_change_var,
    mean_abs_change,
    omega,
    omega_closed_form,
    omega_series,
    omega_series_coefficient,
    output_change_sq_finite_d,
    output_change_var,
    remainder_coefficient_ratio,
    remainder_constant,
    unit_fraction_denominator,
)
from .finite_d import (
    MAX_EXACT_D,
    MAX_R,
    MAX_R_FINITE_D,
    RHO,
    M,
    change_sq_finite_d,
    correlation_rho,
    eps_bias_bound,
    expected_cos_exact,
    expected_cos_exact_series,
    expected_cos_series,
    finite_d_predictions,
    finite_d_terms,
    mean_abs_finite_d,
    omega_sq_exact_d,
    omega_sq_finite_d,
)
from .theorem import (
    CONVENTIONS,
    Derivation,
    derive_omega_sq,
    first_valid_k,
    layer_norm_eps_error,
    layer_norm_identity_residual,
    omega_sq,
)

__all__ = [
    # theorem
    "CONVENTIONS", "first_valid_k", "omega_sq", "Derivation", "derive_omega_sq",
    "layer_norm_identity_residual", "layer_norm_eps_error",
    # finite_d
    "MAX_EXACT_D", "MAX_R", "MAX_R_FINITE_D", "RHO", "M", "correlation_rho", "expected_cos_series", "expected_cos_exact",
    "expected_cos_exact_series", "omega_sq_finite_d", "omega_sq_exact_d", "eps_bias_bound",
    "finite_d_predictions", "finite_d_terms", "change_sq_finite_d", "mean_abs_finite_d",
    # corollaries
    "MAX_SERIES_TERMS", "omega", "derive_mean_abs_gaussian", "mean_abs_change", "omega_closed_form",
    "omega_series_coefficient", "omega_series", "remainder_coefficient_ratio", "remainder_constant",
    "unit_fraction_denominator", "derive_output_change_var", "output_change_var",
    "output_change_sq_finite_d",
    # beyond
    "MAX_SERIES_ORDER", "MAX_DEPTH", "derive_change_sq_rc", "change_sq_rc", "change_sq_rc_series",
    "derive_omega_sq_hetero", "omega_sq_hetero", "rc_hetero", "derive_power_law_limit",
    "derive_geometric_limit", "geometric_change", "MAX_GROWTH", "MAX_AB", "feedback_fixed_point", "feedback_recursion",
    "stream_writes_change", "derive_influence_identity",
]
