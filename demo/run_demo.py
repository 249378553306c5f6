"""``make demo``: a real LocalCluster doing sample work, and JupyterLab with dashdock showing it.

The cluster runs in its own process on its usual dashboard port (8787, or a free one if that is
taken) and is registered as a dashdock source, so the sidebar lists its plots straight away.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def main() -> int:
    port = 8787 if _port_is_free(8787) else 0
    cluster = subprocess.Popen(
        [sys.executable, str(HERE / "sample_work.py"), "--dashboard-port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert cluster.stdout is not None
    dashboard = ""
    for line in cluster.stdout:
        if line.startswith("DASHBOARD "):
            dashboard = line.split(" ", 1)[1].strip()
            break
    if not dashboard:
        print("The demo cluster did not start; see the messages above.", file=sys.stderr)
        return 1
    print(f"\nDemo cluster dashboard: {dashboard}\nStarting JupyterLab; open the URL it prints below.\n")
    lab_args = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--DashdockApp.initial_sources={dashboard}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        lab_args.append("--allow-root")
    lab = subprocess.Popen(lab_args)
    try:
        return lab.wait()
    except KeyboardInterrupt:
        lab.send_signal(signal.SIGINT)
        lab.send_signal(signal.SIGINT)  # jupyter asks for confirmation after the first one
        return lab.wait()
    finally:
        cluster.terminate()
        cluster.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
