"""A real ``python -m jupyter server`` with dashdock in a subprocess, in a session of its own.

Token auth, isolated Jupyter dirs, a free port on 127.0.0.1: what a user's terminal runs, for tests
that stop it (signals, Ctrl-C) or restart it.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
TOKEN = "dashdock-shutdown-test"


def free_port() -> int:
    return free_ports(1)[0]


def _below_ephemeral() -> range:
    """Ports below the range the kernel hands out by itself (to a bind to port 0 and to every
    outgoing connection): one chosen there and released can be taken by some connection before
    the server it was chosen for binds it. Below it, only a choice like this one takes a port."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return range(max(1024, low - 12_000), low)


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports, below the ephemeral range when there is room (else any); each
    probe stays bound until all are chosen, so two probes never get the same port."""
    chosen = _below_ephemeral()
    with contextlib.ExitStack() as stack:
        ports: list[int] = []
        while len(ports) < count:
            probe = stack.enter_context(socket.socket())
            try:
                probe.bind((HOST, random.choice(chosen) if len(chosen) >= 1000 else 0))
            except OSError:  # taken, or a connection of it still in TIME_WAIT
                continue
            ports.append(probe.getsockname()[1])
        return ports


class Server:
    """``python -m jupyter server`` with dashdock, in a session of its own (like a terminal's job)."""

    def __init__(self, tmp: Path, stdin: int | None = None) -> None:
        self.port = free_port()
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(tmp / "config"),
            "JUPYTER_DATA_DIR": str(tmp / "data"),
            "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
            "JUPYTER_PLATFORM_DIRS": "1",
        }
        self.log_path = tmp / "server.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter",
                "server",
                f"--port={self.port}",
                f"--ip={HOST}",
                "--no-browser",
                f"--ServerApp.token={TOKEN}",
                "--ServerApp.allow_root=True",
                f"--ServerApp.root_dir={tmp}",
                "--ServerApp.jpserver_extensions={'dashdock': True}",
                "--DashdockApp.sources_file=",
            ],
            env=env,
            cwd=tmp,
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def call(self, method: str, path: str, payload: Any = None, timeout: float = 120) -> tuple[int, Any]:
        data = json.dumps(payload).encode() if payload is not None else None
        request = urllib.request.Request(
            f"http://{HOST}:{self.port}/{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {TOKEN}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = response.read()
                return response.status, json.loads(body) if body else None
        except urllib.error.HTTPError as exc:
            body = exc.read()
            return exc.code, json.loads(body) if body else None

    def wait_ready(self, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log()
            try:
                if self.call("GET", "api/status", timeout=5)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"the server did not answer within {seconds} s\n{self.log()}")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            with_group = os.getpgid(self.proc.pid) == self.proc.pid
            (os.killpg if with_group else os.kill)(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self._log.close()
