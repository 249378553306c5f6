"""View capabilities: what lets a proxied page load its scripts, data and websocket without Jupyter's cookie.

Proxied pages run in an opaque origin (a CSP sandbox without ``allow-same-origin``), so they cannot
use the user's Jupyter session, and must not: any dashboard may be hostile. Their own requests are
authenticated instead by a capability carried in the URL path,
``{base_url}dashdock/view/{target}/{capability}/{path}``, which the server mints for an
authenticated user (``dashdock/proxy/...`` answers with a redirect to it).

A capability is ``{expiry}.{user tag}.{mac}``: the expiry in base 36 Unix seconds, a tag naming the
user it was minted for (an HMAC of the user name, so the URL does not spell it), and an HMAC-SHA256
over target, expiry and tag, truncated to 128 bits. The key is random per server process: a
capability is good for one target, one user, until it expires or the server restarts, and it
cannot be made or changed without the key. Nothing is stored per capability.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

_CAPABILITY_RE = re.compile(
    r"^(?P<expiry>[0-9a-z]{1,10})\.(?P<tag>[A-Za-z0-9_-]{11})\.(?P<mac>[A-Za-z0-9_-]{22})$"
)


class Verdict(enum.Enum):
    """What a presented capability is worth."""

    VALID = "valid"
    EXPIRED = "expired"  # genuine, but past its lifetime: a page open too long, or a server restart
    INVALID = "invalid"  # malformed, forged, or minted for another target or by another server


@dataclass(frozen=True)
class Check:
    verdict: Verdict
    user_tag: str | None = None  # the user it was minted for, when genuine


class Capabilities:
    """Mints and checks view capabilities with a key that lives as long as this object."""

    def __init__(self, lifetime: float, clock: Callable[[], float] = time.time) -> None:
        self._key = secrets.token_bytes(32)
        self._lifetime = lifetime
        self._clock = clock

    def user_tag(self, user_name: str) -> str:
        name = user_name.encode("utf-8", "surrogatepass")
        return _b64(hmac.digest(self._key, b"user\n" + name, hashlib.sha256))[:11]

    def mint(self, target: str, user_name: str) -> str:
        """A capability for ``target`` (a proxy target segment: a source id or ``host:port``)."""
        expiry = _base36(int(self._clock() + self._lifetime))
        tag = self.user_tag(user_name)
        return f"{expiry}.{tag}.{self._mac(target, expiry, tag)}"

    def check(self, capability: str, target: str) -> Check:
        match = _CAPABILITY_RE.match(capability)
        if match is None:
            return Check(Verdict.INVALID)
        expiry, tag = match["expiry"], match["tag"]
        if not hmac.compare_digest(self._mac(target, expiry, tag), match["mac"]):
            return Check(Verdict.INVALID)
        if int(expiry, 36) < self._clock():
            return Check(Verdict.EXPIRED, tag)
        return Check(Verdict.VALID, tag)

    def _mac(self, target: str, expiry: str, tag: str) -> str:
        message = f"view\n{target}\n{expiry}\n{tag}".encode()
        return _b64(hmac.digest(self._key, message, hashlib.sha256))[:22]


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if not number:
            return out
