"""Where a client's dashboard really is (Dask's own link may already point at dashdock's proxy)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

_PLOT_NAME = re.compile(r"^[a-z0-9-]{1,80}$")
# Short names people type for the plots they use most.
_ALIASES = {"memory": "workers-memory", "tasks": "task-stream", "stream": "task-stream"}


def dashboard_url(identity: Any) -> str | None:
    """``http://host:port`` of the dashboard from a scheduler's identity, None when it has none."""
    if not isinstance(identity, dict):
        return None
    port = (identity.get("services") or {}).get("dashboard")
    address = identity.get("address")
    if not isinstance(port, int) or not isinstance(address, str):
        return None
    protocol, _, rest = address.partition("://")
    if protocol == "inproc":
        # An in-process scheduler listens for HTTP on every interface, loopback included.
        host = "127.0.0.1"
    else:
        host = rest.rsplit(":", 1)[0] if rest.count(":") == 1 or rest.startswith("[") else rest
        host = host.strip("[]")
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def gateway_dashboard(client: Any) -> str | None:
    """The dashboard of a dask-gateway cluster's client: a path under the gateway's proxy
    (``.../services/dask-gateway/clusters/<name>``), which is where the Jupyter server can reach
    it; the scheduler's own port may be on a network only the gateway sees.

    A gateway whose public address is a path (daskhub sets ``/services/dask-gateway/``, for the
    browser's own host) gives a link without a host: it is read on the host of the address this
    client talks to the gateway on, which serves the same paths (the hub's proxy)."""
    cluster = getattr(client, "cluster", None)
    if cluster is None or not type(cluster).__module__.startswith("dask_gateway"):
        return None
    link = getattr(cluster, "dashboard_link", None)
    if isinstance(link, str) and link.startswith("/") and not link.startswith("//"):
        link = _on_host_of(getattr(getattr(cluster, "gateway", None), "address", None), link)
    if isinstance(link, str) and link.startswith(("http://", "https://")):
        return link.removesuffix("/status").rstrip("/")
    return None


def _on_host_of(address: object, path: str) -> str | None:
    """``path`` on the scheme and host of ``address`` (an http(s) URL), or None."""
    if not isinstance(address, str):
        return None
    parts = urlsplit(address)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def plot_path(plot: str) -> str:
    """'progress', 'Task Stream', 'individual-task-stream' -> '/individual-...'."""
    name = plot.strip().lower().replace("_", "-").replace(" ", "-").strip("/")
    name = name.removeprefix("individual-")
    name = _ALIASES.get(name, name)
    if not _PLOT_NAME.match(name):
        raise ValueError(f"{plot!r} is not a plot name such as 'progress' or 'task-stream'.")
    return f"/individual-{name}"


def proxied_link(dashboard: str, path: str) -> str:
    """The link the browser should follow: through Dask's configured link template when set
    (dashdock gives kernels one that goes through its proxy), else the dashboard itself."""
    try:
        from distributed.utils import format_dashboard_link

        host, _, port = dashboard.removeprefix("http://").rpartition(":")
        link = format_dashboard_link(host.strip("[]"), int(port))
    except Exception:  # a template of the user's that needs more than host and port
        return dashboard + path
    if link.endswith("/status"):
        return link[: -len("/status")] + path
    return dashboard + path
