"""Chronicle's GraphQL API (Strawberry): schema, resolvers, auth wiring, subscriptions.

``api.graphql.served`` is the thin export point (``schema``, ``build_schema``, ``server_version``);
``api.http.app`` mounts :func:`api.graphql.router.graphql_router` at ``/graphql``.
"""
