"""Layer 5, the book: ``evidence`` (every value a verdict reads, declared once), ``ledger`` (the
claims and their rules), ``preregistration`` (the rules' fingerprints), ``findings``, ``plots``.
Reads evidence; computes nothing from runs."""
