"""View capabilities: what lets a proxied page load its scripts, data and websocket without Jupyter's cookie.

Proxied pages run in an opaque origin (a CSP sandbox without ``allow-same-origin``), so they cannot
use the user's Jupyter session, and must not: any dashboard may be hostile. Their own requests are
authenticated instead by a capability carried in the URL path,
``{base_url}dashdock/view/{target}/{capability}/{path}``, which the server mints for an
authenticated user (``dashdock/proxy/...`` answers with a redirect to it).

A capability is ``{expiry}.{user tag}.{nonce}.{mac}``: the expiry in base 36 Unix seconds, a tag
naming the user it was minted for (an HMAC of the user name, so the URL does not spell it), a
random nonce (each link is a page load of its own), and an HMAC-SHA256 over target, expiry, tag and
nonce, truncated to 128 bits. The key is random per server process: a capability is good for one
target, one user, until it expires or the server restarts, and it cannot be made or changed
without the key.

A capability is good for one page load: once its page has opened its websocket it is spent
(``spend``), and serves no more than the page's public scripts. A script in the page can read its
own URL (a task key rendered as markup by one of Dask's pages, a hostile dashboard) and send it
elsewhere, but by the time any such script runs the page is connected, so the URL it sends opens
nothing. What is stored is the nonces spent, each until its capability would have expired.
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
    r"^(?P<expiry>[0-9a-z]{1,10})\.(?P<tag>[A-Za-z0-9_-]{11})\.(?P<nonce>[A-Za-z0-9_-]{11})"
    r"\.(?P<mac>[A-Za-z0-9_-]{22})$"
)
# The most spent nonces remembered (about 100 bytes each). Past it the oldest is forgotten first:
# the one nearest its expiry, and a page load more than this many loads ago.
MAX_SPENT = 200_000


class Verdict(enum.Enum):
    """What a presented capability is worth."""

    VALID = "valid"
    EXPIRED = "expired"  # genuine, but past its lifetime: a page open too long, or a server restart
    INVALID = "invalid"  # malformed, forged, or minted for another target or by another server


@dataclass(frozen=True)
class Check:
    verdict: Verdict
    user_tag: str | None = None  # the user it was minted for, when genuine
    nonce: str | None = None  # its page load, when genuine


class Capabilities:
    """Mints and checks view capabilities with a key that lives as long as this object."""

    def __init__(self, lifetime: float, clock: Callable[[], float] = time.time) -> None:
        self._key = secrets.token_bytes(32)
        self._lifetime = lifetime
        self._clock = clock
        self._spent: dict[str, float] = {}  # nonce -> its expiry, oldest first

    def user_tag(self, user_name: str) -> str:
        name = user_name.encode("utf-8", "surrogatepass")
        return _b64(hmac.digest(self._key, b"user\n" + name, hashlib.sha256))[:11]

    def mint(self, target: str, user_name: str) -> str:
        """A capability for ``target`` (a proxy target segment: a source id or ``host:port``)."""
        expiry = _base36(int(self._clock() + self._lifetime))
        tag = self.user_tag(user_name)
        nonce = _b64(secrets.token_bytes(8))
        return f"{expiry}.{tag}.{nonce}.{self._mac(target, expiry, tag, nonce)}"

    def check(self, capability: str, target: str) -> Check:
        match = _CAPABILITY_RE.match(capability)
        if match is None:
            return Check(Verdict.INVALID)
        expiry, tag, nonce = match["expiry"], match["tag"], match["nonce"]
        if not hmac.compare_digest(self._mac(target, expiry, tag, nonce), match["mac"]):
            return Check(Verdict.INVALID)
        if int(expiry, 36) < self._clock():
            return Check(Verdict.EXPIRED, tag, nonce)
        return Check(Verdict.VALID, tag, nonce)

    def spent(self, check: Check) -> bool:
        """Whether the page load of a genuine capability has opened its websocket already."""
        return check.nonce is not None and check.nonce in self._spent

    def spend(self, check: Check) -> bool:
        """Mark a valid capability's page load connected; False when it was already (or is not
        valid). Called before its websocket is relayed, so two upgrades cannot both pass."""
        if check.verdict is not Verdict.VALID or check.nonce is None or check.nonce in self._spent:
            return False
        now = self._clock()
        while self._spent and (len(self._spent) >= MAX_SPENT or next(iter(self._spent.values())) <= now):
            del self._spent[next(iter(self._spent))]  # expired ones are refused by their expiry
        self._spent[check.nonce] = now + self._lifetime  # no later than its expiry
        return True

    def _mac(self, target: str, expiry: str, tag: str, nonce: str) -> str:
        message = f"view\n{target}\n{expiry}\n{tag}\n{nonce}".encode()
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
