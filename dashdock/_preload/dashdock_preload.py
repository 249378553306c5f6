"""dashdock's Dask client preload: hands each new Client in a kernel to ``dashdock.kernel``.

The Jupyter server names this file in ``DASK_DISTRIBUTED__CLIENT__PRELOAD`` for the kernels it
starts. Dask imports (and reloads) it for every Client, so it only forwards. It never raises: a
Client must work even where dashdock cannot, such as a kernel of another environment with an
older Dask; there it logs a warning instead.
"""

import importlib.util
import logging
import os
import sys

logger = logging.getLogger("dashdock")
_PRIVATE_NAME = "_dashdock_kernel"


def _hooks():
    try:
        from dashdock.kernel import hooks

        return hooks
    except Exception:
        pass
    # Another environment: load the kernel package from next to this file, under a private name.
    try:
        if _PRIVATE_NAME not in sys.modules:
            folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernel")
            spec = importlib.util.spec_from_file_location(
                _PRIVATE_NAME, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder]
            )
            if spec is None or spec.loader is None:
                raise ImportError(f"no kernel package in {folder}")
            package = importlib.util.module_from_spec(spec)
            sys.modules[_PRIVATE_NAME] = package
            spec.loader.exec_module(package)
        return importlib.import_module(_PRIVATE_NAME + ".hooks")
    except Exception as exc:
        sys.modules.pop(_PRIVATE_NAME, None)
        logger.warning("dashdock: the kernel integration cannot run here: %s", exc)
        return None


async def dask_setup(client):
    hooks = _hooks()
    if hooks is not None:
        try:
            await hooks.setup(client)
        except Exception as exc:
            logger.warning("dashdock: could not set up client %s: %s", client.id, exc)


async def dask_teardown(client):
    hooks = _hooks()
    if hooks is not None:
        try:
            await hooks.teardown(client)
        except Exception as exc:
            logger.warning("dashdock: could not tear down client %s: %s", client.id, exc)
