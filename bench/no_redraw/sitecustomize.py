"""Loaded by every Python process of a ``live_panes_cost.py --no-redraw`` run (its directory is put
first on the Jupyter server's PYTHONPATH); acts only in dashdock's watcher. There, a drawn page's
paced redraw (plot_server.py's ``when_changed``) is replaced by nothing: the pages open, are
counted as watched and keep the live reads going, but never redraw. What the watcher then costs is
its reads, its sessions and its recording: the floor under any way of drawing the plots that reads
the scheduler as often. A measuring aid only; dashdock never loads it."""

from __future__ import annotations

from typing import Any


def _no_redraw() -> None:
    from bokeh.document import document

    add = document.Document.add_periodic_callback

    def add_but_never_redraw(self: Any, callback: Any, period_milliseconds: int, *_: Any) -> Any:
        if getattr(callback, "__qualname__", "").endswith("paced.<locals>.when_changed"):
            return add(self, lambda: None, period_milliseconds)
        return add(self, callback, period_milliseconds)

    document.Document.add_periodic_callback = add_but_never_redraw  # type: ignore[method-assign]


with open("/proc/self/cmdline", "rb") as _cmdline:
    if b"dashdock.watcher" in _cmdline.read():
        _no_redraw()
