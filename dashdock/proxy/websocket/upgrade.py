"""What a browser's websocket upgrade must be before anything connects upstream (RFC 6455 4.1)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from dashdock.errors import Invalid

# The key is 16 random bytes in base64; a subprotocol is an HTTP token.
_KEY_RE = re.compile(r"^[A-Za-z0-9+/]{22}==$")
_TOKEN_RE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
SUPPORTED_VERSION = "13"


class UnsupportedVersion(Invalid):
    """The browser speaks a websocket version other than 13; it is told which one to use."""


def checked_subprotocols(headers: Mapping[str, str]) -> list[str]:
    """The subprotocols a well-formed upgrade asks for, in its order (Bokeh sends two)."""
    connection = {token.strip().lower() for token in headers.get("Connection", "").split(",")}
    if "upgrade" not in connection or not _KEY_RE.match(headers.get("Sec-WebSocket-Key", "")):
        raise Invalid("Malformed websocket upgrade.")
    if headers.get("Sec-WebSocket-Version") != SUPPORTED_VERSION:
        raise UnsupportedVersion("Only websocket version 13 is supported.")
    protocols = [p.strip() for p in headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
    if not all(_TOKEN_RE.match(protocol) for protocol in protocols):
        raise Invalid("Malformed websocket subprotocol.")
    return protocols
