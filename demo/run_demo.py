"""``make demo``: a real LocalCluster doing sample work, and JupyterLab with dashdock showing it.

The cluster runs in its own process on its usual dashboard port (8787, or a free one if that is
taken) and is registered as a dashdock source named "Dask demo", so the sidebar lists its plots and
the History records it straight away. Ctrl-C stops both, quietly: each runs in a session of its own,
so the terminal's interrupt reaches only this script, which then stops them in order.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE_NAME = "Dask demo"
NEWS_SETTINGS = "@jupyterlab/apputils-extension:notification"


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def _start_cluster() -> tuple[subprocess.Popen[str], str, str]:
    """The sample work's process, its scheduler's address and its dashboard's URL ("" if it failed)."""
    port = 8787 if _port_is_free(8787) else 0
    cluster = subprocess.Popen(
        [sys.executable, str(HERE / "sample_work.py"), "--dashboard-port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert cluster.stdout is not None
    scheduler = dashboard = ""
    for line in cluster.stdout:
        if line.startswith("SCHEDULER "):
            scheduler = line.split(" ", 1)[1].strip()
        elif line.startswith("DASHBOARD "):
            dashboard = line.split(" ", 1)[1].strip()
            break
    return cluster, scheduler, dashboard


def _stop(process: subprocess.Popen[str] | subprocess.Popen[bytes], how: signal.Signals) -> None:
    if process.poll() is None:
        process.send_signal(how)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _interrupted(*_: object) -> None:
    raise KeyboardInterrupt


def main() -> int:
    # Ctrl-C, and a SIGTERM from whatever started the demo, stop it the same way (a shell may have
    # started this with SIGINT ignored).
    signal.signal(signal.SIGINT, _interrupted)
    signal.signal(signal.SIGTERM, _interrupted)
    cluster, scheduler, dashboard = _start_cluster()
    if not dashboard:
        print("The demo cluster did not start; see the messages above.", file=sys.stderr)
        _stop(cluster, signal.SIGTERM)
        return 1
    print(
        f"\nDemo cluster: scheduler {scheduler}, dashboard {dashboard}\n"
        f'It is the source "{SOURCE_NAME}" in the dashdock sidebar. To work with it from a notebook:\n\n'
        f"    from distributed import Client\n    client = Client({scheduler!r})\n\n"
        "Starting JupyterLab; open the URL it prints below. Ctrl-C stops the demo.\n",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="dashdock-demo-") as folder:
        config = Path(folder) / "demo_config.json"
        sources = [{"url": dashboard, "name": SOURCE_NAME}]
        # No news feed nor update check: the demo's first screen is dashdock, not a question about
        # Jupyter's announcements (whose feed a machine without the internet cannot fetch anyway).
        # The question comes while the setting says neither yes nor no, whatever the server's
        # feed: an override answers it, in a settings directory of the demo's own.
        settings = Path(folder) / "settings"
        settings.mkdir()
        (settings / "overrides.json").write_text(json.dumps({NEWS_SETTINGS: {"fetchNews": "false"}}))
        quiet = {
            "news_url": None,
            "check_for_updates_class": "jupyterlab.handlers.announcements.NeverCheckForUpdate",
            "app_settings_dir": str(settings),
        }
        config.write_text(json.dumps({"DashdockApp": {"initial_sources": sources}, "LabApp": quiet}))
        lab_args = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--config={config}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            lab_args.append("--allow-root")
        lab = subprocess.Popen(lab_args, start_new_session=True)
        try:
            return lab.wait()
        except KeyboardInterrupt:
            print("\nStopping the demo: JupyterLab, then the cluster.", flush=True)
            return 0
        finally:
            _stop(lab, signal.SIGTERM)
            _stop(cluster, signal.SIGTERM)
            print("The demo has stopped.", flush=True)


if __name__ == "__main__":
    sys.exit(main())
