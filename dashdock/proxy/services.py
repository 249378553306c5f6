"""What the proxy's handlers share: built once by the extension, handed to each request.

A frozen dataclass rather than a dict of keyword arguments, so a handler reads typed fields and
the extension cannot hand the relay half its services.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dashdock.proxy.bokehjs.serve import LocalBokehJS
    from dashdock.proxy.capabilities import Capabilities
    from dashdock.proxy.drawn import DrawnPlots
    from dashdock.proxy.session_tokens import SessionTokens
    from dashdock.proxy.websocket.relay import WebSocketRelay
    from dashdock.sources.registry import SourceRegistry
    from dashdock.targets import Allowlist
    from dashdock.upstream import UpstreamClient


@dataclass(frozen=True)
class ProxySettings:
    """Limits of the HTTP relay, from the extension's traits."""

    connect_timeout: float
    read_timeout: float


@dataclass(frozen=True)
class ProxyServices:
    """The sources, the upstream client and allowlist, limits, BokehJS, the websocket relay,
    view capabilities, Bokeh session stand-ins and the plots dashdock draws: everything a relayed
    request uses."""

    registry: SourceRegistry
    client: UpstreamClient
    allowlist: Allowlist
    settings: ProxySettings
    bokeh_js: LocalBokehJS
    websockets: WebSocketRelay
    capabilities: Capabilities
    tokens: SessionTokens
    drawn: DrawnPlots | None = None  # plots of recorded sources served by dashdock (proxy/drawn.py)
