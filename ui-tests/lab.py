"""Real parts for browser tests: a Dask cluster in its own process, JupyterLab with dashdock, Chromium.

Tests import these from here; conftest.py makes the fixtures of them. Screenshots land in
ui-tests/output/ (ignored by git) so a person can look at what the tests saw.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from page_log import keep_page_log
from playwright.sync_api import Browser, BrowserContext, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

ROOT = Path(__file__).resolve().parent.parent
# How the server suite chooses ports (below the ephemeral range), for the servers started here too.
sys.path.append(str(ROOT / "tests"))
import _ports  # noqa: E402

free_port, free_ports = _ports.free_port, _ports.free_ports

OUTPUT = Path(__file__).resolve().parent / "output"
TOKEN = "dashdock-ui-test-token"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1500, "height": 950}


def _wait_for_http(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@dataclass
class DaskCluster:
    dashboard: str  # e.g. http://127.0.0.1:40123/status
    process: subprocess.Popen[str] | None  # None: another process's (xdist's controller's)
    scheduler: str  # e.g. tcp://127.0.0.1:40125, for a client of the test's own

    @property
    def root(self) -> str:
        return self.dashboard.rsplit("/", 1)[0]


@dataclass(frozen=True)
class SampleWork:
    """How hard the sample cluster works: a round every ``pause`` seconds, each an array of
    ``size`` squared in ``blocks`` chunks a side, then 41 short sleeps."""

    pause: float
    size: int
    blocks: int


# What runs under the browser tests: plots with something in them, not a busy machine (a quarter
# of a core on 2 cores, against half a core for BUSY).
LIGHT = SampleWork(pause=0.5, size=600, blocks=3)
# The busy cluster the benches measure panes on (about 190 tasks a round).
BUSY = SampleWork(pause=0.2, size=1000, blocks=4)


def start_cluster(port: int = 0, work: SampleWork = LIGHT) -> DaskCluster:
    """The sample cluster, doing ``work`` until stopped."""
    process = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "demo" / "sample_work.py"),
            "--dashboard-port",
            str(port),
            "--pause",
            str(work.pause),
            "--size",
            str(work.size),
            "--blocks",
            str(work.blocks),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    scheduler = ""
    for line in process.stdout:
        if line.startswith("SCHEDULER "):
            scheduler = line.split(" ", 1)[1].strip()
        if line.startswith("DASHBOARD "):
            return DaskCluster(line.split(" ", 1)[1].strip(), process, scheduler)
    raise RuntimeError("the sample cluster did not start")


def _terminate(process: subprocess.Popen) -> None:  # type: ignore[type-arg]
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()


def stop_cluster(cluster: DaskCluster) -> None:
    if cluster.process is not None:
        _terminate(cluster.process)


@dataclass
class Lab:
    url: str  # http://127.0.0.1:PORT{base_url}
    base_url: str
    process: subprocess.Popen[bytes]
    log: Path

    def api(self, path: str, method: str = "GET", body: object = None) -> object:
        request = urllib.request.Request(
            self.url + path,
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"token {TOKEN}"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
            return json.loads(text) if text else None

    def write_notebook(self, path: str, cells: list[str]) -> None:
        """Save a Python notebook of code cells (not run yet) at ``path`` on the server."""
        code = [
            {"cell_type": "code", "source": source, "metadata": {}, "outputs": [], "execution_count": None}
            for source in cells
        ]
        kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
        content = {"cells": code, "metadata": {"kernelspec": kernelspec}, "nbformat": 4, "nbformat_minor": 5}
        self.api(f"api/contents/{path}", "PUT", {"type": "notebook", "content": content})


def write_jupyter_config(config_dir: Path) -> None:
    """A Jupyter config dir for a test's server: Lab without Panel's extensions, kernels on ports
    no connection takes.

    Panel (a test dependency) brings a server extension that takes seconds to import and a Lab
    extension whose notebook button pushes the kernel status into the toolbar's overflow menu; a
    user of dashdock need not have Panel, so the test Labs run without both.
    """
    (config_dir / "labconfig").mkdir(parents=True)
    (config_dir / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {"panel.io.jupyter_server_extension": False}}})
    )
    # Kernels' ports are chosen as the tests' own (tests/_ports.py), never in the ephemeral range.
    _ports.kernel_ports_config(config_dir)
    (config_dir / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@pyviz/jupyterlab_pyviz": True}})
    )


def start_lab(tmp: Path, base_url: str = "/", options: Sequence[str] = ()) -> Lab:
    """JupyterLab with dashdock under ``base_url``; ``options`` are more command-line traits."""
    port = free_port()
    settings = tmp / "settings"
    # No "news" popup over the screenshots.
    notification = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # Tests save with Ctrl+S. Lab's autosave (every 2 minutes) could run at the same moment, and
    # two saves of one file at once can fail in jupyter_server's atomic write ("No such file").
    docmanager = settings / "@jupyterlab" / "docmanager-extension" / "plugin.jupyterlab-settings"
    docmanager.parent.mkdir(parents=True)
    docmanager.write_text(json.dumps({"autosave": False}))
    (tmp / "root").mkdir()
    write_jupyter_config(tmp / "config")
    log = tmp / "lab.log"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp / "config"), "JUPYTER_DATA_DIR": str(tmp / "data")}
    args = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.base_url={base_url}",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={tmp / 'root'}",
        f"--LabApp.user_settings_dir={settings}",
        f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",
        f"--DashdockApp.sources_file={tmp / 'sources.json'}",
        f"--DashdockApp.history_file={tmp / 'history.db'}",
        "--allow-root",
        *options,
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp)
    url = f"http://127.0.0.1:{port}{base_url}"
    _wait_for_http(url + "api/status?token=" + TOKEN)
    return Lab(url, base_url, process, log)


def stop_lab(lab: Lab) -> None:
    _terminate(lab.process)


# Each browser's warm profile (see warm_profile), once the session has one.
_warm_profiles: dict[Browser, BrowserContext] = {}


def warm_profile(browser: Browser, profile_dir: Path) -> BrowserContext:
    """A browser profile on disk that ``open_lab`` opens its pages in, as a user's browser does.

    Lab's scripts then come from its disk cache already compiled, as on a user's second visit: a
    fresh context compiled them again for every page, about 1.8 s of a core more per Lab load
    (measured here: 5.1 against 3.3 CPU-s, 3.2 against 2.5 s to load). Its cookies and storage are
    shared by the session's pages; each Lab has its own port, so its own origin.
    """
    context = browser.browser_type.launch_persistent_context(
        str(profile_dir), executable_path=browser_executable(), args=CHROMIUM_ARGS, viewport=VIEWPORT
    )
    _warm_profiles[browser] = context
    context.on("close", lambda _: _warm_profiles.pop(browser, None))
    return context


def warm_pages(browser: Browser) -> list[Page]:
    profile = _warm_profiles.get(browser)
    return list(profile.pages) if profile else []


def browser_executable() -> str:
    return shutil.which("chromium") or "/usr/bin/chromium"


def open_lab(browser: Browser, lab: Lab, workspace: str, viewport: tuple[int, int] | None = None) -> Page:
    """Lab on a named workspace (tests do not share their layouts), in a new page of the browser's
    warm profile when it has one, else in a browser context of its own."""
    profile = _warm_profiles.get(browser)
    page = profile.new_page() if profile else browser.new_context(viewport=VIEWPORT).new_page()
    if viewport:
        page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    keep_page_log(page)
    page.set_default_timeout(30_000)
    page.goto(f"{lab.url}lab/workspaces/{workspace}?token={TOKEN}")
    wait_for_lab(page)
    return page


def wait_for_lab(page: Page) -> None:
    """Lab is up, its layout restored, and the Launcher (when shown) has taken the focus.

    The Launcher focuses itself a moment after the layout is restored; a test that presses keys
    before that loses them to it.
    """
    page.wait_for_selector("#jp-main-dock-panel", state="visible")
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('dashdock:open-plot')"
    )
    page.evaluate("() => window.jupyterapp.restored.then(() => true)")
    # Lab opens a Launcher into an empty main area only after the file browser has listed its
    # folder, which on a loaded machine comes well after `restored`: until something is there, a
    # Launcher may still arrive and take the focus or hide a pane behind its tab.
    page.wait_for_selector("#jp-main-dock-panel .lm-DockPanel-widget", state="attached")
    with contextlib.suppress(PlaywrightTimeoutError):  # a workspace may show no Launcher
        page.wait_for_function(
            "() => !document.querySelector('.jp-Launcher')"
            " || !!document.activeElement?.closest('.jp-Launcher')",
            timeout=5_000,
        )


def screenshot(page: Page, name: str) -> Path:
    OUTPUT.mkdir(exist_ok=True)
    path = OUTPUT / f"{name}.png"
    page.screenshot(path=str(path))
    return path
