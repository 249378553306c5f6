"""A user creates a Dask client in a notebook: dashdock's live repr, its chips, the client as a
source named after the notebook, and a live plot under a cell. Lab runs under a base URL, as on
JupyterHub."""

from __future__ import annotations

import re

import pytest
from helpers import drag_to, open_sidebar, pane, wait_for_bokeh_plot
from lab import Lab, open_lab, screenshot
from playwright.sync_api import Browser, Frame, Page, expect

CELLS = [
    "from distributed import Client, LocalCluster\n"
    "cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol='tcp',\n"
    "                       host='127.0.0.1', dashboard_address='127.0.0.1:0')\n"
    "client = Client(cluster)\n"
    "client",
    "import dashdock\ndashdock.show(client, 'progress')",
    "import time\n"
    "futures = client.map(lambda x: time.sleep(0.02) or x, range(3000))\n"
    "total = client.submit(sum, futures)",
]


def _run_all(page: Page, path: str) -> None:
    page.evaluate(f"() => window.jupyterapp.commands.execute('docmanager:open', {{path: '{path}'}})")
    page.wait_for_selector(
        ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def _frame_of(page: Page, selector: str) -> Frame:
    handle = page.locator(selector).element_handle(timeout=60_000)
    assert handle is not None
    frame = handle.content_frame()
    assert frame is not None
    return frame


@pytest.mark.parametrize("lab", ["/user/alice/"], indirect=True)
def test_a_notebooks_client_repr_chips_source_and_inline_plot(browser: Browser, lab: Lab) -> None:
    lab.write_notebook("analysis.ipynb", CELLS)
    page = open_lab(browser, lab, "notebook-repr")
    _run_all(page, "analysis.ipynb")

    # dashdock's repr, with the scheduler's numbers, live.
    client_repr = page.locator(".jp-dashdock-ClientRepr").first
    expect(client_repr.locator(".jp-dashdock-ClientRepr-status")).to_have_attribute(
        "data-status", "live", timeout=60_000
    )
    expect(client_repr.locator('dd[data-fact="workers"]')).to_have_text("2")
    expect(client_repr.locator('dd[data-fact="threads"]')).to_have_text("2")
    expect(client_repr.locator('dd[data-fact="scheduler"]')).to_contain_text("tcp://127.0.0.1:")
    # The work of the third cell shows up without running anything again.
    expect(client_repr.locator('dd[data-fact="tasks"]')).not_to_have_text(
        re.compile(r"^(0|\u2013)$"), timeout=30_000
    )

    # The live plot under the second cell draws the scheduler's progress.
    inline = _frame_of(page, ".jp-dashdock-InlinePlot iframe")
    inline.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].roots().length > 0",
        timeout=45_000,
    )
    assert f"{lab.base_url}dashdock/view/127.0.0.1:" in inline.url
    assert inline.evaluate("() => window.origin") == "null"  # sandboxed: an opaque origin
    screenshot(page, "notebook-repr")

    # The client is a source named after its notebook, without typing a URL.
    open_sidebar(page)
    expect(page.locator(".jp-dashdock-Source-name", has_text="analysis.ipynb")).to_be_visible(timeout=20_000)

    # The repr learns its source on its next poll (every 3 s), which may come after the sidebar's.
    expect(client_repr.locator(".jp-dashdock-ClientRepr-link")).to_have_attribute(
        "href", re.compile(r"/dashdock/proxy/[0-9a-f]{12}/status"), timeout=20_000
    )
    # A click on a chip opens the plot as a pane; a drag docks it where it is dropped.
    client_repr.locator(".jp-dashdock-Chip", has_text="Task Stream").click()
    wait_for_bokeh_plot(page, "Task Stream")
    first = pane(page, "Task Stream").bounding_box()
    assert first is not None
    drag_to(
        page,
        client_repr.locator(".jp-dashdock-Chip", has_text="Progress"),
        first["x"] + first["width"] * 0.93,
        first["y"] + first["height"] / 2,
    )
    wait_for_bokeh_plot(page, "Progress")
    left, right = pane(page, "Task Stream").bounding_box(), pane(page, "Progress").bounding_box()
    assert left is not None and right is not None
    assert right["x"] >= left["x"] + left["width"] - 10
    # Panes open from the notebook's source, so they follow it when the notebook replaces its cluster.
    src = pane(page, "Task Stream").locator("iframe").get_attribute("src") or ""
    assert re.search(f"{lab.base_url}dashdock/proxy/[0-9a-f]{{12}}/individual-task-stream", src), src
    screenshot(page, "notebook-chips-panes")

    # The dashboard link opens Dask's status page through the proxy.
    link = client_repr.locator(".jp-dashdock-ClientRepr-link")
    assert f"{lab.base_url}dashdock/proxy/" in (link.get_attribute("href") or "")
    with page.context.expect_page() as opened:
        link.click()
    dashboard = opened.value
    dashboard.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=45_000)
    assert f"{lab.base_url}dashdock/view/" in dashboard.url
    assert dashboard.evaluate("() => window.origin") == "null"  # a tab of its own, sandboxed too
    dashboard.close()
