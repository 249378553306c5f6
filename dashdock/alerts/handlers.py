"""``{base_url}dashdock/api/alerts``: the alerts recorded, and the settings that shape them."""

from __future__ import annotations

import math

from jupyter_server.auth.decorator import authorized
from tornado import web

from dashdock.alerts.preferences import AlertPreferences
from dashdock.errors import DashdockError, Invalid
from dashdock.history.model import Alert
from dashdock.history.service import HistoryService
from dashdock.http import DEFAULT_MAX_BODY, ApiHandler
from dashdock.ids import is_source_id
from dashdock.sources.registry import SourceRegistry

# Most alerts one answer lists (the newest updated first); a run keeps at most history's bound.
MAX_LISTED = 500


class _AlertsHandler(ApiHandler):
    def initialize(
        self,
        history: HistoryService,
        registry: SourceRegistry,
        preferences: AlertPreferences,
        max_body: int = DEFAULT_MAX_BODY,
    ) -> None:
        super().initialize(max_body)
        self.history = history
        self.registry = registry
        self.preferences = preferences


class AlertsHandler(_AlertsHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """``?source=<id>`` for one source's, ``?since=<unix seconds>`` for those updated after it."""
        source = self.get_query_argument("source", None) or None
        if source is not None and not is_source_id(source):
            raise Invalid("'source' must be a source id.")
        since_text = self.get_query_argument("since", None)
        since = None
        if since_text:
            try:
                since = float(since_text)
            except ValueError:
                raise Invalid("'since' must be a time in Unix seconds.") from None
            if not math.isfinite(since):
                raise Invalid("'since' must be a time in Unix seconds.")
        alerts = await self.history.alerts(source, since, MAX_LISTED)
        self.finish_json({"alerts": [alert.to_json(self._notifies(alert)) for alert in alerts]})

    def _notifies(self, alert: Alert) -> bool:
        if alert.kind not in self.preferences.kinds:
            return False
        try:
            return self.registry.get(alert.source).alerts
        except DashdockError:  # a source that is gone (or disabled) cannot have been muted since
            return True


class AlertSettingsHandler(_AlertsHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json(self.preferences.to_json())

    @web.authenticated
    @authorized
    async def put(self) -> None:
        chosen = AlertPreferences.from_json(self.read_json_body())
        self.preferences.kinds = chosen.kinds
        self.preferences.computation_seconds = chosen.computation_seconds
        self.history.set_computation_seconds(chosen.computation_seconds)
        self.finish_json(self.preferences.to_json())


def routes(
    history: HistoryService, registry: SourceRegistry, max_body: int
) -> list[tuple[str, type[ApiHandler], dict[str, object]]]:
    services = {
        "history": history,
        "registry": registry,
        "preferences": AlertPreferences(),
        "max_body": max_body,
    }
    return [
        (r"/dashdock/api/alerts", AlertsHandler, services),
        (r"/dashdock/api/alerts/settings", AlertSettingsHandler, services),
    ]
