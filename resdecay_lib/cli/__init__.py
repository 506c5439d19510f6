"""Layer 7, the command line: one module per command, named after it, each defining
``register_cli(subparsers)``; ``python -m resdecay_lib`` (:mod:`resdecay_lib.__main__`) routes
them. Set-up: ``prepare_corpus`` (``prepare-corpus``), ``prepare_models``
(``prepare-models``); training: ``train``, ``sweep``; the pretrained models: ``measure``,
``depth_cost`` (``depth-cost``); a stored run: ``analyse``. These modules parse options, print
and choose exit codes; the work is the library's (the layers below), and no module outside
this package and ``__main__`` imports argparse."""
