"""Layer 7, the command line's own commands: ``measure``, ``depth_cost`` and ``analyse``
(``python -m resdecay_lib`` routes them, with the training layer's ``train``, ``sweep`` and
``prepare-*`` commands)."""
