"""REST API for notebook integration: what kernels' clients are known, and a live cluster summary.

``GET dashdock/api/summary?dashboard=<url>[&kernel=<id>]`` answers a rich repr in a notebook:
the source its plots open from and the scheduler's live counts (summary.py).
``GET dashdock/api/kernels/<kernel id>/cells/<cell id>`` answers a cell strip: what the cell
computed, as its kernel last reported.
"""

from __future__ import annotations

import asyncio

from jupyter_server.auth.decorator import authorized
from tornado import web

from dashdock.errors import Invalid
from dashdock.http import ApiHandler
from dashdock.ids import is_kernel_id
from dashdock.notebook.cells import read_cell
from dashdock.notebook.discovery import KernelClients
from dashdock.notebook.summary import ClusterSummaries


class _KernelAPIHandler(ApiHandler):
    def initialize(self, kernel_clients: KernelClients, summaries: ClusterSummaries) -> None:
        super().initialize()
        self.kernel_clients = kernel_clients
        self.summaries = summaries


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
        dashboard = self.get_query_argument("dashboard", "")
        self.finish_json(await self.summaries.summary(dashboard, kernel_id))


class CellHandler(_KernelAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, kernel_id: str, cell_id: str) -> None:
        """What one cell computed, as its kernel last reported (the Lab follows a strip with this
        after the cell has ended, when the kernel can no longer update the cell's output)."""
        entry = await asyncio.to_thread(read_cell, self.kernel_clients.directory, kernel_id, cell_id)
        self.finish_json(entry)


def routes(
    kernel_clients: KernelClients, summaries: ClusterSummaries
) -> list[tuple[str, type[ApiHandler], dict[str, object]]]:
    services = {"kernel_clients": kernel_clients, "summaries": summaries}
    return [
        (r"/dashdock/api/kernel-clients", KernelClientsHandler, services),
        (r"/dashdock/api/summary", SummaryHandler, services),
        (r"/dashdock/api/kernels/([^/]+)/cells/([^/]+)", CellHandler, services),
    ]
