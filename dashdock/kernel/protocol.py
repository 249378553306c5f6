"""The contract between kernels and the server: environment variables, MIME types, client records.

Both sides import this module, so it must stay free of server and kernel imports.
"""

from __future__ import annotations

import re
from typing import Any

# Set by the server in its own environment, which the kernels it starts inherit.
CLIENTS_DIR_VARIABLE = "DASHDOCK_KERNEL_CLIENTS_DIR"
PRELOAD_VARIABLE = "DASK_DISTRIBUTED__CLIENT__PRELOAD"
DASHBOARD_LINK_VARIABLE = "DASK_DISTRIBUTED__DASHBOARD__LINK"  # where dashdock puts the proxied link
HISTORY_FILE_VARIABLE = "DASHDOCK_HISTORY_FILE"  # the server's history store, for dashdock.export_trace
CELL_STRIPS_VARIABLE = "DASHDOCK_CELL_STRIPS"  # "0": kernels show no per-cell strips

CLIENT_MIME_TYPE = "application/vnd.dashdock.client+json"
PLOT_MIME_TYPE = "application/vnd.dashdock.plot+json"
CELL_MIME_TYPE = "application/vnd.dashdock.cell+json"

# One file per client: "<kernel id>--<client id>.json" in the clients directory.
RECORD_SUFFIX = ".json"
MAX_RECORD_BYTES = 4096

# A kernel's published plots (dashdock.publish) are recorded as a client of this id, whose
# "dashboard" is the kernel's own Bokeh server and whose "flavour" is "bokeh".
PUBLISHED_CLIENT_ID = "published"
FLAVOURS = ("dask", "bokeh")

# One file per kernel: "<kernel id>.cells", the latest report of its recent computing cells.
CELLS_SUFFIX = ".cells"
MAX_CELLS_FILE_BYTES = 2 * 1024 * 1024  # 50 cells with long errors stay well below

_KERNEL_ID = re.compile(r"^[A-Za-z0-9-]{1,64}$")
_CLIENT_ID = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
# A host, or a path on it (a dask-gateway cluster's dashboard is under the gateway's proxy).
_DASHBOARD = re.compile(r"^https?://[^\s/?#]{1,260}(?:/[^\s?#]{0,300})?$")
# Only a plain TCP scheduler can be recorded from another process (inproc:// lives in the
# kernel; tls:// needs the kernel's certificates).
_SCHEDULER = re.compile(r"^tcp://[^\s/?#]{1,260}$")


def record_name(kernel_id: str, client_id: str) -> str:
    return f"{kernel_id}--{client_id}{RECORD_SUFFIX}"


def cells_file_name(kernel_id: str) -> str:
    return f"{kernel_id}{CELLS_SUFFIX}"


def valid_record(document: Any) -> dict[str, Any] | None:
    """The record if it has the expected shape, else None (a kernel's file is input, not trusted)."""
    if not isinstance(document, dict):
        return None
    kernel_id, client_id = document.get("kernel_id"), document.get("client_id")
    dashboard, started = document.get("dashboard"), document.get("started")
    if not (isinstance(kernel_id, str) and _KERNEL_ID.match(kernel_id)):
        return None
    if not (isinstance(client_id, str) and _CLIENT_ID.match(client_id)):
        return None
    if not (isinstance(dashboard, str) and _DASHBOARD.match(dashboard)):
        return None
    if isinstance(started, bool) or not isinstance(started, (int, float)):
        return None
    # Optional (older kernels' records lack it); a malformed one is dropped, not the record.
    scheduler = document.get("scheduler")
    if not (isinstance(scheduler, str) and _SCHEDULER.match(scheduler)):
        scheduler = None
    flavour = document.get("flavour", "dask")
    if flavour not in FLAVOURS:
        return None
    return {
        "kernel_id": kernel_id,
        "client_id": client_id,
        "dashboard": dashboard,
        "started": started,
        "scheduler": scheduler,
        "flavour": flavour,
    }
