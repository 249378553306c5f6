"""Credentials of dashboards behind authentication: a token in a header, a query parameter or a cookie.

The server keeps them for the user, by dashboard server (scheme, host and port), in a file only the
user can read (mode 0600), and adds them to every request it sends that server: probes, health
checks, proxied pages and websockets. They never go to the browser: the sources list says only
that a source has credentials and of which kind, and a credential's ``repr`` hides its value, so a
log line cannot show it either; what a dashboard sends back is cleaned of them (proxy/scrub.py).

A credential for a dashboard on this machine goes only to the user who listened on its port when
it was given (listeners.py): once the dashboard's process ends, another user who takes the port
gets requests without it, and the source says why, until the user gives the credentials again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from dashdock.errors import Invalid
from dashdock.kernel.files import write_atomically
from dashdock.sources.listeners import can_tell, is_local_host, listener_owners
from dashdock.targets import Target

KINDS = ("header", "query", "cookie")
MAX_VALUE_CHARS = 4096
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_VALUE = re.compile(r"^[\x21-\x7e][\x20-\x7e]*$")  # printable ASCII: no line breaks to smuggle headers
# Headers the proxy itself decides; a credential must not replace them.
_RESERVED_HEADERS = frozenset(
    {"host", "connection", "upgrade", "content-length", "transfer-encoding", "origin", "cookie"}
    | {"sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol", "sec-websocket-extensions"}
)


@dataclass(frozen=True)
class Credential:
    kind: str  # "header", "query" or "cookie"
    name: str  # the header, query parameter or cookie it goes in
    value: str = field(repr=False)

    def describe(self) -> dict[str, str]:
        """What the browser may know: never the value."""
        return {"kind": self.kind, "name": self.name}

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name, "value": self.value}


def parse_credential(document: object) -> Credential:
    """A credential from a request body; ``Invalid`` says what is wrong without echoing the value."""
    if not isinstance(document, dict):
        raise Invalid('\'credentials\' must be an object: {"kind", "name", "value"}.')
    kind, name, value = document.get("kind"), document.get("name"), document.get("value")
    if kind not in KINDS:
        raise Invalid("The credential's kind must be 'header', 'query' or 'cookie'.")
    if not isinstance(name, str) or not _NAME.match(name):
        raise Invalid("The credential's name must be 1 to 64 letters, digits, '_', '.' or '-'.")
    if kind == "header" and name.lower() in _RESERVED_HEADERS:
        raise Invalid(f"dashdock sets the {name} header itself; give the credential in another one.")
    if not isinstance(value, str) or len(value) > MAX_VALUE_CHARS or not _VALUE.match(value):
        raise Invalid(
            f"The credential's value must be printable text of 1 to {MAX_VALUE_CHARS} characters, "
            "on one line."
        )
    return Credential(kind, name, value)


class CredentialStore:
    """The credentials file: ``{origin: credential}``, written whole, atomically, mode 0600."""

    def __init__(self, path: Path | None, log: logging.Logger) -> None:
        self._path = path
        self._log = log
        self._lock = asyncio.Lock()

    async def read(self) -> tuple[dict[str, Credential], dict[str, int]]:
        """The credentials, and the user each was given for (see ``HeldCredentials``)."""
        if self._path is None:
            return {}, {}
        return await asyncio.to_thread(self._read)

    async def write(self, credentials: dict[str, Credential], owners: dict[str, int]) -> str:
        """Save them all; returns a problem for people, or ""."""
        if self._path is None:
            return "no credentials file is configured"
        body = json.dumps(
            {
                origin: {**credential.to_json(), **({"owner": owners[origin]} if origin in owners else {})}
                for origin, credential in credentials.items()
            }
        )
        async with self._lock:
            try:
                await asyncio.to_thread(self._write, body.encode())
            except OSError as exc:
                self._log.warning("dashdock: could not save the credentials file: %s", exc.strerror)
                return f"the credentials file could not be written ({exc.strerror})"
        return ""

    def _write(self, body: bytes) -> None:
        assert self._path is not None
        self._path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomically(self._path, body, mode=0o600)

    def _read(self) -> tuple[dict[str, Credential], dict[str, int]]:
        assert self._path is not None
        try:
            document = json.loads(self._path.read_text())
        except FileNotFoundError:
            return {}, {}
        except (OSError, ValueError) as exc:
            self._log.warning("dashdock: the credentials file is not readable (%s); none are used", exc)
            return {}, {}
        found: dict[str, Credential] = {}
        owners: dict[str, int] = {}
        for origin, entry in document.items() if isinstance(document, dict) else ():
            try:
                found[origin] = parse_credential(entry)
            except Invalid:
                self._log.warning("dashdock: a damaged entry of the credentials file is left out")
                continue
            owner = entry.get("owner")
            if isinstance(owner, int) and not isinstance(owner, bool) and owner >= 0:
                owners[origin] = owner
        return found, owners


class HeldCredentials:
    """The credentials this server holds, by origin (``scheme://host:port``): the map the upstream
    client adds to its requests (``held``), kept in the credentials file."""

    def __init__(self, held: dict[str, Credential], path: Path | None, log: logging.Logger) -> None:
        self._held = held
        self._store = CredentialStore(path, log)
        # Origin of a dashboard on this machine -> the user id that listened on its port when the
        # credential was given (one given before dashdock kept it: this server's own user).
        self._owners: dict[str, int] = {}
        # Origin -> why its credential is not sent now, for people.
        self._withheld: dict[str, str] = {}

    async def load(self) -> list[str]:
        """Read the file; returns the origins that have credentials now."""
        held, owners = await self._store.read()
        self._held.update(held)
        self._owners.update(owners)
        return list(self._held)

    def withheld(self, origin: str) -> str:
        """Why the credential of ``origin`` is not sent now, or ""."""
        return self._withheld.get(origin, "")

    async def may_send(self, origin: str) -> bool:
        """Whether the server listening at ``origin`` now may get its credential: on this
        machine, only while the same user listens on its port (``UpstreamClient.credential_guard``)."""
        target = _target_of(origin)
        if target is None or not is_local_host(target.host) or not can_tell():
            return True
        owners = await asyncio.to_thread(listener_owners, target.port)
        expected = self._owners.get(origin, os.getuid())
        if owners == {expected}:
            self._withheld.pop(origin, None)
            return True
        if owners:
            self._withheld[origin] = (
                f"Another user now listens on {target.netloc}, not the dashboard its credentials were "
                "given for: dashdock no longer sends them. Give them again if this is your dashboard."
            )
        return False

    async def _learn_owner(self, origin: str) -> None:
        """Who listens at ``origin`` now: the user the credential being given is meant for."""
        target = _target_of(origin)
        if target is None or not is_local_host(target.host) or not can_tell():
            return
        owners = await asyncio.to_thread(listener_owners, target.port)
        if len(owners) == 1:
            self._owners[origin] = owners.pop()
        self._withheld.pop(origin, None)

    def describe(self, origin: str) -> dict[str, str] | None:
        credential = self._held.get(origin)
        return credential.describe() if credential is not None else None

    @contextlib.asynccontextmanager
    async def trying(self, origin: str, credential: Credential | None) -> AsyncIterator[Credential | None]:
        """Requests to ``origin`` carry ``credential`` (when given) inside the block; if the block
        fails, the one held before comes back. Yields the one held before."""
        previous, owner = self._held.get(origin), self._owners.get(origin)
        if credential is not None:
            await self._learn_owner(origin)
            self._held[origin] = credential
        try:
            yield previous
        except BaseException:
            self._set(origin, previous)
            if owner is not None:
                self._owners[origin] = owner
            raise

    async def put(self, origin: str, credential: Credential | None) -> str:
        """Hold ``credential`` for ``origin`` (None forgets) and save; returns a problem for people, or ""."""
        if credential is not None:
            await self._learn_owner(origin)
        self._set(origin, credential)
        return await self.save()

    async def save(self) -> str:
        return await self._store.write(self._held, self._owners)

    def _set(self, origin: str, credential: Credential | None) -> None:
        if credential is None:
            self._held.pop(origin, None)
            self._owners.pop(origin, None)
            self._withheld.pop(origin, None)
        else:
            self._held[origin] = credential


def _target_of(origin: str) -> Target | None:
    scheme, _, netloc = origin.partition("://")
    host, _, port = netloc.rpartition(":")
    if not port.isdigit():
        return None
    return Target(scheme, host.strip("[]").lower(), int(port))
