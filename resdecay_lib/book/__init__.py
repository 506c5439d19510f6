"""Layer 5, the book: ``evidence`` (every value a verdict reads, declared once); the claims
ledger, one module per job: ``verdicts`` (the verdict words, ``Verdict``, ``Claim``),
``notebooks`` (the glued evidence and the table of contents, read from the stored notebooks),
``rules`` (one rule per claim, with the helpers and margins it reads), ``claims`` (the
catalogue ``CLAIMS``), ``render`` (verdicts in MyST Markdown) and ``ledger`` (the evaluation,
and the one face the chapters, tools and tests import); ``preregistration`` (the rules'
fingerprints), ``findings``, ``plots``. Reads evidence; computes nothing from runs."""
