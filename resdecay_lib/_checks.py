"""Argument checks shared by the library's public functions, so each kind of bad input gets
one message everywhere. Pure Python: theory and gaussian use it and stay free of torch."""
from __future__ import annotations

import numbers

__all__ = ["check_int", "require_int"]


def _is_int(value) -> bool:
    # bool is an Integral, but True as a depth is a bug, not a 1
    return not isinstance(value, bool) and isinstance(value, numbers.Integral)


def check_int(name: str, value, minimum: int) -> int:
    """``value`` as an ``int`` >= ``minimum``; ``TypeError`` for a non-integer, ``ValueError`` below."""
    if not _is_int(value):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def require_int(name: str, value, minimum: int = 1) -> int:
    """``value`` as an ``int`` >= ``minimum``; ``ValueError`` for any bad value (the torch-side
    modules' contract: their callers catch one exception type)."""
    if not _is_int(value) or value < minimum:
        bound = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ValueError(f"{name} must be {bound}, got {value!r}")
    return int(value)
