"""A browser's websocket relayed to a dashboard's, both ways, once the handler has accepted it.

The proxy's handler authenticates the upgrade, checks its Origin and its form (upgrade.py), and
gives a ``WebSocketRelay`` what it needs: where to connect, the browser's subprotocols and the
headers that may go upstream, and a function that answers the browser's upgrade. The relay opens
the dashboard's websocket first (so a dead scheduler gives a clear error, never a 101 and a
close), then has the handler answer the browser with the subprotocol the dashboard chose, and joins
the two in a raw tunnel (tunnel.py): bytes pumped, frames followed but never parsed into messages.
Its browser side is the browser's socket, taken from tornado, whenever that can be done (plain
HTTP); otherwise (Jupyter over HTTPS, where tornado holds the TLS session) tornado's stream, read
and written through a transport of its own (tornado_stream.py).

Each relay registers with the pane it feeds, so a pane can be paused (the upstream session is
closed and nothing more reaches the browser; the plot stays as it was) or throttled (what arrives
is delivered in order, every N seconds). A dashboard that goes away under an open relay is
reported (``on_lost``), so panes can tell "reconnecting" from "live". A pane's relay to a
dashboard's page of a plot that dashdock has begun to draw is ended (``drawn_now``) and reported
moved (``on_moved``), so the pane loads dashdock's page instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from tornado.iostream import IOStream, StreamClosedError

from dashdock.panes.state import PaneRegistry, PaneRelay, PaneState
from dashdock.proxy.websocket.takeover import can_take, take_socket
from dashdock.proxy.websocket.tornado_stream import StreamTransport
from dashdock.proxy.websocket.tunnel import BrowserProtocol, Tunnel
from dashdock.proxy.websocket.upstream import UpstreamProtocol, open_raw_upstream
from dashdock.targets import Target

# Answers the browser's upgrade (101, with the dashboard's subprotocol or none) and returns the
# browser's stream, detached from tornado's HTTP handling.
AcceptUpgrade = Callable[[str | None], IOStream]


@dataclass(frozen=True)
class RelayRequest:
    """One browser websocket to relay, as the handler checked it."""

    target: Target
    request_target: str  # upstream path and query
    subprotocols: Sequence[str]
    headers: Mapping[str, str]  # the browser's headers that may go upstream
    pane_id: str | None  # the pane it feeds, for pause and throttle
    source_id: str | None  # the source it reaches, told when the dashboard goes away
    path: str = "/"  # below the dashboard's root: which plot's websocket it is
    drawn: bool = False  # to dashdock's plot server (proxy/drawn.py), not to the dashboard


class WebSocketRelay:
    """Opens relays within the proxy's limits; one per server, shared by its handlers."""

    def __init__(
        self,
        panes: PaneRegistry,
        on_lost: Callable[[str], None],
        on_moved: Callable[[str], None],
        *,
        connect_timeout: float,
        read_timeout: float,
        max_message: int,
    ) -> None:
        self._panes = panes
        self._on_lost = on_lost
        self._on_moved = on_moved
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._max_message = max_message
        # source id -> the panes' relays to its dashboard, by path: moved once dashdock draws the plot
        self._to_dashboards: dict[str, dict[Tunnel, str]] = {}

    async def open(self, request: RelayRequest, accept: AcceptUpgrade) -> None:
        # The upgrade gets the same bounds as an HTTP request (504, never a hang).
        upstream = await open_raw_upstream(
            request.target,
            request.request_target,
            request.subprotocols,
            request.headers,
            self._connect_timeout,
            self._connect_timeout + self._read_timeout,
        )
        try:
            stream = accept(upstream.subprotocol)
            take = can_take(stream)
            await stream.write(b"")  # resolves once the 101 has left tornado's buffer
            taken = take_socket(stream) if take else None
        except (StreamClosedError, OSError):
            upstream.protocol.abort()  # the browser left during the upgrade
            return
        tunnel = self._tunnel(upstream.protocol, request)
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

    def _tunnel(self, upstream: UpstreamProtocol, request: RelayRequest) -> Tunnel:
        panes, pane_id, source_id = self._panes, request.pane_id, request.source_id
        relay = PaneRelay(pane_id, source_id, lambda new: tunnel.set_state(new)) if pane_id else None
        movable = relay is not None and source_id is not None and not request.drawn

        def closed() -> None:
            if relay is not None:
                panes.detach(relay)
            if movable and source_id is not None:
                relays = self._to_dashboards.get(source_id, {})
                relays.pop(tunnel, None)
                if not relays:
                    self._to_dashboards.pop(source_id, None)

        tunnel = Tunnel(
            upstream,
            max_message=self._max_message,
            state=panes.state(pane_id) if pane_id else PaneState(),
            stats=relay.stats if relay is not None else None,
            on_lost=lambda: self._on_lost(source_id) if source_id is not None else None,
            on_closed=closed,
        )
        if relay is not None:
            panes.attach(relay)
        if movable and source_id is not None:
            self._to_dashboards.setdefault(source_id, {})[tunnel] = request.path
        return tunnel

    def drawn_now(self, source_id: str, paths: Collection[str]) -> None:
        """dashdock draws these plots of the source now: a pane still on the dashboard's page of
        one (opened before that was known) is a Bokeh session on the scheduler, and its status says
        "dashdock". Its relay ends, and ``on_moved`` has the source's panes load their pages again,
        this time from dashdock's plot server."""
        moved = [
            tunnel.move()
            for tunnel, path in list(self._to_dashboards.get(source_id, {}).items())
            if any(path == plot or path.startswith(plot + "/") for plot in paths)
        ]
        if any(moved):
            self._on_moved(source_id)
