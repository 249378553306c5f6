"""``dashdock.show``: a live plot of a Dask dashboard in a cell's output."""

from __future__ import annotations

import html
from typing import Any

from .dashboard import dashboard_url, plot_path, proxied_link
from .hooks import kernel_id
from .protocol import PLOT_MIME_TYPE

_HEIGHTS = {"/individual-progress": 280, "/individual-task-stream": 360}
# As in the Lab's frames (src/frame.ts): a dashboard page runs in an opaque origin.
FRAME_SANDBOX = "allow-scripts allow-popups allow-downloads"


def show(target: Any = None, plot: str = "progress", height: int | None = None) -> None:
    """Show a live plot of a client's (or cluster's) dashboard under the cell.

    ``target`` is a ``distributed.Client``, a cluster, or None for the current default client.
    ``plot`` is a plot's name: ``"progress"``, ``"task-stream"``, ``"workers-memory"``,
    ``"graph"``, or any other plot the dashboard lists (``individual-...``).
    In JupyterLab with dashdock the plot follows the Lab theme and stops streaming while it
    is scrolled out of view; elsewhere it is a plain frame on the same page.
    """
    from IPython.display import display

    path = plot_path(plot)
    dashboard = dashboard_url(_identity(target))
    if dashboard is None:
        raise ValueError("This cluster has no dashboard (start it with a dashboard_address).")
    pixels = int(height) if height is not None else _HEIGHTS.get(path, 320)
    link = proxied_link(dashboard, path)
    title = path.removeprefix("/individual-").replace("-", " ").capitalize()
    bundle = {
        PLOT_MIME_TYPE: {
            "version": 1,
            "dashboard": dashboard,
            "path": path,
            "title": title,
            "height": pixels,
            "kernel_id": kernel_id(),
        },
        "text/html": (
            f'<iframe src="{html.escape(link)}" title="{html.escape(title)}" width="100%" '
            f'height="{pixels}" style="border: 0" sandbox="{FRAME_SANDBOX}" '
            'referrerpolicy="no-referrer"></iframe>'
        ),
        "text/plain": f"Live {title.lower()} plot of {dashboard}",
    }
    display(bundle, raw=True)


def _identity(target: Any) -> Any:
    if target is None:
        from distributed import default_client

        target = default_client()
    if hasattr(target, "scheduler_info") and callable(target.scheduler_info):
        return target.scheduler_info(n_workers=0)  # a Client
    return getattr(target, "scheduler_info", None)  # a cluster keeps it up to date itself
