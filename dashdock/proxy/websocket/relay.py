"""The websocket half of the proxy: relay a browser's websocket to a dashboard's, both ways.

Mixed into the proxy handlers (one handler serves a page and its ``/ws``). Everything a browser's
upgrade must pass (authentication in the handlers' ``prepare``, the Origin checks, a well-formed
upgrade) is checked here before anything connects upstream. Then the raw relay (ws_tunnel.py)
carries it: bytes pumped between the two sides, frames followed but never parsed into messages. Its
browser side is the browser's socket, taken from tornado, whenever that can be done (plain HTTP);
otherwise (Jupyter over HTTPS, where tornado holds the TLS session) tornado's stream, read and
written through a transport of its own (ws_tornado.py).

Each relay registers with the pane it feeds, so a pane can be paused (the upstream session is
closed and nothing more reaches the browser; the plot stays as it was) or throttled (what arrives is
delivered in order, every N seconds). A dashboard that goes away under an open relay is reported to
the source registry, so panes can tell "reconnecting" from "live".
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING

from tornado import web
from tornado.iostream import IOStream, StreamClosedError

from dashdock.panes.state import PANE_QUERY_KEY, PaneRelay, PaneState
from dashdock.proxy.headers import upstream_request_headers
from dashdock.proxy.websocket.takeover import can_take, take_socket
from dashdock.proxy.websocket.tornado_stream import StreamTransport
from dashdock.proxy.websocket.tunnel import BrowserProtocol, Tunnel
from dashdock.proxy.websocket.upstream import RawUpstream, accept_value, open_raw_upstream

if TYPE_CHECKING:
    from dashdock.proxy.handler import RelayHandler

_PANE_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
# RFC 6455: the key is 16 random bytes in base64; a subprotocol is an HTTP token.
_KEY_RE = re.compile(r"^[A-Za-z0-9+/]{22}==$")
_TOKEN_RE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


class WebSocketRelayMixin:
    """Websocket methods of the proxy handlers: the checks, and the choice of relay."""

    async def _open_websocket(self: RelayHandler) -> None:  # type: ignore[misc]
        # Refuse a foreign Origin (cross-site websocket hijacking) before connecting upstream.
        if not self.check_origin(self.request.headers.get("Origin", "")) or self._cross_origin_refused():
            raise web.HTTPError(403, "Cross-origin websocket refused.")
        protocols = self._checked_upgrade()
        if protocols is None:
            return
        pane_id = self.get_query_argument(PANE_QUERY_KEY, "")
        pane = pane_id if _PANE_ID_RE.match(pane_id) else None
        take = can_take(getattr(self.request.connection, "stream", None))
        await self._open_raw_relay(protocols, pane, take=take)

    def _cross_origin_refused(self: RelayHandler) -> bool:  # type: ignore[misc]
        # tornado 6.6 adds a Sec-Fetch-Site check to its own upgrade; the raw relay answers the
        # upgrade itself, so it runs that check here, and both relays refuse the same requests.
        check = getattr(self, "_check_cross_origin", None)
        return check is not None and check(self.check_origin) is not None

    def _checked_upgrade(self: RelayHandler) -> list[str] | None:  # type: ignore[misc]
        """The browser's subprotocols, or ``None`` once a malformed upgrade has been answered."""
        headers = self.request.headers
        connection = {token.strip().lower() for token in headers.get("Connection", "").split(",")}
        if "upgrade" not in connection or not _KEY_RE.match(headers.get("Sec-WebSocket-Key", "")):
            raise web.HTTPError(400, "Malformed websocket upgrade.")
        if headers.get("Sec-WebSocket-Version") != "13":
            self.set_status(426, "Upgrade Required")
            self.set_header("Sec-WebSocket-Version", "13")
            self.finish()
            return None
        protocols = [p.strip() for p in headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
        if not all(_TOKEN_RE.match(protocol) for protocol in protocols):
            raise web.HTTPError(400, "Malformed websocket subprotocol.")
        return protocols

    async def _open_raw_relay(  # type: ignore[misc]
        self: RelayHandler, protocols: list[str], pane_id: str | None, *, take: bool
    ) -> None:
        """Relay raw; ``take``: the browser's socket is taken from tornado, else its stream is used."""
        # The upstream websocket is open before the browser's is accepted, so a dead scheduler gives
        # a clear 502; the upgrade gets the same bounds as an HTTP request (504, never a hang).
        proxy = self._proxy
        upstream = await open_raw_upstream(
            self.route.target,
            self._upstream_url().raw_path_qs,
            protocols,
            upstream_request_headers(self.request.headers),
            proxy.connect_timeout,
            proxy.connect_timeout + proxy.read_timeout,
        )
        try:
            stream = self._answer_upgrade(upstream)
            await stream.write(b"")  # resolves once the 101 has left tornado's buffer
            taken = take_socket(stream) if take else None
        except (StreamClosedError, OSError):
            upstream.protocol.abort()  # the browser left during the upgrade
            return
        registry, panes, source_id = self._registry, self._panes, self.route.source_id
        relay = PaneRelay(pane_id, source_id, lambda new: tunnel.set_state(new)) if pane_id else None
        tunnel = Tunnel(
            upstream.protocol,
            max_message=proxy.websocket_max_message_size,
            state=panes.state(pane_id) if pane_id else PaneState(),
            stats=relay.stats if relay is not None else None,
            on_lost=lambda: registry.note_lost(source_id) if source_id is not None else None,
            on_closed=lambda: panes.detach(relay) if relay is not None else None,
        )
        if relay is not None:
            panes.attach(relay)
        if taken is None:
            StreamTransport(stream, tunnel).start()
            return
        sock, buffered = taken
        try:
            await asyncio.get_running_loop().connect_accepted_socket(
                lambda: BrowserProtocol(tunnel, buffered), sock
            )
        except OSError:
            sock.close()
            tunnel.browser_closed()

    def _answer_upgrade(self: RelayHandler, upstream: RawUpstream) -> IOStream:  # type: ignore[misc]
        """Accept the browser's upgrade with the subprotocol the dashboard chose; returns its stream."""
        self.clear_header("Content-Type")
        self.set_status(101)
        self.set_header("Upgrade", "websocket")
        self.set_header("Connection", "Upgrade")
        self.set_header("Sec-WebSocket-Accept", accept_value(self.request.headers["Sec-WebSocket-Key"]))
        if upstream.subprotocol is not None:
            self.set_header("Sec-WebSocket-Protocol", upstream.subprotocol)
        self.finish()
        # Synchronously after finish(), as tornado's websocket does: HTTP processing stops here.
        return self.detach()
