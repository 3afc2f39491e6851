"""The ``chronicle`` command line (``api.cli.main``) and its helpers."""
