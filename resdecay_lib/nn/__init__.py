"""Layer 3, models and measurement: ``config`` (the model's configuration, no torch),
``models`` (one block class per norm placement), ``hooks`` (every capture, patch and ablation), ``metrics`` (per-layer metrics of a captured
stream), ``progress``, ``probe`` (the measurement's face: batched measurement, the exponent;
re-exports the capture of ``hooks`` and the metrics),
``evaluation``, ``pretrained`` (offline loaders), ``quantise``, ``device``. Nothing here knows
of training."""
