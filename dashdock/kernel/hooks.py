"""The preload's work on each new Client in a kernel: the rich repr, and telling the server about it.

The server finds clients through small files in a directory it names in the kernels' environment
(one per client, removed when the client closes); it drops files of kernels that are gone.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from . import cells, reprs
from .dashboard import dashboard_url, gateway_dashboard
from .files import write_atomically
from .protocol import CLIENTS_DIR_VARIABLE, record_name

logger = logging.getLogger("dashdock")

_CONNECTION_FILE = re.compile(r"kernel-([A-Za-z0-9-]{1,64})\.json$")
_written: dict[str, Path] = {}  # client id -> its record


def ipython_kernel_shell() -> Any:
    """The shell when this process is an IPython kernel; None elsewhere (a worker, a script)."""
    if "ipykernel" not in sys.modules:
        return None
    from IPython import get_ipython

    shell = get_ipython()
    return shell if shell is not None and getattr(shell, "kernel", None) is not None else None


def kernel_id() -> str | None:
    """The id the Jupyter server knows this kernel by, from its connection file's name."""
    try:
        from ipykernel.connect import get_connection_file

        match = _CONNECTION_FILE.search(get_connection_file())
    except Exception:
        return None
    return match.group(1) if match else None


async def setup(client: Any) -> None:
    shell = ipython_kernel_shell()
    if shell is None:
        return
    kernel = kernel_id()
    reprs.register(shell, kernel)
    directory = os.environ.get(CLIENTS_DIR_VARIABLE)
    # Every call on the scheduler is bounded: Dask awaits this in Client(), whose own timeout
    # covers only connecting, and a scheduler that accepts but never answers must not hang it.
    identity = await asyncio.wait_for(client.scheduler.identity(n_workers=0), cells.SCHEDULER_TIMEOUT)
    # The scheduler keeps a task stream from now on (Dask starts one only when first asked), so
    # the history has what this client computes before the server's recorder attaches.
    await asyncio.wait_for(client.scheduler.get_task_stream_index(), cells.SCHEDULER_TIMEOUT)
    dashboard = gateway_dashboard(client) or dashboard_url(identity)
    accounting = cells.accounting(shell, kernel, Path(directory) if directory else None)
    await accounting.add_client(client, dashboard)
    if not directory or kernel is None:
        return
    if dashboard is None:
        logger.info("dashdock: the scheduler of %s has no dashboard; not reported", client.id)
        return
    record = {
        "kernel_id": kernel,
        "client_id": client.id,
        "dashboard": dashboard,
        "started": time.time(),
        "scheduler": client.scheduler.address,  # what the server's history recorder reads
    }
    path = Path(directory) / record_name(kernel, client.id)
    write_atomically(path, json.dumps(record).encode())
    _written[client.id] = path


async def teardown(client: Any) -> None:
    _forget(_written.pop(client.id, None))
    accounting = cells.current()
    if accounting is not None:
        accounting.remove_client(client)


def _forget(path: Path | None) -> None:
    if path is not None:
        try:
            path.unlink()
        except OSError:
            pass


@atexit.register
def _forget_all() -> None:
    """A kernel that exits with clients still open (a restart) takes its records with it."""
    for path in list(_written.values()):
        _forget(path)
    accounting = cells.current()
    if accounting is not None:
        accounting.forget_file()
