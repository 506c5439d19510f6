"""Tests of resdecay_lib.checks: one argument checker, one exception policy."""
import ast
from pathlib import Path

import pytest

from resdecay_lib.checks import ArgumentTypeError, check_int, check_items, check_real

PKG = Path(__file__).resolve().parents[2] / "resdecay_lib"


def _bare_type_errors(tree) -> list[int]:
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call)
            and isinstance(n.exc.func, ast.Name) and n.exc.func.id == "TypeError"]


def test_the_library_raises_no_bare_type_error():
    """A wrong kind of argument is an ArgumentTypeError (TypeError and ValueError) everywhere.
    Only the decorators' own errors stay TypeErrors, as Python reports them: a call that does
    not bind (a missing or unknown argument) and a declaration naming no parameter."""
    bare = [f"{path.relative_to(PKG)}:{line}" for path in sorted(PKG.rglob("*.py")) if path.name != "checks.py"
            for line in _bare_type_errors(ast.parse(path.read_text(encoding="utf-8")))]
    assert bare == []
    tree = ast.parse((PKG / "checks.py").read_text(encoding="utf-8"))
    decorators = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ("accepts", "declare")]
    allowed = {line for fn in decorators for line in _bare_type_errors(fn)}
    assert set(_bare_type_errors(tree)) == allowed and len(allowed) == 3


@pytest.mark.parametrize("value", [True, 2.5, "3", None, 1j])
def test_check_int_rejects_a_wrong_kind_as_both_type_and_value_error(value):
    with pytest.raises(ArgumentTypeError, match=r"^n must be an integer in \[1, 5\], got "):
        check_int("n", value, 1, 5)
    assert issubclass(ArgumentTypeError, TypeError) and issubclass(ArgumentTypeError, ValueError)


def test_check_int_and_check_real_give_range_errors_as_value_errors_naming_the_bound():
    assert check_int("n", 5, 1, 5) == 5 and type(check_int("n", 5, 1)) is int
    with pytest.raises(ValueError, match=r"^n must be an integer >= 1, got 0$"):
        check_int("n", 0, 1)
    assert check_real("p", 1, 0, 1) == 1.0
    with pytest.raises(ValueError, match=r"^p must be a finite real number in \(0, 1\), got 1$") as info:
        check_real("p", 1, 0, 1, lo_open=True, hi_open=True)
    assert not isinstance(info.value, TypeError)
    with pytest.raises(ValueError, match="^p must be"):
        check_real("p", float("nan"))


def test_check_items_takes_any_iterable_of_the_type_and_names_the_first_bad_item():
    assert check_items("xs", (i for i in (1, 2)), int, "an int") == [1, 2]
    for bad in ("12", {1: 2}, 3, None):
        with pytest.raises(ArgumentTypeError, match="^xs must be a list of int"):
            check_items("xs", bad, int, "an int")
    with pytest.raises(ArgumentTypeError, match=r"^xs\[1\] must be an int, got str '2'"):
        check_items("xs", [1, "2"], int, "an int")
