"""Notebooks as the chapters store them, for the tests of the notebook reader, the ledger and
the chapters' results."""
from __future__ import annotations

import json
import re
from pathlib import Path

from resdecay_lib.book.glues import EvidenceGlue, Table, Words


def glue_output(name, value, display=True):
    """A notebook output as myst_nb.glue writes it (display=False prefixes the mime type)."""
    prefix = "" if display else "application/papermill.record/"
    return {"output_type": "display_data", "data": {prefix + "text/plain": repr(value)},
            "metadata": {"scrapbook": {"name": name, "mime_prefix": prefix}}}


def notebook(path, outputs):
    nb = {"cells": [{"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {},
                     "source": "glue(...)", "outputs": outputs},
                    {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": "text"}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))
    return path


def stored_glues(path: Path) -> dict:
    """{name: text/plain or text/markdown} of the glue records stored in a notebook, figures left out."""
    out = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for o in cell.get("outputs", []):
            sb = o.get("metadata", {}).get("scrapbook")
            if sb and not sb["name"].startswith("fig-"):
                data = o["data"]
                text = data.get(sb["mime_prefix"] + "text/markdown", data.get(sb["mime_prefix"] + "text/plain"))
                out[sb["name"]] = "".join(text) if isinstance(text, list) else text
    return out


def glued_text(v) -> str:
    """What glue_all stores for a value: the Markdown of Words/Table, the repr of anything else."""
    if isinstance(v, EvidenceGlue):
        return repr(round(v.value, v.digits) if v.digits is not None else v.value)
    return str(v) if isinstance(v, (Words, Table)) else repr(v)


def prose_glue_names(path) -> set[str]:
    """Every glue name the Markdown cells of the notebook at ``path`` read: the roles
    ({glue}`name`, {glue:text}`name:.2f`, {glue:md}`name`) and the directives
    (```{glue:md} name, ```{glue:figure} name)."""
    text = "\n".join("".join(c["source"]) for c in json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
                     if c["cell_type"] == "markdown")
    return (set(re.findall(r"\{glue(?::\w+)?\}`([\w-]+)", text))
            | set(re.findall(r"\{glue(?::\w+)?\}[ \t]+([\w-]+)", text)))
