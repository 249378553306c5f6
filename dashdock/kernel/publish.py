"""``dashdock.publish(obj, "My plot")``: a Bokeh figure or layout of the kernel as a dockable plot.

The kernel serves its published plots itself (bokeh_host.py) and tells the Jupyter server where
by a record in the clients directory, like a Dask client's (hooks.py). The server lists them as a
source named after the notebook, "Apps" group; the record goes with the kernel, and so does the
source.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bokeh_host import BokehHost, Mirror, PanelView
from .files import write_atomically
from .protocol import CLIENTS_DIR_VARIABLE, PUBLISHED_CLIENT_ID, record_name

MAX_PUBLISHED = 32
MAX_NAME_CHARS = 100

_host: BokehHost | None = None
_published: dict[str, tuple[str, Mirror | PanelView]] = {}  # path -> (name, mirror)


@dataclass
class Published:
    """A published plot: ``remove()`` takes it off the dashboard."""

    name: str
    path: str
    url: str = field(repr=False)

    def remove(self) -> bool:
        return unpublish(self.name)


def publish(obj: Any, name: str) -> Published:
    """Show ``obj`` (a Bokeh model: figure, layout, widget box; or a Panel object) as a plot ``name``.

    Changes the kernel makes to it afterwards (``source.stream(...)``, new data, titles, glyphs,
    a Panel widget's value) show in every pane that displays it. Publishing again under the same
    name replaces the object and keeps the open panes; at most 32 plots are published at once.
    """
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_CHARS:
        raise ValueError(f"A published plot needs a name of 1 to {MAX_NAME_CHARS} characters.")
    view = _view_of(obj)
    name = name.strip()
    path = next((p for p, (n, _) in _published.items() if n == name), None) or _free_path(name)
    if path not in _published and len(_published) >= MAX_PUBLISHED:
        raise ValueError(f"{MAX_PUBLISHED} plots are published already; remove one first.")
    if isinstance(view, Mirror):
        view.document.title = name
    host = _started_host()
    old = _published.get(path)
    host.add(path, name, view)
    _published[path] = (name, view)
    if old is not None:
        old[1].close()
    _write_record(host)
    return Published(name, path, f"http://127.0.0.1:{host.port}{path}")


def _view_of(obj: Any) -> Mirror | PanelView:
    """How ``obj`` is served: a Bokeh model through a mirror of it, a Panel object by Panel."""
    from bokeh.model import Model

    panel = sys.modules.get("panel")  # whoever publishes a Panel object has imported Panel
    if panel is not None and isinstance(obj, panel.viewable.Viewable):
        return PanelView(obj)
    if not isinstance(obj, Model):
        raise TypeError(
            "dashdock.publish shows Bokeh models (a figure, a layout) and Panel objects, "
            f"not {type(obj).__name__}."
        )
    if obj.document is not None:
        raise ValueError(
            "This Bokeh object is already shown elsewhere (it belongs to a document); publish a new one."
        )
    return Mirror(obj)


def unpublish(name: str) -> bool:
    """Take the plot ``name`` off the dashboard; False when nothing is published under it."""
    path = next((p for p, (n, _) in _published.items() if n == name), None)
    if path is None or _host is None:
        return False
    _host.remove(path)
    _published.pop(path)[1].close()
    return True


def _free_path(name: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "plot"
    path, number = f"/{base}", 1
    while path in _published:
        number += 1
        path = f"/{base}-{number}"
    return path


def _started_host() -> BokehHost:
    global _host
    if _host is None:
        _host = BokehHost()
    _host.start()
    return _host


def _write_record(host: BokehHost) -> None:
    """Tell the Jupyter server where the published plots are (once; the index lists them)."""
    from .hooks import ipython_kernel_shell, kernel_id

    directory = os.environ.get(CLIENTS_DIR_VARIABLE)
    kernel = kernel_id() if ipython_kernel_shell() is not None else None
    if not directory or kernel is None:
        return  # not in a kernel of a dashdock server: served, but nobody lists it
    record = {
        "kernel_id": kernel,
        "client_id": PUBLISHED_CLIENT_ID,
        "dashboard": f"http://127.0.0.1:{host.port}",
        "started": time.time(),
        "flavour": "bokeh",
    }
    write_atomically(Path(directory) / record_name(kernel, PUBLISHED_CLIENT_ID), json.dumps(record).encode())
