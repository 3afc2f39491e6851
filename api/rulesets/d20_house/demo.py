"""Placeholder: replaced below."""

from __future__ import annotations

from uuid import UUID

from api.service.application import ChronicleApplication


def create_demo(app: ChronicleApplication) -> UUID:
    raise NotImplementedError
