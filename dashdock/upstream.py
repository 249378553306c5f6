"""The one HTTP client the server uses to talk to dashboards: pooled connections, no redirects.

A single ``aiohttp.ClientSession`` per server keeps upstream connections alive between
requests (the Bokeh page, its scripts and its websocket all go to the same scheduler), and
never decompresses, so bodies stream through unchanged.

Probes (health checks, plot lists, worker tables) are the server's own requests, made for many
sources at once; they are bounded: at most ``max_probes`` at a time, each on a pooled connection of
its own session, so a thousand sources cost a few dozen sockets and never starve the proxy. Their
timeouts start when a probe starts, not while it waits for its turn. The documents they read are
bounded too (size, nesting).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import aiohttp

from dashdock.errors import TimedOut, Unavailable
from dashdock.targets import Target


class Credential(Protocol):
    """What a dashboard server asks of every request (``dashdock.sources.credentials``)."""

    @property
    def kind(self) -> str: ...  # "header", "query" or "cookie"
    @property
    def name(self) -> str: ...
    @property
    def value(self) -> str: ...


# The largest document a probe reads: Dask's plot list is ~2 KB, a worker table of 1,000 workers
# ~0.5 MB. Past this the answer is refused, not truncated (a cut document would mislead).
MAX_DOCUMENT_BYTES = 4 * 1024 * 1024
# Documents above this size are parsed in a thread, so the event loop never waits on a big parse.
_PARSE_IN_THREAD_BYTES = 256 * 1024


class UpstreamError(Exception):
    """A dashboard could not be reached or answered something unusable; ``reason`` is for people."""

    def __init__(
        self, reason: str, *, unreachable: bool, status: int | None = None, location: str | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unreachable = unreachable
        self.status = status  # the HTTP status of an answer that was not 200
        self.location = location  # where a redirect pointed


class UnreadableDocument(UpstreamError):
    """The dashboard answered, with a document too large or too deeply nested to read."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, unreachable=False)


@dataclass(frozen=True)
class Timeouts:
    """Seconds to wait for a connection, and for a small JSON answer (health, plot list)."""

    connect: float
    json: float


