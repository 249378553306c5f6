"""Bokeh servers as sources: a ``bokeh serve`` app added by URL, a figure published from a kernel."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import (
    add_source,
    open_sidebar,
    pane,
    pane_frame,
    plot_item,
    run_in_notebook,
    wait_for_bokeh_plot,
    wait_until,
)
from lab import Lab, _terminate, _wait_for_http, free_port, open_lab, screenshot
from playwright.sync_api import Browser, Frame, Page, expect

APP = """
from bokeh.models import ColumnDataSource
from bokeh.plotting import curdoc, figure

source = ColumnDataSource({"x": [0, 1, 2], "y": [3, 1, 2]}, name="served-points")
plot = figure(title="A Bokeh app", sizing_mode="stretch_both")
plot.line("x", "y", source=source)
curdoc().add_root(plot)
"""

PUBLISH = (
    "import dashdock\n"
    "from bokeh.models import ColumnDataSource\n"
    "from bokeh.plotting import figure\n"
    "source = ColumnDataSource({'x': [0, 1], 'y': [0, 1]}, name='points')\n"
    "fig = figure(title='Published from a kernel', sizing_mode='stretch_both')\n"
    "fig.line('x', 'y', source=source)\n"
    "published = dashdock.publish(fig, 'My plot')\n"
    "import panel as pn\n"
    "slider = pn.widgets.IntSlider(name='Workers', start=0, end=10, value=3)\n"
    "dashdock.publish(pn.Column('## A Panel app from a kernel', slider), 'Panel app')"
)
PANEL_APP = """
import panel as pn

pn.Column("## Served by panel serve", pn.widgets.IntSlider(name="Served", value=4)).servable()
"""
IDLE = ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']"

_X_VALUES = """name => {
    const source = Bokeh.documents[0].get_model_by_name(name);
    if (!source) return null;
    const data = source.data instanceof Map ? Object.fromEntries(source.data) : source.data;
    return Array.from(data.x);
}"""


@pytest.fixture
def bokeh_server(tmp_path: Path) -> Iterator[str]:
    """``bokeh serve`` with two applications, as a user runs it."""
    for name in ("sliders", "other"):
        (tmp_path / f"{name}.py").write_text(APP)
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bokeh",
            "serve",
            "sliders.py",
            "other.py",
            "--address",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_http(f"http://127.0.0.1:{port}/sliders")
        yield f"http://127.0.0.1:{port}"
    finally:
        _terminate(process)


@pytest.fixture
def panel_server(tmp_path: Path) -> Iterator[str]:
    """``panel serve`` with one application (its root redirects to it)."""
    (tmp_path / "dashboard.py").write_text(PANEL_APP)
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "panel",
            "serve",
            "dashboard.py",
            "--address",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_http(f"http://127.0.0.1:{port}/dashboard", timeout=120)
        yield f"http://127.0.0.1:{port}"
    finally:
        _terminate(process)


# The value of the slider titled so, in a pane's Bokeh document.
_SLIDER_VALUE = """title => {
    const slider = [...Bokeh.documents[0].all_models].find(m => m.title === title && 'value' in m);
    return slider ? slider.value : null;
}"""


def _panel_frame(page: Page, name: str) -> Frame:
    """The frame of a pane showing a Panel app, once its document is there (widgets draw no canvas)."""
    expect(pane(page, name)).to_have_count(1)
    frame = pane_frame(page, name)
    frame.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=45_000)
    return frame


def _sources(lab: Lab) -> list[dict]:
    listed = lab.api("dashdock/api/sources")
    assert isinstance(listed, dict)
    return listed["sources"]


def test_a_bokeh_serve_app_added_by_url_opens_in_a_pane(
    browser: Browser, lab: Lab, bokeh_server: str
) -> None:
    page = open_lab(browser, lab, "bokeh-serve")
    sidebar = open_sidebar(page)
    add_source(page, bokeh_server + "/sliders")  # an app's URL: the server behind it is the source
    expect(sidebar.locator(".jp-dashdock-Source-name")).to_have_count(1)
    [source] = [source for source in _sources(lab) if source["url"] == bokeh_server]
    assert source["flavour"] == "bokeh" and source["kind"] == "url", source
    apps = sidebar.locator('.jp-dashdock-PlotGroup[data-group="apps"] .jp-dashdock-Plot')
    expect(apps).to_have_count(2)
    plot_item(page, "sliders").click()
    wait_for_bokeh_plot(page, "sliders")
    frame = pane_frame(page, "sliders")
    assert frame.evaluate(_X_VALUES, "served-points") == [0, 1, 2]
    assert "/dashdock/view/" in frame.url  # through the isolated proxy, like Dask's plots
    lab.api(f"dashdock/api/sources/{source['id']}", "DELETE")


def test_a_panel_serve_app_added_by_url_opens_in_a_pane(
    browser: Browser, lab: Lab, panel_server: str
) -> None:
    source = lab.api("dashdock/api/sources", "POST", {"url": panel_server})
    assert isinstance(source, dict) and source["flavour"] == "bokeh", source
    page = open_lab(browser, lab, "panel-serve")
    open_sidebar(page)
    page.locator(".jp-dashdock-Source-name", has_text=source["name"]).click()
    plot_item(page, "dashboard").click()
    frame = _panel_frame(page, "dashboard")
    assert wait_until(lambda: frame.evaluate(_SLIDER_VALUE, "Served")) == 4
    lab.api(f"dashdock/api/sources/{source['id']}", "DELETE")


def _published(lab: Lab) -> list[dict]:
    return [s for s in _sources(lab) if s["kind"] == "kernel" and s.get("flavour") == "bokeh"]


def test_a_figure_published_from_a_kernel_docks_updates_and_goes_with_the_kernel(
    browser: Browser, lab: Lab
) -> None:
    lab.write_notebook("publish.ipynb", [PUBLISH])
    page = open_lab(browser, lab, "publish")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:open', {path: 'publish.ipynb'})")
    page.wait_for_selector(IDLE, timeout=60_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

    published = wait_until(lambda: _published(lab), timeout=60)
    assert [source["name"] for source in published] == ["publish.ipynb (published)"]
    sidebar = open_sidebar(page)
    sidebar.locator(".jp-dashdock-Source-name", has_text="publish.ipynb (published)").click()
    plot_item(page, "My plot").click()
    wait_for_bokeh_plot(page, "My plot")
    frame = pane_frame(page, "My plot")
    assert wait_until(lambda: frame.evaluate(_X_VALUES, "points")) == [0, 1]

    # The kernel changes its figure as Bokeh users do; the pane follows.
    run_in_notebook(page, "source.stream({'x': [2, 3], 'y': [5, 2]})\nfig.title.text = 'Streamed'")
    wait_until(lambda: frame.evaluate(_X_VALUES, "points") == [0, 1, 2, 3], timeout=30)
    screenshot(page, "published-plot")

    # A Panel object: Panel keeps the pane's widget in step with the kernel's.
    plot_item(page, "Panel app").click()
    panel_frame = _panel_frame(page, "Panel app")
    assert wait_until(lambda: panel_frame.evaluate(_SLIDER_VALUE, "Workers")) == 3
    run_in_notebook(page, "slider.value = 7")
    wait_until(lambda: panel_frame.evaluate(_SLIDER_VALUE, "Workers") == 7, timeout=30)
    screenshot(page, "published-panel")

    # The plot goes with its kernel.
    kernels = lab.api("api/kernels")
    assert isinstance(kernels, list) and len(kernels) == 1
    lab.api(f"api/kernels/{kernels[0]['id']}", "DELETE")
    wait_until(lambda: not _published(lab), timeout=30)
