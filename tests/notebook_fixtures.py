"""Notebooks as the chapters store them, for the tests of the notebook reader and the ledger."""
from __future__ import annotations

import json


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
