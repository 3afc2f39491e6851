"""The HTTP entry point: the FastAPI app (``api.http.app.create_app``) and its plain-HTTP routes
(health, readiness, metrics, export downloads). GraphQL is mounted from ``api.graphql``."""
