"""A Notebook 7 user (the classic-looking notebook page, no Lab dock) gets every plot control
working: the toolbar shows the Dask sidebar, and a chip or a sidebar plot opens a pane in a dock of
its own in the right side panel, which goes away with its last pane. Under a base URL, as on
JupyterHub."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers import wait_for_bokeh_plot
from lab import TOKEN, Lab, screenshot, start_lab, stop_lab
from page_log import keep_page_log
from playwright.sync_api import Browser, Page, expect

CELLS = [
    "from distributed import Client, LocalCluster\n"
    "cluster = LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol='tcp',\n"
    "                       host='127.0.0.1', dashboard_address='127.0.0.1:0')\n"
    "client = Client(cluster)\n"
    "client",
    "import time\nresults = client.gather(client.map(lambda x: time.sleep(0.01) or x, range(200)))",
]
DOCK = "#jp-right-stack .jp-dashdock-PlotDock"


@pytest.fixture(scope="module")
def notebook_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    server = start_lab(
        tmp_path_factory.mktemp("nb7"),
        "/user/alice/",
        ["--JupyterNotebookApp.expose_app_in_browser=True"],
    )
    yield server
    stop_lab(server)


def _open_notebook(browser: Browser, lab: Lab, path: str) -> Page:
    page = browser.new_context(viewport={"width": 1500, "height": 950}).new_page()
    keep_page_log(page)
    page.set_default_timeout(30_000)
    page.goto(f"{lab.url}notebooks/{path}?token={TOKEN}")
    page.wait_for_selector(
        ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000
    )
    return page


def test_in_notebook_7_every_plot_control_opens_a_pane(browser: Browser, notebook_lab: Lab) -> None:
    lab = notebook_lab
    lab.write_notebook("analysis.ipynb", CELLS)
    page = _open_notebook(browser, lab, "analysis.ipynb")
    # Notebook 7's page: no Lab dock anywhere.
    expect(page.locator("#jp-main-dock-panel")).to_have_count(0)
    # Run All once the notebook's kernel is ready (its status idle can show before its session is),
    # without waiting on the command: the repr going live says the cells ran.
    page.wait_for_function(
        "() => { const nb = window.jupyterapp.shell.currentWidget;"
        " return !!nb?.sessionContext?.isReady && nb.sessionContext.session?.kernel?.status === 'idle'; }",
        timeout=90_000,
    )
    page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    client_repr = page.locator(".jp-dashdock-ClientRepr").first
    expect(client_repr.locator(".jp-dashdock-ClientRepr-status")).to_have_attribute(
        "data-status", "live", timeout=120_000
    )

    # The sidebar, closed as Notebook 7 keeps its side panels, is one toolbar click away.
    sidebar = page.locator("#dashdock-sidebar")
    expect(sidebar).to_be_hidden()
    show = page.get_by_role("button", name="Dask")
    expect(page.get_by_title("Show the Dask dashboards sidebar")).to_be_visible()
    show.click()
    expect(sidebar).to_be_visible()
    source = sidebar.locator(".jp-dashdock-Source", has_text="analysis.ipynb")
    expect(source).to_be_visible(timeout=30_000)

    # A chip of the repr opens its plot in the plots dock of the right side panel, wide enough to read.
    client_repr.locator(".jp-dashdock-Chip", has_text="Task Stream").click()
    dock = page.locator(DOCK)
    expect(dock).to_be_visible()
    expect(dock.locator(".jp-dashdock-PlotPane")).to_have_count(1)
    wait_for_bokeh_plot(page, "Task Stream")
    box, window = dock.bounding_box(), page.viewport_size
    assert box is not None and window is not None
    assert box["width"] >= 0.35 * window["width"], box

    # A plot of the sidebar's source opens beside it, in the same dock.
    source.click()
    sidebar.locator(".jp-dashdock-Plot:visible", has_text="Progress").first.click()
    expect(dock.locator(".jp-dashdock-PlotPane")).to_have_count(2)
    wait_for_bokeh_plot(page, "Progress")
    screenshot(page, "notebook7-plots-dock")

    # Closing the last pane takes the dock away, and the side panel with it.
    close = dock.locator(".lm-TabBar-tabCloseIcon")
    for left in (1, 0):
        close.first.click()
        expect(dock.locator(".jp-dashdock-PlotPane")).to_have_count(left)
    expect(dock).to_have_count(0)
    expect(page.locator("#jp-right-stack")).to_be_hidden()
