"""The one HTTP client the server uses to talk to dashboards: pooled connections, no redirects.

A single ``aiohttp.ClientSession`` per server keeps upstream connections alive between
requests (the Bokeh page, its scripts and its websocket all go to the same scheduler), and
never decompresses, so bodies stream through unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import aiohttp
from tornado import web

from .targets import Target


class UpstreamError(Exception):
    """A dashboard could not be reached or answered something unusable; ``reason`` is for people."""

    def __init__(self, reason: str, *, unreachable: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unreachable = unreachable


@dataclass(frozen=True)
class Timeouts:
    """Seconds to wait for a connection, and for a small JSON answer (health, plot list)."""

    connect: float
    json: float


class UpstreamClient:
    """Lazily created pooled session; ``close()`` on server shutdown."""

    def __init__(self, timeouts: Timeouts) -> None:
        self.timeouts = timeouts
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, limit_per_host=0, enable_cleanup_closed=True),
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                skip_auto_headers=("User-Agent",),
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def get_json(self, url: str) -> object:
        """GET a small JSON document; raise ``UpstreamError`` with a reason people understand."""
        body = await self.get_text(url)
        try:
            return json.loads(body)
        except ValueError as exc:
            raise UpstreamError("The answer is not JSON.", unreachable=False) from exc

    async def get_text(self, url: str) -> str:
        timeout = aiohttp.ClientTimeout(total=self.timeouts.json, sock_connect=self.timeouts.connect)
        try:
            async with self.session.get(
                url, allow_redirects=False, timeout=timeout, headers={"Accept-Encoding": "identity"}
            ) as response:
                if response.status != 200:
                    raise UpstreamError(f"The server answered HTTP {response.status}.", unreachable=False)
                raw = await response.content.read(4 * 1024 * 1024)
                return raw.decode("utf-8", errors="replace")
        except TimeoutError as exc:
            raise UpstreamError("The server did not answer in time.", unreachable=True) from exc
        except aiohttp.ClientConnectionError as exc:
            raise UpstreamError("The server could not be reached.", unreachable=True) from exc
        except aiohttp.ClientError as exc:
            raise UpstreamError("The server sent a malformed answer.", unreachable=False) from exc


def as_http_error(target: Target, exc: BaseException) -> web.HTTPError:
    """The HTTP error a browser gets when a dashboard failed; says which dashboard, echoes no input."""
    if isinstance(exc, TimeoutError) or isinstance(exc, aiohttp.ServerTimeoutError):
        return web.HTTPError(504, f"The dashboard at {target.netloc} did not answer in time.")
    if isinstance(exc, aiohttp.WSServerHandshakeError):
        return web.HTTPError(
            502, f"The dashboard at {target.netloc} refused the websocket (HTTP {exc.status})."
        )
    if isinstance(exc, aiohttp.ClientConnectorError):
        return web.HTTPError(
            502, f"The dashboard at {target.netloc} could not be reached. Is the scheduler running?"
        )
    return web.HTTPError(502, f"The dashboard at {target.netloc} sent a malformed answer.")
