"""The command service: the campaign application (commands and reads), access tokens, store
wiring, settings, observability, the read-model wiring and the demo campaign.

Entry points (``api.http``, ``api.graphql``, ``api.cli``) call into this package; it calls
``projections`` and ``domain``; nothing here imports an entry point.
"""
