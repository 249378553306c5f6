"""Shared helpers for the benchmarks: free ports, subprocesses, the Jupyter server, process metrics, stats.

Everything here talks to 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import aiohttp

HERE = Path(__file__).resolve().parent
HOST = "127.0.0.1"
TOKEN = "dashdock-bench-token"
AUTH = {"Authorization": f"token {TOKEN}"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def jsp_installed() -> bool:
    return importlib.util.find_spec("jupyter_server_proxy") is not None


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process {proc.args!r} exited with {proc.returncode}")
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on {HOST}:{port} after {timeout} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT twice (Jupyter asks for confirmation once), then SIGTERM, then SIGKILL."""
    if proc.poll() is not None:
        return
    steps = ((signal.SIGINT, 0.3), (signal.SIGINT, 5.0), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0))
    for sig, wait in steps:
        try:
            proc.send_signal(sig)
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return


class Upstream:
    """``bench/upstreams.py <mode>`` in its own process, so it never shares a core's GIL with the client."""

    def __init__(self, mode: str, *args: str) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "upstreams.py"), mode, str(self.port), *args],
            stdin=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.proc)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def __enter__(self) -> Upstream:
        return self

    def __exit__(self, *exc: object) -> None:
        stop(self.proc)


class JupyterServer:
    """``python -m jupyter server`` with dashdock (and jupyter-server-proxy when installed), isolated dirs."""

    def __init__(
        self,
        *,
        with_jsp: bool = True,
        tmp: str | None = None,
        extra_extensions: dict[str, bool] | None = None,
        extra_env: dict[str, str] | None = None,
        extra_args: tuple[str, ...] = (),
        sources_file: str = "",
    ) -> None:
        self.port = free_port()
        self.tmp = tmp or tempfile.mkdtemp(prefix="dashdock-bench-")
        self.with_jsp = with_jsp and jsp_installed()
        extensions = {"dashdock": True, **(extra_extensions or {})}
        if jsp_installed():
            extensions["jupyter_server_proxy"] = self.with_jsp
        env = {
            **os.environ,
            **(extra_env or {}),
            "JUPYTER_CONFIG_DIR": f"{self.tmp}/config",
            "JUPYTER_DATA_DIR": f"{self.tmp}/data",
            "JUPYTER_RUNTIME_DIR": f"{self.tmp}/runtime",
            "JUPYTER_PLATFORM_DIRS": "1",
        }
        argv = [
            sys.executable,
            "-m",
            "jupyter",
            "server",
            f"--port={self.port}",
            f"--ip={HOST}",
            "--no-browser",
            f"--ServerApp.token={TOKEN}",
            "--ServerApp.allow_root=True",
            f"--ServerApp.root_dir={self.tmp}",
            "--ServerApp.log_level=WARN",
            f"--ServerApp.jpserver_extensions={extensions}",
            f"--DashdockApp.sources_file={sources_file}",  # "": sources not kept, unless a bench wants them
            *extra_args,
        ]
        self.log = open(f"{self.tmp}/server.log", "wb")
        self.proc = subprocess.Popen(argv, env=env, cwd=self.tmp, stdin=subprocess.DEVNULL, stderr=self.log)
        try:
            wait_for_port(self.port, self.proc)
        except Exception:
            self._dump_log()
            raise
        self.pid = self.proc.pid  # `python -m jupyter server` execs jupyter-server: the pid stays the same

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def dashdock(self, target: str) -> str:
        """Proxy URL prefix for a source id or ``host:port``."""
        return f"{self.url}/dashdock/proxy/{target}"

    def jsp(self, port: int) -> str:
        # jupyter-server-proxy's host:port route; ``/proxy/{port}`` would resolve "localhost" instead.
        return f"{self.url}/proxy/{HOST}:{port}"

    async def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        async with aiohttp.ClientSession(headers=AUTH) as session:
            while time.monotonic() < deadline:
                try:
                    async with session.get(f"{self.url}/api/status") as response:
                        if response.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.2)
        raise TimeoutError("the Jupyter server did not answer /api/status")

    def __enter__(self) -> JupyterServer:
        return self

    def _dump_log(self) -> None:
        self.log.flush()
        print(Path(f"{self.tmp}/server.log").read_text(errors="replace")[-4000:], file=sys.stderr)

    def log_errors(self, limit: int = 12) -> None:
        """Print the server's warnings and errors with their tracebacks (its log is otherwise hidden)."""
        self.log.flush()
        shown, keep = [], False
        for line in Path(f"{self.tmp}/server.log").read_text(errors="replace").splitlines():
            if line.startswith("["):
                keep = line.startswith(("[E", "[W")) and "token config" not in line
            if keep:
                shown.append(line)
        for line in shown[:limit]:
            print(f"  server log: {line[:160]}")

    def __exit__(self, *exc: object) -> None:
        stop(self.proc)
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def routes(server: JupyterServer, upstream_port: int, dashdock_target: str | None = None) -> dict[str, str]:
    """The URL prefixes of one upstream: direct, through dashdock, through jupyter-server-proxy."""
    result = {
        "direct": f"http://{HOST}:{upstream_port}",
        "dashdock": server.dashdock(dashdock_target or f"{HOST}:{upstream_port}"),
    }
    if server.with_jsp:
        result["jsp"] = server.jsp(upstream_port)
    return result


# -- process metrics ------------------------------------------------------------------------


def rss_bytes(pid: int) -> int:
    try:
        import psutil

        return psutil.Process(pid).memory_info().rss
    except ImportError:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS") from None


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- statistics and printing ------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "n/a"


def table(rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for n, row in enumerate(rows):
        cells = [
            cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        print("  " + "  ".join(cells))
        if n == 0:
            print("  " + "  ".join("-" * w for w in widths))


def heading(text: str) -> None:
    print(f"\n== {text}", flush=True)


def not_installed_note(server: JupyterServer) -> None:
    if not server.with_jsp:
        print("  jsp (jupyter-server-proxy): not installed (pip install jupyter-server-proxy)")


class Cluster:
    """A LocalCluster in its own process (``upstreams.py cluster``); ``dashboard`` is its root URL."""

    def __init__(self, timeout: float = 90.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "upstreams.py"), "cluster", "0"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        import selectors

        with selectors.DefaultSelector() as selector:
            selector.register(self.proc.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
            if not selector.select(timeout):
                stop(self.proc)  # type: ignore[arg-type]
                raise TimeoutError("the LocalCluster did not start")
        link = self.proc.stdout.readline().strip()  # type: ignore[union-attr]
        if not link.startswith(f"http://{HOST}:"):
            stop(self.proc)  # type: ignore[arg-type]
            raise RuntimeError(f"unexpected dashboard link {link!r}")
        self.link = link
        self.port = int(link.split(":")[2].split("/")[0])
        self.dashboard = f"http://{HOST}:{self.port}"

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.wait(15)
        except (OSError, subprocess.TimeoutExpired):
            stop(self.proc)  # type: ignore[arg-type]
