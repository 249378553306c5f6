"""dashdock: dock the live plots of Dask dashboards into JupyterLab.

Kernels import this package (``dashdock.show``, the Dask client preload), so nothing of the
Jupyter server is imported until the server asks for its extension.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dashdock._version import __version__

if TYPE_CHECKING:
    from dashdock.app import DashdockApp
    from dashdock.diagnosis.notebook import diagnose
    from dashdock.history.export import export_trace
    from dashdock.kernel.cells import cell_strips
    from dashdock.kernel.metrics import metric, metrics
    from dashdock.kernel.publish import publish, unpublish
    from dashdock.kernel.show import show

__all__ = [
    "DashdockApp",
    "__version__",
    "cell_strips",
    "diagnose",
    "export_trace",
    "metric",
    "metrics",
    "publish",
    "show",
    "unpublish",
]


def __getattr__(name: str) -> Any:
    if name == "DashdockApp":
        from dashdock.app import DashdockApp

        return DashdockApp
    if name == "show":
        from dashdock.kernel.show import show

        return show
    if name == "cell_strips":
        from dashdock.kernel.cells import cell_strips

        return cell_strips
    if name in ("metric", "metrics"):
        from dashdock.kernel import metrics

        return getattr(metrics, name)
    if name in ("publish", "unpublish"):
        from dashdock.kernel import publish

        return getattr(publish, name)
    if name == "export_trace":
        from dashdock.history.export import export_trace

        return export_trace
    if name == "diagnose":
        from dashdock.diagnosis.notebook import diagnose

        return diagnose
    raise AttributeError(f"module 'dashdock' has no attribute {name!r}")


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "dashdock"}]


def _jupyter_server_extension_points() -> list[dict[str, object]]:
    from dashdock.app import DashdockApp

    return [{"module": "dashdock", "app": DashdockApp}]
