"""Chronicle's application layer: the command service, HTTP/GraphQL API and CLI."""
