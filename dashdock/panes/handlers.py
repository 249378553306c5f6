"""``{base_url}dashdock/api/panes``: what each open pane costs, and its relay state."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from dashdock.errors import Invalid
from dashdock.http import DEFAULT_MAX_BODY, PANE_ID_ARG, ApiHandler
from dashdock.panes.state import ALLOWED_INTERVALS, PaneRegistry, PaneState


class _PanesAPIHandler(ApiHandler):
    def initialize(self, panes: PaneRegistry, max_body: int = DEFAULT_MAX_BODY) -> None:
        super().initialize(max_body)
        self.panes = panes


class PanesHandler(_PanesAPIHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json({"panes": [self.panes.to_json(pane) for pane in self.panes.known_panes()]})


class PaneHandler(_PanesAPIHandler):
    """A pane's relay state: ``{"paused": bool, "interval": 0 | 1 | 5}`` (seconds between updates)."""

    @web.authenticated
    @authorized
    async def get(self, pane_id: str) -> None:
        self.finish_json(self.panes.to_json(pane_id))

    @web.authenticated
    @authorized
    async def patch(self, pane_id: str) -> None:
        body = self.read_json_body()
        state = self.panes.state(pane_id)
        paused, interval = body.get("paused", state.paused), body.get("interval", state.interval)
        if not isinstance(paused, bool):
            raise Invalid("'paused' must be true or false.")
        if (
            isinstance(interval, bool)
            or not isinstance(interval, int | float)
            or interval not in ALLOWED_INTERVALS
        ):
            raise Invalid("'interval' must be one of 0 (live), 1 or 5 seconds.")
        self.panes.set_state(pane_id, PaneState(paused=paused, interval=float(interval)))
        self.finish_json(self.panes.to_json(pane_id))


def routes(panes: PaneRegistry, max_body: int) -> list[tuple[str, type[ApiHandler], dict[str, object]]]:
    services = {"panes": panes, "max_body": max_body}
    return [
        (r"/dashdock/api/panes", PanesHandler, services),
        (rf"/dashdock/api/panes/{PANE_ID_ARG}", PaneHandler, services),
    ]
