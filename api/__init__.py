"""Chronicle's application layer.

- ``api.service``: the command service (campaign application, auth, store, settings, observability);
- ``api.exports``: exports and import;
- entry points: ``api.http`` (FastAPI), ``api.graphql`` (Strawberry schema and resolvers),
  ``api.cli`` (the ``chronicle`` command).

Arrows point one way: entry points -> service/exports -> projections -> domain.
"""
