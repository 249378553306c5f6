"""Helpers for the sources file tests: the registry a restarted server would have, and Jupyter
servers in processes of their own (which a test can kill) sharing one sources file."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from _ports import free_port
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.simple_httpclient import SimpleAsyncHTTPClient

from dashdock.sources.registry import SourceRegistry
from dashdock.targets import DEFAULT_ALLOWED_TARGETS, Allowlist
from dashdock.upstream import Timeouts, UpstreamClient


@asynccontextmanager
async def restarted(
    sources_file: Path,
    allowed: list[str] | tuple[str, ...] = DEFAULT_ALLOWED_TARGETS,
    log: logging.Logger | None = None,
) -> AsyncIterator[SourceRegistry]:
    """The registry a server started on ``sources_file`` would have (logging to ``log``)."""
    client = UpstreamClient(Timeouts(connect=5, json=10))
    registry = SourceRegistry(
        client, Allowlist(list(allowed)), sources_file, log or logging.getLogger("test")
    )
    try:
        await registry.load()
        yield registry
    finally:
        await client.close()


class ServerProcess:
    """``jupyter server`` with dashdock in a process of its own, on ``sources_file``."""

    TOKEN = "sources-file-test"

    def __init__(self, sources_file: Path, bokeh_cache: Path, home: Path) -> None:
        home.mkdir(parents=True)
        self.port = free_port()
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTER_PLATFORM_DIRS": "1",
        }
        argv = [
            sys.executable,
            "-m",
            "jupyter",
            "server",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            "--ip=127.0.0.1",
            "--no-browser",
            f"--ServerApp.token={self.TOKEN}",
            "--ServerApp.allow_root=True",
            f"--ServerApp.root_dir={home}",
            "--ServerApp.jpserver_extensions={'dashdock': True}",
            f"--DashdockApp.sources_file={sources_file}",
            f"--DashdockApp.cache_dir={bokeh_cache}",
        ]
        self._log_path = home / "server.log"
        self._log = open(self._log_path, "wb")
        self.proc = subprocess.Popen(argv, env=env, cwd=home, stdin=subprocess.DEVNULL, stderr=self._log)
        self._client = SimpleAsyncHTTPClient(force_instance=True, max_clients=16)

    async def ready(self, timeout: float = 60) -> None:
        """Answers the API (an add that comes while it still reads its sources file waits for that)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline and self.proc.poll() is None:
            try:
                code, _ = await self.api("GET", "sources")
                if code == 200:
                    return
            except OSError:
                pass
            await asyncio.sleep(0.1)
        self._log.flush()
        raise RuntimeError(f"the Jupyter server did not answer; its log ends with:\n{self._log_tail()}")

    def _log_tail(self) -> str:
        return self._log_path.read_text(errors="replace")[-3000:]

    async def api(self, method: str, path: str, payload: Any = None) -> tuple[int, Any]:
        request = HTTPRequest(
            f"http://127.0.0.1:{self.port}/dashdock/api/{path}",
            method=method,
            body=json.dumps(payload) if payload is not None else None,
            headers={"Authorization": f"token {self.TOKEN}"},
            request_timeout=60,
        )
        try:
            response = await self._client.fetch(request, raise_error=False)
        except HTTPClientError as exc:  # no answer at all (599): the connection failed or was cut
            raise OSError(str(exc)) from exc
        text = response.body.decode() if response.body else ""
        return response.code, (json.loads(text) if text else None)

    def kill(self) -> None:
        """SIGKILL: no shutdown code of the server runs."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()
        self._client.close()
        self._log.close()
