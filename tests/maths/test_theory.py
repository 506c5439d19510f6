"""The public face resdecay_lib.maths.theory re-exports, unchanged, every public name of the
four modules that derive the theory (theorem, finite_d, corollaries, beyond), each once."""
import __future__

import inspect

import pytest

from resdecay_lib.maths import beyond, corollaries, finite_d, theorem, theory

#: in the order they import one another (each only those before it)
MODULES = (theorem, finite_d, corollaries, beyond)
#: argument checks shared between the modules: public for the layers' rule on private names
#: (tests/package/test_layers.py), not part of the theory's names
SHARED_CHECKS = {"check_k", "check_symbolic", "check_rc"}
IDS = [m.__name__.rsplit(".", 1)[-1] for m in MODULES]


def own_names(module) -> set:
    """The public names ``module`` defines itself (not those it imports)."""
    out = set()
    for name, obj in vars(module).items():
        if name.startswith("_") or inspect.ismodule(obj) or isinstance(obj, __future__._Feature):
            continue
        if callable(obj):
            if getattr(obj, "__module__", None) == module.__name__:
                out.add(name)
        elif not any(getattr(other, name, None) is obj for other in MODULES if other is not module):
            out.add(name)
    return out


def test_all_of_theory_is_the_union_of_the_modules_all_each_name_once():
    names = [n for m in MODULES for n in m.__all__]
    assert len(names) == len(set(names)), "a name is in the __all__ of two modules"
    assert len(theory.__all__) == len(set(theory.__all__))
    assert set(theory.__all__) == set(names)


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_theory_re_exports_the_same_objects(module):
    for name in module.__all__:
        assert getattr(theory, name) is getattr(module, name), name


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_a_modules_all_is_what_it_defines_less_the_shared_checks(module):
    assert own_names(module) - SHARED_CHECKS == set(module.__all__)


def test_theory_defines_nothing_of_its_own_and_each_name_is_defined_once():
    assert own_names(theory) == set()
    defined = [n for m in MODULES for n in own_names(m)]
    assert len(defined) == len(set(defined))


def test_the_constants_stay_reachable_through_theory():
    for name in ("CONVENTIONS", "MAX_EXACT_D", "MAX_SERIES_TERMS", "MAX_SERIES_ORDER", "MAX_DEPTH", "RHO", "M"):
        assert name in theory.__all__ and hasattr(theory, name)
