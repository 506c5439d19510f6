"""Write a copy of the book's _config.yml that builds from stored outputs (executes nothing).

Usage: python tools/stored_config.py SRC DEST
The test command builds the book this way, so a build failure there is a problem of the
text (references, directives, math), not of execution; nbval checks execution separately.
"""
import pathlib
import sys

import yaml

src, dest = map(pathlib.Path, sys.argv[1:3])
config = yaml.safe_load(src.read_text())
config.setdefault("execute", {})["execute_notebooks"] = "off"
# jupyter-book resolves local extension folders against the config file's folder
local = config.get("sphinx", {}).get("local_extensions") or {}
for name, path in local.items():
    local[name] = str((src.parent / path).resolve())
dest.parent.mkdir(parents=True, exist_ok=True)
dest.write_text(yaml.safe_dump(config, sort_keys=False))
