"""Plots of a recorded source that dashdock serves itself: where the proxy sends them instead.

The history service (live/plot_server.py) can serve some of Dask's plots from the
recorder's one connection to a scheduler; it tells the proxy, per source and path, where such a
plot is served. The proxy then relays that page and its websocket there, with the secret header
the plot server asks for, instead of to the scheduler: the pane's URL, its capability, its
sandbox and its relays stay as they are.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

from dashdock.proxy.routing import Route
from dashdock.targets import Target

LOOPBACK = "127.0.0.1"


class DrawnPlot(Protocol):
    """Where one drawn plot is served."""

    @property
    def port(self) -> int: ...  # on loopback

    @property
    def query(self) -> str: ...  # added to the page's query: which recording it draws

    @property
    def header(self) -> tuple[str, str]: ...  # what the plot server asks every request for


class DrawnPlots(Protocol):
    def drawn(self, source_id: str, path: str) -> DrawnPlot | None:
        """Where ``path`` of a source is served instead of its dashboard; None: at its dashboard."""
        ...

    async def drawn_when_known(self, source_id: str, path: str) -> DrawnPlot | None:
        """``drawn``, after waiting (bounded) while the source's recording is still beginning."""
        ...


async def drawn_route(route: Route, plots: DrawnPlots | None, page: bool) -> tuple[Route, DrawnPlot] | None:
    """``route`` sent to the plot server when the source's plot at its path is drawn there. A
    ``page`` (not its websocket, which follows the page it belongs to) waits until that is known."""
    if plots is None or route.source_id is None:
        return None
    if page:
        drawn = await plots.drawn_when_known(route.source_id, route.path)
    else:
        drawn = plots.drawn(route.source_id, route.path)
    if drawn is None:
        return None
    target = Target("http", LOOPBACK, drawn.port)
    return dataclasses.replace(route, target=target, upstream_root=""), drawn
