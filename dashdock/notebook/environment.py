"""What kernels started by this server inherit: a proxied dashboard link, the client preload, the history.

Kernels inherit the server's environment, and Dask reads its configuration from it, so both are
set as environment variables, each only where the user has not set their own.
"""

from __future__ import annotations

import ast
import logging
import os
from pathlib import Path
from typing import Protocol

from jupyter_core.paths import jupyter_runtime_dir
from jupyter_server.utils import url_path_join

from dashdock.kernel.protocol import (
    CELL_STRIPS_VARIABLE,
    CLIENTS_DIR_VARIABLE,
    DASHBOARD_LINK_VARIABLE,
    HISTORY_FILE_VARIABLE,
    PRELOAD_VARIABLE,
)

_DASK_DEFAULT_LINK = "{scheme}://{host}:{port}/status"
_LOGGING_VARIABLE = "DASK_LOGGING"
# The only INFO lines these loggers write are about loading preloads.
_PRELOAD_LOGGERS = ("distributed.preloading", "distributed.utils")
# A file, not a module name: Dask imports a missing module name as an error in Client(), which
# would break clients in kernels of environments without dashdock. The file never raises.
_PRELOAD_FILE = str(Path(__file__).parent.parent / "_preload" / "dashdock_preload.py")


def offer_proxied_dashboard_link(base_url: str, log: logging.Logger) -> None:
    """``client.dashboard_link`` through dashdock's proxy, so it opens under any base URL."""
    import dask.config  # light: distributed's own (heavy) import is not needed to read settings

    if DASHBOARD_LINK_VARIABLE in os.environ:
        return
    own = dask.config.get("distributed.dashboard.link", default=None)
    if own not in (None, _DASK_DEFAULT_LINK):
        log.info("dashdock: keeping the distributed.dashboard.link from Dask's configuration")
        return
    os.environ[DASHBOARD_LINK_VARIABLE] = url_path_join(base_url, "dashdock/proxy/{host}:{port}/status")


def offer_client_preload(clients_dir: Path) -> None:
    """Added to the user's own preloads (Dask's configuration or the variable), never instead."""
    import dask.config

    preloads = dask.config.get("distributed.client.preload", default=[]) or []
    if isinstance(preloads, str):
        preloads = [preloads]
    if PRELOAD_VARIABLE in os.environ:
        try:
            preloads = ast.literal_eval(os.environ[PRELOAD_VARIABLE])
        except (ValueError, SyntaxError):
            preloads = [os.environ[PRELOAD_VARIABLE]]
    preloads = [p for p in preloads if not str(p).endswith("dashdock_preload.py")]
    os.environ[PRELOAD_VARIABLE] = repr([*preloads, _PRELOAD_FILE])
    os.environ[CLIENTS_DIR_VARIABLE] = str(clients_dir)
    _quiet_preload_logging()


def offer_cell_strips(enabled: bool) -> None:
    """Whether kernels show per-cell strips; a notebook may still change its own mind."""
    os.environ[CELL_STRIPS_VARIABLE] = "1" if enabled else "0"


def offer_gateway_settings(settings: dict[str, str | None]) -> None:
    """The gateway dashdock's traits name, for ``Gateway()`` in kernels too (the sidebar's inserted
    code uses it), where Dask's configuration (files or ``DASK_GATEWAY__*``) does not name one.

    ``settings``: Dask config keys under ``gateway.`` (``address``, ``auth.type``, ...) -> values.
    """
    import dask.config

    for key, value in settings.items():
        if value and dask.config.get(f"gateway.{key}", default=None) in (None, ""):
            variable = "DASK_GATEWAY__" + key.upper().replace("-", "_").replace(".", "__")
            os.environ[variable] = value


def offer_history_file(path: Path) -> None:
    """Where ``dashdock.export_trace`` in a kernel finds the runs this server recorded.

    dashdock's own variable, so this server's store always wins (not a user's Dask setting).
    """
    os.environ[HISTORY_FILE_VARIABLE] = str(path)


def _quiet_preload_logging() -> None:
    """Distributed logs a few INFO lines per preload and Client to stderr, which a notebook shows
    under every cell that connects a client. Dask merges a dict in ``DASK_LOGGING`` into its
    logging levels, so this adds levels for those loggers, except where the user set one."""
    try:
        levels = ast.literal_eval(os.environ.get(_LOGGING_VARIABLE, "{}"))
    except (ValueError, SyntaxError):
        return
    if isinstance(levels, dict):
        quiet = {name: "warning" for name in _PRELOAD_LOGGERS if name not in levels}
        os.environ[_LOGGING_VARIABLE] = repr({**levels, **quiet})


def private_runtime_dir() -> str:
    """The user's private runtime directory, where kernels write their client records."""
    path = Path(jupyter_runtime_dir())
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return str(path)


class KernelTraits(Protocol):
    """The extension's traits that say what kernels are offered (DashdockApp declares them)."""

    @property
    def kernel_dashboard_link(self) -> bool: ...
    @property
    def kernel_integration(self) -> bool: ...
    @property
    def cell_strips(self) -> bool: ...
    @property
    def history(self) -> bool: ...
    @property
    def history_file(self) -> str: ...


def offer_to_kernels(
    traits: KernelTraits,
    base_url: str,
    clients_dir: Path,
    gateway_settings: dict[str, str | None] | None,
    log: logging.Logger,
) -> None:
    """What kernels started by this server find in their environment, as the traits say."""
    if traits.kernel_dashboard_link:
        offer_proxied_dashboard_link(base_url, log)
    if gateway_settings is not None:
        offer_gateway_settings(gateway_settings)
    if traits.kernel_integration:
        offer_client_preload(clients_dir)
        offer_cell_strips(traits.cell_strips)
    if traits.history:
        offer_history_file(Path(traits.history_file))
