"""``make demo`` as a newcomer meets it: the demo cluster's source is recorded from the start.

The demo (demo/run_demo.py) registers its cluster by URL; its History must list the run without
any step from the user. The demo runs as ``make demo`` runs it, in a home of its own; the time it
took is printed (what a user waits is a figure, not an assertion).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test

ROOT = Path(__file__).resolve().parent.parent
LAB_URL = re.compile(r"(http://127\.0\.0\.1:\d+/)lab\?token=([0-9a-f]+)")


def _get(url: str, token: str) -> object:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_the_demo_clusters_run_is_in_history_with_no_step_from_the_user(tmp_path: Path) -> None:
    env = {
        # As from a Lab terminal too: this process has the variables the extension gives kernels
        # (Dask's dashboard link template among them), which the demo must not be misled by.
        **os.environ,
        "HOME": str(tmp_path),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
    }
    started = time.monotonic()
    demo = subprocess.Popen(
        [sys.executable, str(ROOT / "demo" / "run_demo.py")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert demo.stdout is not None
        found = None
        head = ""
        for line in demo.stdout:
            head += line
            found = LAB_URL.search(line)
            if found:
                break
        assert found, "JupyterLab did not print its URL"
        lab, token = found[1], found[2]
        deadline = time.monotonic() + 120
        runs: list[dict[str, object]] = []
        listing: object = None
        while time.monotonic() < deadline and not runs:
            try:
                listing = _get(f"{lab}dashdock/api/history", token)
            except urllib.error.URLError:
                listing = None  # printed its address a moment before it listens
            if isinstance(listing, dict):
                runs = [run for run in listing["runs"] if run["live"]]
            time.sleep(0.5)
        assert runs, (listing, _get(f"{lab}dashdock/api/sources", token))
        print(f"the demo's run was in History {time.monotonic() - started:.1f} s after the demo started")
        sources = _get(f"{lab}dashdock/api/sources", token)
        assert isinstance(sources, dict)
        (source,) = sources["sources"]
        assert runs[0]["source"] == source["id"] and source["unrecorded"] is None
        assert source["name"] == "Dask demo"
        # Its cluster offers its state: its key plots are drawn for every viewer from one connection.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "/individual-progress" not in source.get("drawnPlots", []):
            time.sleep(0.5)
            (source,) = _get(f"{lab}dashdock/api/sources", token)["sources"]
        assert {"/individual-task-stream", "/individual-workers-memory"} <= set(source["drawnPlots"]), source
        # The Lab does not open by asking whether to fetch Jupyter's news.
        request = urllib.request.Request(f"{lab}lab", headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            page = response.read().decode()
        page_config = json.loads(
            page.split('id="jupyter-config-data" type="application/json">')[1].split("</script>")[0]
        )
        assert page_config["news"] == {"disabled": True}, page_config.get("news")
        # Lab asks while its setting says neither yes nor no: the demo answers it.
        notification = _get(f"{lab}lab/api/settings/@jupyterlab/apputils-extension:notification", token)
        assert isinstance(notification, dict)
        fetch_news = notification["schema"]["properties"]["fetchNews"]  # the override is its default
        assert fetch_news["default"] == "false" and "fetchNews" not in notification["settings"], notification
        # Ctrl-C, as a terminal sends it (to the demo's process group): a clean stop, no traceback.
        os.killpg(demo.pid, signal.SIGINT)
        rest, _ = demo.communicate(timeout=120)
        assert demo.returncode == 0, rest[-3000:]
        assert "Traceback" not in rest, rest[-3000:]
        assert rest.rstrip().endswith("The demo has stopped."), rest[-3000:]
        assert "client = Client('tcp://127.0.0.1:" in head
    finally:
        if demo.poll() is None:
            # The demo's cluster and Lab run in sessions of their own: killed, the demo could not
            # stop them, and a failed assertion left them computing under every later test.
            os.killpg(demo.pid, signal.SIGTERM)
            try:
                demo.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(demo.pid, signal.SIGKILL)
                demo.wait()
