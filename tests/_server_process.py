"""A real ``python -m jupyter server`` with dashdock in a subprocess, in a session of its own.

Token auth, isolated Jupyter dirs, a free port on 127.0.0.1: what a user's terminal runs, for tests
that stop it (signals, Ctrl-C) or restart it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from _ports import HOST, free_port, kernel_ports_config

TOKEN = "dashdock-shutdown-test"


class Server:
    """``python -m jupyter server`` with dashdock, in a session of its own (like a terminal's job)."""

    def __init__(self, tmp: Path, stdin: int | None = None, args: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(tmp / "config"),
            "JUPYTER_DATA_DIR": str(tmp / "data"),
            "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
            "JUPYTER_PLATFORM_DIRS": "1",
        }
        kernel_ports_config(tmp / "config")
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
                *args,
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
