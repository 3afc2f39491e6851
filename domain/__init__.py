"""Chronicle's domain: rules, facts and the one fold. Pure Python.

Nothing here imports a web framework, a database driver or eventsourcing's
persistence modules (``tests/unit/test_purity.py`` checks it). The campaign
aggregate uses only ``eventsourcing.domain``, which is plain Python.
"""
