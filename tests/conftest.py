"""Fixtures: one real Dask LocalCluster per session, recording upstream servers, the Jupyter server."""

from __future__ import annotations

import asyncio
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _ports import kernel_ports_below_ephemeral
from _support import Jupyter, RecordingUpstream, WarningsLog
from distributed import LocalCluster
from tornado.simple_httpclient import SimpleAsyncHTTPClient
from traitlets.config import Config

from dashdock.proxy.bokehjs.precompress import precompress
from dashdock.proxy.bokehjs.serve import local_js_dir

# pytest-jupyter has no entry point: its server fixtures are loaded here.
pytest_plugins = ["pytest_jupyter.jupyter_server"]


@pytest.fixture(autouse=True)
def _environment() -> Iterator[None]:
    """The extension writes what kernels inherit into this process's environment (the client
    preload, the proxied link, the gateway's settings): each test gets it back as it found it."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="session", autouse=True)
def _kernel_ports() -> None:
    """The servers under test run in this process: their kernels' ports are chosen where no
    connection takes them (_ports.py)."""
    kernel_ports_below_ephemeral()


@pytest.fixture(scope="session")
def dask_cluster() -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    )
    yield cluster
    cluster.close()


@pytest.fixture(scope="session")
def dashboard_port(dask_cluster: LocalCluster) -> int:
    return dask_cluster.scheduler.http_server.port


@pytest.fixture(scope="session")
def dashboard_url(dashboard_port: int) -> str:
    """The scheduler's dashboard root, as a user would type it."""
    return f"http://127.0.0.1:{dashboard_port}"


@pytest.fixture(scope="session")
def _recorder_session() -> Iterator[RecordingUpstream]:
    upstream = RecordingUpstream().start()
    yield upstream
    upstream.stop()


@pytest.fixture(scope="session")
def _outsider_session() -> Iterator[RecordingUpstream]:
    upstream = RecordingUpstream().start()
    yield upstream
    upstream.stop()


@pytest.fixture
def recorder(_recorder_session: RecordingUpstream) -> RecordingUpstream:
    """A loopback 'dashboard' that records every request it receives (cleared for each test)."""
    _recorder_session.clear()
    return _recorder_session


@pytest.fixture
def outsider(_outsider_session: RecordingUpstream) -> RecordingUpstream:
    """A second recording server, for tests where it is not an allowed target."""
    _outsider_session.clear()
    return _outsider_session


@pytest.fixture
def jp_base_url() -> str:
    return "/"


@pytest.fixture
def sources_file(tmp_path: Path) -> Path:
    return tmp_path / "dashdock" / "sources.json"


@pytest.fixture
def dashdock_config() -> dict[str, Any]:
    """DashdockApp traits for the server under test; override in a module or class to change them."""
    return {}


@pytest.fixture(scope="session")
def bokeh_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """BokehJS precompressed once for the run, so no test server starts that work itself: xdist's
    workers share it (each did it, 17 s of a core apiece, while the other waited for the cores)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    cache = shared / "bokeh-cache"
    with (shared / "bokeh-cache.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker compresses; the others wait for it
        done = cache / ".complete"
        if not done.exists():
            js_dir = local_js_dir()
            assert js_dir is not None
            names = sorted(p.name for p in js_dir.glob("bokeh*.min.js"))
            cache.mkdir(exist_ok=True)
            # In this process, not as the server runs it (``python -m ...precompress``, niced to 19):
            # on a loaded 2-core machine a niced process gets next to no CPU, and every test
            # waiting on this fixture ran into its timeout.
            precompress(js_dir, cache, names)
            done.touch()
    return cache


@pytest.fixture
def jp_server_config(sources_file: Path, dashdock_config: dict[str, Any], bokeh_cache: Path) -> Config:
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"dashdock": True}},
            "DashdockApp": {
                "sources_file": str(sources_file),
                "history_file": str(sources_file.with_name("history.db")),
                "cache_dir": str(bokeh_cache),
                **dashdock_config,
            },
        }
    )


@pytest.fixture
def jupyter(
    jp_serverapp: Any, http_server_client: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> Iterator[Jupyter]:
    """The running Jupyter server with dashdock, and a token-authenticated client for it."""
    # pytest-jupyter does not run the server's own loop start, where extensions are started
    # (ServerApp._post_start); do what it does, so dashdock loads its saved sources as in real life.
    (dashdock_app,) = jp_serverapp.extension_manager.extension_apps["dashdock"]
    warnings = WarningsLog()
    dashdock_app.log.addHandler(warnings)
    jp_asyncio_loop.run_until_complete(jp_serverapp.extension_manager.start_all_extensions())
    client = SimpleAsyncHTTPClient(force_instance=True, max_body_size=64 * 1024 * 1024)
    yield Jupyter(
        client=client,
        base_url=jp_serverapp.base_url,
        port=jp_http_port,
        token=jp_serverapp.identity_provider.token,
        dashdock_warnings=warnings.messages,
    )
    client.close()
    dashdock_app.log.removeHandler(warnings)
