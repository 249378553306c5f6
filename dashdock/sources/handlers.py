"""``{base_url}dashdock/api/sources``: the sources, their health, plots and workers."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from dashdock.errors import Invalid
from dashdock.http import DEFAULT_MAX_BODY, SOURCE_ID_ARG, ApiHandler
from dashdock.sources.credentials import parse_credential
from dashdock.sources.listing import listing
from dashdock.sources.model import given_name
from dashdock.sources.registry import SourceRegistry
from dashdock.sources.workers import WORKER_PAGES


class _SourcesAPIHandler(ApiHandler):
    def initialize(self, registry: SourceRegistry, max_body: int = DEFAULT_MAX_BODY) -> None:
        super().initialize(max_body)
        self.registry = registry


class SourcesHandler(_SourcesAPIHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The sources, usable ones first, then saved ones that are disabled (``"disabled": reason``),
        and ``warnings`` about the sources file; with ``?check=1`` the health of those that need it
        most is checked first (health.py); with ``?since=<version>`` only what changed (listing.py)."""
        if self.get_query_argument("check", "0") == "1":
            await self.registry.check_all()
        since = self.get_query_argument("since", None)
        self.finish_json(
            listing(self.registry.list(), self.registry.disabled(), self.registry.warnings, since)
        )

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.read_json_body()
        url = body.get("url")
        if not isinstance(url, str):
            raise Invalid("'url' must be a string, such as http://127.0.0.1:8787.")
        name = given_name(body.get("name"))
        given = body.get("credentials")
        credential = None if given is None else parse_credential(given)
        source, created = await self.registry.add_url(url, name, credential)
        self.finish_json(source.to_json(), 201 if created else 200)


class SourceHandler(_SourcesAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, source_id: str) -> None:
        if (disabled := self.registry.find_disabled(source_id)) is not None:
            self.finish_json(disabled.to_json())
            return
        source = await self.registry.check_health(source_id)
        self.finish_json(source.to_json())

    @web.authenticated
    @authorized
    async def patch(self, source_id: str) -> None:
        """``{"alerts": false}`` mutes a source's alerts (they are still recorded), ``true`` undoes it;
        ``{"credentials": {"kind", "name", "value"}}`` gives its server's credentials, ``null`` forgets
        them."""
        body = self.read_json_body()
        if set(body) == {"credentials"}:
            given = body["credentials"]
            credential = None if given is None else parse_credential(given)
            source = await self.registry.set_credentials(source_id, credential)
            self.finish_json(source.to_json())
            return
        alerts = body.get("alerts")
        if set(body) != {"alerts"} or not isinstance(alerts, bool):
            raise Invalid(
                'The body must be {"alerts": true} or {"alerts": false}, '
                'or {"credentials": {"kind", "name", "value"}} or {"credentials": null}.'
            )
        source = await self.registry.set_alerts(source_id, alerts)
        self.finish_json(source.to_json())

    @web.authenticated
    @authorized
    async def delete(self, source_id: str) -> None:
        """204, or 200 with ``{"warning": ...}`` when the sources file could not be changed."""
        warning = await self.registry.remove(source_id)
        if warning:
            self.finish_json({"warning": warning})
            return
        self.set_status(204)
        self.finish()


class PlotsHandler(_SourcesAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, source_id: str) -> None:
        plots = await self.registry.plots(source_id)
        self.finish_json(
            {
                "plots": [
                    {
                        "name": plot.name,
                        "group": plot.group,
                        "path": plot.path,
                        "description": plot.description,
                        "url": self.proxy_url(source_id, plot.path),
                    }
                    for plot in plots
                ]
            }
        )


class WorkersHandler(_SourcesAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, source_id: str) -> None:
        """A source's workers and, for those the proxy may reach, their dashboard pages."""
        listed = []
        for worker in await self.registry.workers(source_id):
            entry = worker.to_json()
            target = worker.dashboard.netloc if worker.dashboard and worker.reachable else None
            entry["pages"] = (
                [
                    {"name": name, "path": path, "url": self.proxy_url(target, path)}
                    for name, path in WORKER_PAGES
                ]
                if target
                else []
            )
            listed.append(entry)
        self.finish_json({"workers": listed})


def routes(registry: SourceRegistry, max_body: int) -> list[tuple[str, type[ApiHandler], dict[str, object]]]:
    services = {"registry": registry, "max_body": max_body}
    return [
        (r"/dashdock/api/sources", SourcesHandler, services),
        (rf"/dashdock/api/sources/{SOURCE_ID_ARG}", SourceHandler, services),
        (rf"/dashdock/api/sources/{SOURCE_ID_ARG}/plots", PlotsHandler, services),
        (rf"/dashdock/api/sources/{SOURCE_ID_ARG}/workers", WorkersHandler, services),
    ]
