"""Layer 3, models and measurement: ``config`` (the model's configuration, no torch),
``models`` (one block class per norm placement), ``probe`` (hooks and per-layer metrics),
``evaluation``, ``pretrained`` (offline loaders), ``quantise``, ``device``. Nothing here knows
of training."""
