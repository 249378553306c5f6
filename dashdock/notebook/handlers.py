"""REST API for notebook integration: what kernels' clients are known, and a live cluster summary.

``GET dashdock/api/summary?dashboard=<url>[&kernel=<id>]`` answers a rich repr in a notebook:
the source its plots open from and the scheduler's live counts (from ``/json/counts.json``,
which stays cheap and reliable on busy clusters, unlike ``/json/identity.json``).
``GET dashdock/api/kernels/<kernel id>/cells/<cell id>`` answers a cell strip: what the cell
computed, as its kernel last reported.
"""

from __future__ import annotations

import asyncio

from jupyter_server.auth.decorator import authorized
from tornado import web

from dashdock.errors import Invalid, host_not_allowed
from dashdock.http import ApiHandler
from dashdock.ids import is_kernel_id
from dashdock.notebook.cells import read_cell
from dashdock.notebook.discovery import KernelClients
from dashdock.targets import Allowlist, TargetError, parse_dashboard_url, without_userinfo
from dashdock.upstream import UpstreamClient, UpstreamError

# Dask's name -> ours; missing numbers stay missing (older schedulers).
_COUNTS = {
    "workers": "workers",
    "cores": "threads",
    "tasks": "tasks",
    "processing": "processing",
    "waiting": "waiting",
    "memory": "in_memory",
    "erred": "erred",
    "bytes": "stored_bytes",
    "clients": "clients",
}


class _KernelAPIHandler(ApiHandler):
    def initialize(self, kernel_clients: KernelClients, client: UpstreamClient, allowlist: Allowlist) -> None:
        super().initialize()
        self.kernel_clients = kernel_clients
        self.upstream = client
        self.allowlist = allowlist


class KernelClientsHandler(_KernelAPIHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The clients kernels reported, after a fresh look at what they wrote."""
        await self.kernel_clients.scan()
        clients = [
            {
                "client_id": record.client_id,
                "kernel_id": record.kernel_id,
                "dashboard": record.dashboard,
                "source": source_id,
            }
            for record, source_id in self.kernel_clients.clients.values()
        ]
        self.finish_json({"clients": clients})


class SummaryHandler(_KernelAPIHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        kernel_id = self.get_query_argument("kernel", "") or None
        if kernel_id is not None and not is_kernel_id(kernel_id):
            raise Invalid("'kernel' is not a kernel id.")
        try:
            dashboard = parse_dashboard_url(without_userinfo(self.get_query_argument("dashboard", "")))
        except TargetError as exc:
            raise Invalid(str(exc)) from exc

        source = self.kernel_clients.source_for(dashboard.url, kernel_id)
        if source is None and not self.allowlist.allows(dashboard.target):
            raise host_not_allowed(dashboard.target.netloc)
        root = source.dashboard.url if source is not None else dashboard.url
        counts: dict[str, int] | None = None
        message = ""
        try:
            document = await self.upstream.get_json(root + "/json/counts.json")
        except UpstreamError as exc:
            message = f"The scheduler's dashboard is not available: {exc.reason}"
        else:
            if isinstance(document, dict):
                counts = {
                    ours: value
                    for theirs, ours in _COUNTS.items()
                    if isinstance(value := document.get(theirs), int) and not isinstance(value, bool)
                }
        self.finish_json(
            {
                "source": source.to_json() if source is not None else None,
                "target": dashboard.target.netloc,
                "counts": counts,
                "message": message,
            }
        )


class CellHandler(_KernelAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, kernel_id: str, cell_id: str) -> None:
        """What one cell computed, as its kernel last reported (the Lab follows a strip with this
        after the cell has ended, when the kernel can no longer update the cell's output)."""
        entry = await asyncio.to_thread(read_cell, self.kernel_clients.directory, kernel_id, cell_id)
        self.finish_json(entry)


def routes(
    kernel_clients: KernelClients, client: UpstreamClient, allowlist: Allowlist
) -> list[tuple[str, type[ApiHandler], dict[str, object]]]:
    services = {"kernel_clients": kernel_clients, "client": client, "allowlist": allowlist}
    return [
        (r"/dashdock/api/kernel-clients", KernelClientsHandler, services),
        (r"/dashdock/api/summary", SummaryHandler, services),
        (r"/dashdock/api/kernels/([^/]+)/cells/([^/]+)", CellHandler, services),
    ]
