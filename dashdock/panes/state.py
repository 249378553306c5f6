"""Live state of the panes the proxy feeds: which websockets relay for which pane, paused, throttled.

A pane's iframe URL carries ``dashdock-pane=<id>``; Bokeh appends the page's query to its websocket
URL, so the relay of that page knows its pane. The frontend sets a pane's state through the API
(paused while the user says so or while the pane is hidden; an update interval for slow machines)
and the relays apply it. Counters say, from the server's side, what each pane costs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

PANE_QUERY_KEY = "dashdock-pane"
ALLOWED_INTERVALS = (0.0, 1.0, 5.0)


@dataclass
class PaneState:
    paused: bool = False
    interval: float = 0.0  # seconds between deliveries; 0 is live


@dataclass
class RelayStats:
    """What one relay has carried to the browser."""

    started: float = field(default_factory=time.monotonic)
    messages: int = 0
    bytes: int = 0
    streaming: bool = True  # the dashboard's side is open: False once a pause (or the end) closed it


class PaneRelay:
    """The handle a websocket relay registers: its stats, and how to pause it."""

    def __init__(self, pane_id: str, source_id: str | None, on_change: Callable[[PaneState], None]) -> None:
        self.pane_id = pane_id
        self.source_id = source_id
        self.stats = RelayStats()
        self.on_change = on_change


class PaneRegistry:
    """Pane states (only those that differ from live) and the relays currently open for each pane."""

    def __init__(self) -> None:
        self._states: dict[str, PaneState] = {}
        self._relays: dict[str, set[PaneRelay]] = {}

    def state(self, pane_id: str) -> PaneState:
        return self._states.get(pane_id, PaneState())

    def set_state(self, pane_id: str, state: PaneState) -> None:
        if state == PaneState():
            self._states.pop(pane_id, None)
        else:
            self._states[pane_id] = state
        for relay in list(self._relays.get(pane_id, ())):
            relay.on_change(state)

    def attach(self, relay: PaneRelay) -> None:
        self._relays.setdefault(relay.pane_id, set()).add(relay)

    def detach(self, relay: PaneRelay) -> None:
        relays = self._relays.get(relay.pane_id)
        if relays is not None:
            relays.discard(relay)
            if not relays:
                del self._relays[relay.pane_id]

    def to_json(self, pane_id: str) -> dict[str, object]:
        state = self.state(pane_id)
        relays = self._relays.get(pane_id, set())
        now = time.monotonic()
        return {
            "id": pane_id,
            "paused": state.paused,
            "interval": state.interval,
            "relays": [
                {
                    "source": relay.source_id,
                    "messages": relay.stats.messages,
                    "bytes": relay.stats.bytes,
                    "seconds": round(now - relay.stats.started, 3),
                    "streaming": relay.stats.streaming,
                }
                for relay in relays
            ],
        }

    def known_panes(self) -> list[str]:
        return sorted(set(self._states) | set(self._relays))
