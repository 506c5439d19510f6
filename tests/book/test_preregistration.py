"""The rules registered before seeds 3-4 were read are the rules the ledger runs."""
import pathlib

from resdecay_lib.book import preregistration as P

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_registered_fingerprint_matches_the_ledgers_rule_today():
    assert P.mismatches(P.read_registry(ROOT)) == {}


def test_a_rule_keeps_its_fingerprint_when_the_module_it_imports_moves_into_a_layer():
    def before(ev):
        from .stats import t_quantile
        return ev["x"] > t_quantile(0.95, 2)

    def after(ev):
        from ..stats.inference import t_quantile
        return ev["x"] > t_quantile(0.95, 2)

    def another_function(ev):
        from ..stats.inference import t_interval
        return ev["x"] > t_interval(0.95, 2)

    assert P.fingerprint(before) == P.fingerprint(after)
    assert P.fingerprint(after) != P.fingerprint(another_function)


def test_a_changed_margin_changes_the_fingerprint():
    def rule(ev):
        return ev["x"] > 0.1

    def wider(ev):
        return ev["x"] > 0.2

    assert P.fingerprint(rule) != P.fingerprint(wider)
