"""Write a copy of the book's _config.yml with its execution mode set (default: off, build
from the stored outputs, executing nothing).

Usage: python tools/stored_config.py SRC DEST
The test command builds the book this way, so a build failure there is a problem of the
text (references, directives, math), not of execution; nbval checks execution separately.
``tools/execute_book.py`` (``make book``) writes its config, execution off over the chapters it
executed, with the same :func:`write_config`.
"""
import pathlib
import sys

import yaml


def write_config(src: pathlib.Path, dest: pathlib.Path, execute: str = "off") -> None:
    """Copy the config at ``src`` to ``dest`` with ``execute_notebooks: <execute>`` (``force``
    also drops the execution cache) and local extension folders made absolute (jupyter-book
    resolves them against the config file's folder)."""
    config = yaml.safe_load(pathlib.Path(src).read_text())
    section = config.setdefault("execute", {})
    section["execute_notebooks"] = execute
    if execute == "force":
        section.pop("cache", None)
    local = config.get("sphinx", {}).get("local_extensions") or {}
    for name, path in local.items():
        local[name] = str((pathlib.Path(src).parent / path).resolve())
    dest = pathlib.Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(yaml.safe_dump(config, sort_keys=False))


if __name__ == "__main__":
    write_config(*map(pathlib.Path, sys.argv[1:3]))
