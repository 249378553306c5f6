"""A cluster's live summary for a notebook's rich repr: the source it opens from, and its counts.

The counts come from the dashboard's ``/json/counts.json``, which stays cheap and reliable on
busy clusters (unlike ``/json/identity.json``). A dashboard no source shows is asked only when the
allowlist allows its host.
"""

from __future__ import annotations

from typing import Any

from dashdock.errors import Invalid, host_not_allowed
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


class ClusterSummaries:
    def __init__(self, kernel_clients: KernelClients, client: UpstreamClient, allowlist: Allowlist) -> None:
        self._kernel_clients = kernel_clients
        self._client = client
        self._allowlist = allowlist

    async def summary(self, dashboard_text: str, kernel_id: str | None) -> dict[str, Any]:
        """``{"source", "target", "counts", "message"}`` of the dashboard a notebook's client names."""
        try:
            dashboard = parse_dashboard_url(without_userinfo(dashboard_text))
        except TargetError as exc:
            raise Invalid(str(exc)) from exc
        source = self._kernel_clients.source_for(dashboard.url, kernel_id)
        if source is None and not self._allowlist.allows(dashboard.target):
            raise host_not_allowed(dashboard.target.netloc)
        # A client's dashboard link names Dask's status page; the counts are beside it.
        root = source.dashboard.url if source is not None else dashboard.url.removesuffix("/status")
        counts: dict[str, int] | None = None
        message = ""
        try:
            document = await self._client.get_json(root + "/json/counts.json")
        except UpstreamError as exc:
            message = f"The scheduler's dashboard is not available: {exc.reason}"
        else:
            if isinstance(document, dict):
                counts = {
                    ours: value
                    for theirs, ours in _COUNTS.items()
                    if isinstance(value := document.get(theirs), int) and not isinstance(value, bool)
                }
        return {
            "source": source.to_json() if source is not None else None,
            "target": dashboard.target.netloc,
            "counts": counts,
            "message": message,
        }
