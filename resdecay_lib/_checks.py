"""Argument checks shared by the library's public functions, so each kind of bad input gets
one message everywhere. Pure Python: theory and gaussian use it and stay free of torch.

Sizes have documented upper bounds (the ``MAX_*`` constants of the modules that use
them): a size far beyond them would not fail cleanly but hang or run out of memory."""
from __future__ import annotations

import math
import numbers

__all__ = ["check_int", "require_int", "check_real"]


def _is_int(value) -> bool:
    # bool is an Integral, but True as a depth is a bug, not a 1
    return not isinstance(value, bool) and isinstance(value, numbers.Integral)


def _bound(minimum, maximum) -> str:
    return f"an integer >= {minimum}" + ("" if maximum is None else f" and <= {maximum}")


def check_int(name: str, value, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an ``int`` in [minimum, maximum]; ``TypeError`` for a non-integer,
    ``ValueError`` outside the range."""
    if not _is_int(value):
        raise TypeError(f"{name} must be {_bound(minimum, maximum)}, got {type(value).__name__} {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be {_bound(minimum, maximum)}, got {value}")
    return int(value)


def require_int(name: str, value, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an ``int`` in [minimum, maximum]; ``ValueError`` for any bad value (the
    torch-side modules' contract: their callers catch one exception type)."""
    if not _is_int(value) or value < minimum or (maximum is not None and value > maximum):
        bound = (("a positive integer" + ("" if maximum is None else f" <= {maximum}"))
                 if minimum == 1 else _bound(minimum, maximum))
        raise ValueError(f"{name} must be {bound}, got {value!r}")
    return int(value)


def check_real(name: str, value, lo: float = -math.inf, hi: float = math.inf, *,
               lo_open: bool = False, hi_open: bool = False, error=None) -> float:
    """``value`` as a finite ``float`` in the interval from lo to hi (ends open or closed).

    A non-real (bool, complex, str, None, an array) raises ``TypeError``; NaN, an infinity
    or a value outside the interval ``ValueError``; ``error`` overrides both (e.g.
    ``ValueError`` alone, for torch-side callers). The message names the parameter.
    """
    span = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise (error or TypeError)(f"{name} must be a finite real number in {span}, "
                                   f"got {type(value).__name__} {value!r}")
    v = float(value)
    if not (math.isfinite(v) and (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)):
        raise (error or ValueError)(f"{name} must be a finite real number in {span}, got {value!r}")
    return v


def cli_int(option: str, text, lo: int, hi: int) -> int:
    """A command-line option's text as an integer in [lo, hi], or ValueError naming the option."""
    try:
        value = int(text, 10)
    except (TypeError, ValueError):
        value = None
    if value is None or not lo <= value <= hi:
        raise ValueError(f"{option} must be an integer from {lo} to {hi}, got {text!r}")
    return value
