"""The order ``make test`` runs the test files in (tests/conftest.py): the slow files of
``LONG_FIRST`` first, in its order, each file whole and in its own order, and xdist's reordering
by test count off under ``--dist loadfile``, so that the slow files start first on the two
workers instead of last."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]


def _conftest():
    # by path: "conftest" on sys.path is the repository root's (pythonpath lists "." first)
    spec = importlib.util.spec_from_file_location("tests_conftest_order", ROOT / "tests" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_long_first_file_is_a_test_file_of_the_checkout():
    long_first = _conftest().LONG_FIRST
    missing = [p for p in long_first if not (ROOT / p).is_file() or not Path(p).name.startswith("test_")]
    assert not missing, f"LONG_FIRST names files that are not test files (renamed?): {missing}"
    assert len(set(long_first)) == len(long_first)


def test_the_long_files_come_first_and_every_file_keeps_its_tests_together_and_in_order():
    conftest = _conftest()
    first, second = conftest.LONG_FIRST[:2]
    names = ["tests/a/test_x.py", second, "tests/a/test_x.py", first, "tests/b/test_y.py", second, first]
    items = [SimpleNamespace(path=ROOT / name, n=i) for i, name in enumerate(names)]
    items.append(SimpleNamespace(path=Path("/elsewhere/test_z.py"), n=len(items)))
    conftest.pytest_collection_modifyitems(SimpleNamespace(rootpath=ROOT), items)
    assert [(str(i.path.relative_to(ROOT)) if i.path.is_relative_to(ROOT) else str(i.path), i.n) for i in items] == [
        (first, 3), (first, 6), (second, 1), (second, 5),
        ("tests/a/test_x.py", 0), ("tests/a/test_x.py", 2), ("tests/b/test_y.py", 4), ("/elsewhere/test_z.py", 7)]


def test_xdist_reordering_by_test_count_is_off_under_loadfile_and_loadscope_only():
    conftest = _conftest()
    for dist, reorder in (("loadfile", False), ("loadscope", False), ("load", True), ("no", True)):
        config = SimpleNamespace(option=SimpleNamespace(dist=dist, loadscopereorder=True))
        conftest.pytest_configure(config)
        assert config.option.loadscopereorder is reorder, dist


def test_this_session_collected_the_long_files_first(request):
    files = list(dict.fromkeys(item.path.relative_to(ROOT).as_posix() for item in request.session.items
                               if item.path.is_relative_to(ROOT)))
    long_first = [p for p in _conftest().LONG_FIRST if p in files]
    assert files[:len(long_first)] == long_first
