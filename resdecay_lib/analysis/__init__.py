"""Layer 6, the chapters' analyses: ``training_analysis`` (stored sweeps and the analysis of
the training chapters), ``pretrained_analysis`` (Chapter 9's measurements of pretrained
models), ``pruning``, ``front``, ``recheck``, ``training_claims``."""