class UpstreamClient:
    """Lazily created pooled sessions (the proxy's and the probes'); ``close()`` on server shutdown."""

    def __init__(self, timeouts: Timeouts, max_probes: int = 16) -> None:
        self.timeouts = timeouts
        self._max_probes = max_probes
        self._probe_turns = asyncio.Semaphore(max_probes)
        self._session: aiohttp.ClientSession | None = None
        self._probe_session: aiohttp.ClientSession | None = None
        # Origin (scheme://host:port) -> what every request to it carries (sources/credentials.py).
        # A read-only view here: sources/credentials.py (HeldCredentials) keeps and changes it.
        self.credentials: Mapping[str, Credential] = {}
        # Whether the server now at an origin may be sent its credential (sources/credentials.py
        # checks that a local port was not taken over); None sends it always.
        self.credential_guard: Callable[[str], Awaitable[bool]] | None = None

    def credential_for(self, url: str) -> Credential | None:
        """The credential held for the server ``url`` points to (to clean answers of it)."""
        parts = urlsplit(url)
        return self.credentials.get(f"{parts.scheme}://{parts.netloc}")

    async def with_credentials(self, url: str, headers: dict[str, str]) -> tuple[str, dict[str, str]]:
        """``url`` and ``headers`` with the credential of the server ``url`` points to, if it has
        one and that server is still the one it was given for."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        credential = self.credentials.get(origin)
        if credential is None:
            return url, headers
        if self.credential_guard is not None and not await self.credential_guard(origin):
            return url, headers
        # What comes back is cleaned of the credential (proxy/scrub.py), so it must come back
        # uncompressed.
        headers = {**headers, "Accept-Encoding": "identity"}
        if credential.kind == "header":
            return url, {**headers, credential.name: credential.value}
        if credential.kind == "cookie":
            return url, {**headers, "Cookie": f"{credential.name}={credential.value}"}
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        pairs = [pair for pair in pairs if pair[0] != credential.name]
        query = urlencode([*pairs, (credential.name, credential.value)])
        return urlunsplit(parts._replace(query=query)), headers

    @property
    def session(self) -> aiohttp.ClientSession:
        """The proxy's session: unlimited, because each of its connections serves an open page."""
        if self._session is None or self._session.closed:
            self._session = _new_session(
                aiohttp.TCPConnector(limit=0, limit_per_host=0, enable_cleanup_closed=True)
            )
        return self._session

    @property
    def _probes(self) -> aiohttp.ClientSession:
        if self._probe_session is None or self._probe_session.closed:
            self._probe_session = _new_session(
                aiohttp.TCPConnector(limit=self._max_probes, enable_cleanup_closed=True)
            )
        return self._probe_session

    async def close(self) -> None:
        for session in (self._session, self._probe_session):
            if session is not None:
                await session.close()
        self._session = self._probe_session = None

    async def get_json(self, url: str) -> object:
        """GET a small JSON document; raise ``UpstreamError`` with a reason people understand."""
        body = await self.get_text(url)
        try:
            if len(body) > _PARSE_IN_THREAD_BYTES:
                return await asyncio.to_thread(json.loads, body)
            return json.loads(body)
        except RecursionError:
            raise UnreadableDocument("The answer is JSON nested too deeply to read.") from None
        except ValueError as exc:
            raise UpstreamError("The answer is not JSON.", unreachable=False) from exc

    async def get_text(self, url: str) -> str:
        async with self._probe_turns:
            return await self._get_text(url)

    async def _get_text(self, url: str) -> str:
        timeout = aiohttp.ClientTimeout(total=self.timeouts.json, sock_connect=self.timeouts.connect)
        credential = self.credential_for(url)
        url, headers = await self.with_credentials(url, {"Accept-Encoding": "identity"})
        try:
            async with self._probes.get(
                url, allow_redirects=False, timeout=timeout, headers=headers
            ) as response:
                if response.status != 200:
                    raise UpstreamError(
                        f"The server answered HTTP {response.status}.",
                        unreachable=False,
                        status=response.status,
                        location=response.headers.get("Location"),
                    )
                raw = bytearray()
                async for chunk in response.content.iter_any():
                    raw += chunk
                    if len(raw) > MAX_DOCUMENT_BYTES:
                        limit = MAX_DOCUMENT_BYTES // 2**20
                        raise UnreadableDocument(f"The answer is larger than {limit} MiB.")
                text = raw.decode("utf-8", errors="replace")
                # An answer that spells the credential never reaches an API answer or a log.
                return text.replace(credential.value, "[removed by dashdock]") if credential else text
        except TimeoutError as exc:
            raise UpstreamError("The server did not answer in time.", unreachable=True) from exc
        except aiohttp.ClientConnectionError as exc:
            raise UpstreamError("The server could not be reached.", unreachable=True) from exc
        except aiohttp.ClientError as exc:
            raise UpstreamError("The server sent a malformed answer.", unreachable=False) from exc


def _new_session(connector: aiohttp.TCPConnector) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        connector=connector,
        auto_decompress=False,
        cookie_jar=aiohttp.DummyCookieJar(),
        skip_auto_headers=("User-Agent",),
    )


def dashboard_timed_out(target: Target) -> TimedOut:
    return TimedOut(f"The dashboard at {target.netloc} did not answer in time.")


def dashboard_unreachable(target: Target) -> Unavailable:
    return Unavailable(f"The dashboard at {target.netloc} could not be reached. Is the scheduler running?")


def dashboard_malformed(target: Target) -> Unavailable:
    return Unavailable(f"The dashboard at {target.netloc} sent a malformed answer.")


def dashboard_refused_websocket(target: Target, status: int) -> Unavailable:
    return Unavailable(f"The dashboard at {target.netloc} refused the websocket (HTTP {status}).")


def relay_failure(target: Target, exc: BaseException) -> Unavailable:
    """What the proxy tells a browser when a dashboard failed it; says which one, echoes no input."""
    if isinstance(exc, TimeoutError | aiohttp.ServerTimeoutError):
        return dashboard_timed_out(target)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return dashboard_unreachable(target)
    return dashboard_malformed(target)
