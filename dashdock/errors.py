"""The one shape of failure the REST API turns into ``{"message": ...}`` with a fitting status."""

from __future__ import annotations


class UserFacingError(Exception):
    """An operation failed; ``status`` is the HTTP status that fits, ``reason`` is for people."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
