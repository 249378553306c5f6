"""Bokeh session tokens: the page gets a stand-in, the dashboard gets its own token back.

A Bokeh server (every Dask dashboard, ``bokeh serve``, Panel) writes a session token into each page
it serves, and packs into that token the headers, cookies and query arguments of the request that
asked for the page: those carry the credential dashdock adds for a dashboard behind
authentication. BokehJS needs only the token's ``session_id`` (it decodes the payload to read it)
and hands the whole token back as the websocket's second subprotocol.

So a page never sees the dashboard's token: it gets a stand-in whose payload holds only the session
id and expiry, signed by nothing but a random handle; when the page opens its websocket, the relay
swaps the stand-in for the real token (``original``), only for the same dashboard. The server keeps
a bounded number of tokens for a bounded time (Bokeh's own tokens expire in minutes).
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import time
import zlib
from collections import OrderedDict
from dataclasses import dataclass

# A Bokeh token's payload is base64url JSON that starts with '{"': it always begins "eyJ".
TOKEN_START = b"eyJ"
TOKEN_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-."
# The longest token dashdock keeps for a page. Bokeh's tokens are a few hundred bytes plus the
# request headers it packs; a longer one still gets a stand-in, but no way back to the original
# (an unsigned Bokeh server accepts the stand-in itself; a signing one refuses the session).
MAX_KEPT_TOKEN = 16 * 1024
# The tokens kept at once (1,024 x 16 KiB at most: 16 MiB) and for how long at most: Bokeh's
# default expiry is 5 minutes, the websocket opens within seconds of the page.
MAX_KEPT_TOKENS = 1024
MAX_KEPT_SECONDS = 3600.0
_DEFAULT_SECONDS = 600.0
_HANDLE_PREFIX = "dashdock"
_ZLIB_KEY = "__bk__zlib_"


@dataclass(frozen=True)
class _Kept:
    token: str
    dashboard: str  # the origin and root the token was minted for
    until: float


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def session_payload(token: str) -> dict[str, object] | None:
    """A Bokeh token's payload (the extra payload unpacked), or None when ``token`` is not one."""
    try:
        payload = json.loads(_b64decode(token.split(".", 1)[0]))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("session_id"), str):
        return None
    packed = payload.pop(_ZLIB_KEY, None)
    if isinstance(packed, str):
        try:
            extra = json.loads(zlib.decompressobj().decompress(_b64decode(packed), MAX_KEPT_TOKEN * 64))
        except (ValueError, binascii.Error, zlib.error, UnicodeDecodeError):
            extra = None
        if isinstance(extra, dict):
            payload.update(extra)
    return payload


class SessionTokens:
    """The real tokens behind the stand-ins pages were given; one per server."""

    def __init__(self, max_kept: int = MAX_KEPT_TOKENS) -> None:
        self._max_kept = max_kept
        self._kept: OrderedDict[str, _Kept] = OrderedDict()

    def stand_in(self, token: str, dashboard: str) -> str | None:
        """The token a page gets instead of ``token``, or None when ``token`` is not a Bokeh token
        (or is already a stand-in)."""
        payload = session_payload(token)
        if payload is None or token.partition(".")[2].startswith(_HANDLE_PREFIX):
            return None
        expiry = payload.get("session_expiry")
        now = time.time()
        until = float(expiry) + 60 if isinstance(expiry, int | float) else now + _DEFAULT_SECONDS
        shown = {"session_id": payload["session_id"]}
        if isinstance(expiry, int | float):
            shown["session_expiry"] = expiry
        handle = _HANDLE_PREFIX + secrets.token_urlsafe(24)
        if len(token) <= MAX_KEPT_TOKEN:
            self._keep(handle, _Kept(token, dashboard, min(until, now + MAX_KEPT_SECONDS)))
        return _b64encode(json.dumps(shown).encode()) + "." + handle

    def original(self, token: str, dashboard: str) -> str:
        """The dashboard's own token behind a stand-in given for ``dashboard``; anything else as it is."""
        handle = token.partition(".")[2]
        kept = self._kept.get(handle) if handle.startswith(_HANDLE_PREFIX) else None
        if kept is None or kept.dashboard != dashboard or kept.until < time.time():
            return token
        return kept.token

    def _keep(self, handle: str, kept: _Kept) -> None:
        now = time.time()
        while self._kept:
            oldest = next(iter(self._kept.values()))
            if oldest.until >= now and len(self._kept) < self._max_kept:
                break
            self._kept.popitem(last=False)
        self._kept[handle] = kept
