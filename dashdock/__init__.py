"""dashdock: dock the live plots of Dask dashboards into JupyterLab."""

from __future__ import annotations

from ._version import __version__
from .app import DashdockApp

__all__ = ["DashdockApp", "__version__"]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "dashdock"}]


def _jupyter_server_extension_points() -> list[dict[str, object]]:
    return [{"module": "dashdock", "app": DashdockApp}]
