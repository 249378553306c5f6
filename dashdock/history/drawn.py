"""Which of Dask's plots dashdock draws from a recording, and where the server finds them.

The recorder process serves them (live/plot_server.py) and reports its port and secret; the
server side (``DrawnPlots``, used by service.py) knows which runs answer, tells the proxy where a
source's drawn plot is (proxy/drawn.py) and tells each source which of its plots are drawn. The
constants are the contract between the two processes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

from dashdock.live.plots import (
    DRAWN,
    DRAWN_FROM_STATE,
    DRAWN_FROM_STREAM,
    RUN_ARGUMENT,
    SECRET_HEADER,
    below,
    is_drawn,
)
from dashdock.sources.registry import SourceRegistry


@dataclass(frozen=True)
class DrawnPlot:
    """Where the recorder serves a plot of a recorded source (what proxy/drawn.py asks for)."""

    port: int
    query: str  # names the run whose plot it is
    header: tuple[str, str]


class DrawnPlots:
    """The recorder's plot server as the Jupyter server knows it, and the runs it can draw."""

    def __init__(self, registry: SourceRegistry) -> None:
        self._registry = registry
        self._server: tuple[int, str] | None = None  # port, secret
        self._answered: set[str] = set()  # runs whose scheduler has answered the recorder
        self._with_state: set[str] = set()  # runs whose scheduler's state the recorder mirrors
        self._asked: set[str] = set()  # runs whose scheduler was asked whether it offers its state
        self._changed = asyncio.Event()  # set (and replaced) whenever what is drawn may have changed
        # Told the plots of a source drawn now (the proxy's WebSocketRelay.drawn_now).
        self.on_drawn: Callable[[str, tuple[str, ...]], None] | None = None

    def serving(self, port: object, secret: object) -> None:
        """The recorder's ``plots`` event: its plot server listens on ``port``."""
        if isinstance(port, int) and not isinstance(port, bool) and isinstance(secret, str):
            self._server = (port, secret)
            self._change()

    def stopped(self) -> None:
        """The recorder is gone, and its plot server with it."""
        self._server = None
        self._answered.clear()
        self._with_state.clear()
        self._asked.clear()
        self._change()

    def answered(self, run_id: str) -> None:
        self._answered.add(run_id)
        self._change()

    def state(self, run_id: str, offered: bool) -> None:
        """The recorder's ``state`` event: the run's state plots are drawn too, or (its scheduler
        does not offer its state, or its handler failed) not."""
        self._asked.add(run_id)
        if offered:
            self._with_state.add(run_id)
        else:
            self._with_state.discard(run_id)
        self._change()

    def ended(self, run_id: str) -> None:
        self._answered.discard(run_id)
        self._with_state.discard(run_id)
        self._asked.discard(run_id)
        self._change()

    def pending(self, run_id: str, path: str) -> bool:
        """Whether it is not known yet where the recorded run's ``path`` is drawn: the recorder
        has not read the run's scheduler yet, or, for a plot drawn from the scheduler's state, has
        not yet asked the scheduler whether it offers it."""
        if not is_drawn(path):
            return False
        if run_id not in self._answered:
            return True
        # The recorder starts its plot server before its first read: none now means it could not.
        return self._server is not None and below(path, DRAWN_FROM_STATE) and run_id not in self._asked

    async def change(self, timeout: float) -> None:
        """Returns when what is drawn may have changed, or after ``timeout`` seconds."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)

    def _change(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def drawn(self, run_id: str | None, path: str) -> DrawnPlot | None:
        """Where ``path`` of the run is drawn; None when no run is recorded now, the plot server is
        not up, the plot is not among ``DRAWN``, or its scheduler is known not to offer its state.

        A run whose scheduler has not answered yet (a recorder starting, a scheduler too busy) is
        drawn all the same, from what its mirror holds, and its pages say how old that is (see
        live/stale.py): Dask's page then would be one more Bokeh session on a scheduler that
        already cannot keep up. Only the run's end gives the plot back to the dashboard."""
        server = self._server
        if server is None or run_id is None:
            return None
        state_unknown = run_id not in self._asked
        drawable = DRAWN_FROM_STREAM + (
            DRAWN_FROM_STATE if run_id in self._with_state or state_unknown else ()
        )
        if not below(path, drawable):
            return None
        port, secret = server
        return DrawnPlot(port, urlencode({RUN_ARGUMENT: run_id}), (SECRET_HEADER, secret))

    def drawn_for_sure(self, run_id: str | None, path: str) -> bool:
        """Whether the run's ``path`` is drawn and known to stay so: what the sidebar lists."""
        return (
            self.drawn(run_id, path) is not None
            and run_id in self._answered
            and (below(path, DRAWN_FROM_STREAM) or run_id in self._with_state)
        )

    def show(self, source_id: str, run_id: str | None) -> None:
        """Tell the source which of its plots are drawn now (the sidebar and its panes say so),
        and the proxy, whose panes still on the dashboard's page of one of them then move."""
        drawn = tuple(path for path in DRAWN if self.drawn_for_sure(run_id, path))
        found = self._registry.find(source_id)
        if found is not None:
            found.drawn = drawn
        if drawn and self.on_drawn is not None:
            self.on_drawn(source_id, drawn)
