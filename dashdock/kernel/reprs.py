"""dashdock's rich repr of Dask clients and clusters, registered with IPython's formatters.

The bundle adds dashdock's MIME type next to Dask's own ``text/html`` and ``text/plain``, so Lab
renders dashdock's live repr and everything else (classic notebook, nbconvert, a terminal) shows
Dask's output unchanged.
"""

from __future__ import annotations

from typing import Any

from .dashboard import dashboard_url, proxied_link
from .protocol import CLIENT_MIME_TYPE

_registered = False


def register(shell: Any, kernel_id: str | None) -> None:
    """Teach this shell's formatters about Client and Cluster objects, once per kernel."""
    global _registered, _kernel_id
    _kernel_id = kernel_id
    if _registered:
        return
    from distributed import Client
    from distributed.deploy.cluster import Cluster

    formatter = shell.display_formatter
    formatter.mimebundle_formatter.for_type(Client, client_bundle)
    # Clusters display themselves (``_ipython_display_``, a widget); a printer registered for the
    # type is asked first, so the cluster's own widget is replaced by the same bundle as a client's.
    formatter.ipython_display_formatter.for_type(Cluster, _display_cluster)
    _registered = True


_kernel_id: str | None = None


def client_bundle(client: Any) -> dict[str, Any]:
    """dashdock's part of a Client's bundle (IPython adds Dask's ``text/html`` and ``text/plain``)."""
    try:
        identity = client.scheduler_info(n_workers=0)
    except Exception:  # a closed client or a lost scheduler: Dask's own repr says so
        return {}
    data = _data(identity, "client", "Client")
    if data is None:
        return {}
    data["client_id"] = client.id
    return {CLIENT_MIME_TYPE: data}


def _display_cluster(cluster: Any) -> None:
    from IPython.display import display

    bundle: dict[str, Any] = {"text/plain": repr(cluster)}
    try:
        bundle["text/html"] = cluster._repr_html_()
    except Exception:
        pass
    data = _data(getattr(cluster, "scheduler_info", None), "cluster", type(cluster).__name__)
    if data is not None:
        data["name"] = str(getattr(cluster, "name", "") or "")
        bundle[CLIENT_MIME_TYPE] = data
    display(bundle, raw=True)


def _data(identity: Any, kind: str, title: str) -> dict[str, Any] | None:
    dashboard = dashboard_url(identity)
    if dashboard is None:
        return None
    return {
        "version": 1,
        "kind": kind,
        "title": title,
        "kernel_id": _kernel_id,
        "scheduler": identity.get("address"),
        "dashboard": dashboard,
        "dashboard_link": proxied_link(dashboard, "/status"),
        "workers": _count(identity.get("n_workers"), identity.get("workers")),
        "threads": identity.get("total_threads"),
        "memory": identity.get("total_memory"),
    }


def _count(number: Any, workers: Any) -> int | None:
    if isinstance(number, int):
        return number
    return len(workers) if isinstance(workers, dict) else None
