"""A user adds a Dask dashboard in the sidebar and docks its plots; the layout survives a reload."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from helpers import (
    add_source,
    drag_to,
    open_sidebar,
    pane,
    plot_item,
    wait_for_bokeh_plot,
)
from lab import TOKEN, DaskCluster, Lab, open_lab, screenshot, wait_for_lab
from playwright.sync_api import Browser, Page, expect

KEY_PLOTS = ["Task Stream", "Progress", "Workers Memory", "Graph"]


@pytest.mark.parametrize("lab", ["/", "/user/alice/"], indirect=True)
def test_add_source_and_open_key_plots(browser: Browser, lab: Lab, dask_cluster: DaskCluster) -> None:
    page = open_lab(browser, lab, "open-plots")
    sidebar = open_sidebar(page)

    # A URL that is not a dashboard gets a clear message, and what was typed stays for correcting.
    add_source(page, "http://127.0.0.1:1/status")
    expect(sidebar.locator(".jp-dashdock-AddSource-error")).to_contain_text("Could not reach 127.0.0.1:1")
    expect(page.locator(".jp-dashdock-AddSource-url")).to_have_value("http://127.0.0.1:1/status")

    # Any page of the dashboard finds the dashboard; its plots are listed by topic with readable names.
    add_source(page, dask_cluster.dashboard)
    host_port = dask_cluster.root.split("//", 1)[1]
    expect(sidebar.locator(".jp-dashdock-Source-name")).to_have_text([host_port])
    expect(sidebar.locator('.jp-dashdock-PlotGroup[data-group="tasks"] h3')).to_have_text("Tasks")
    expect(plot_item(page, "Task Stream")).to_be_visible()
    assert sidebar.locator(".jp-dashdock-Plot").count() >= 20
    assert "Individual" not in sidebar.inner_text()

    # The filter narrows the list.
    page.fill(".jp-dashdock-Plots-filter", "memory")
    expect(plot_item(page, "Task Stream")).to_have_count(0)
    expect(plot_item(page, "Workers Memory")).to_be_visible()
    page.fill(".jp-dashdock-Plots-filter", "")

    for name in KEY_PLOTS:
        plot_item(page, name).click()
        expect(pane(page, name)).to_be_visible()
    for name in KEY_PLOTS:
        # Past the smallest pane size a plot opens as a tab (and pauses while hidden): show it.
        page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=name).click()
        wait_for_bokeh_plot(page, name)
        src = pane(page, name).locator("iframe[src]").get_attribute("src") or ""
        assert f"{lab.base_url}dashdock/proxy/" in src, src
    screenshot(page, f"key-plots{lab.base_url.replace('/', '-')}")


def test_drag_plot_to_right_half(browser: Browser, lab: Lab, dask_cluster: DaskCluster) -> None:
    lab.api("dashdock/api/sources", "POST", {"url": dask_cluster.dashboard})
    page = open_lab(browser, lab, "drag")
    open_sidebar(page)
    plot_item(page, "Task Stream").click()
    wait_for_bokeh_plot(page, "Task Stream")

    first = pane(page, "Task Stream").bounding_box()
    assert first is not None
    drag_to(
        page,
        plot_item(page, "Progress"),
        first["x"] + first["width"] * 0.93,
        first["y"] + first["height"] / 2,
    )

    expect(pane(page, "Progress")).to_be_visible()
    wait_for_bokeh_plot(page, "Progress")
    left = pane(page, "Task Stream").bounding_box()
    right = pane(page, "Progress").bounding_box()
    assert left is not None and right is not None
    # Side by side: the dropped pane took the right half, both span the same height.
    assert right["x"] >= left["x"] + left["width"] - 10
    assert abs(right["y"] - left["y"]) < 10 and abs(right["height"] - left["height"]) < 10
    screenshot(page, "drag-right-split")

    # The same plot can be open twice.
    plot_item(page, "Progress").click()
    expect(pane(page, "Progress")).to_have_count(2)


def _saved_layout(lab: Lab, workspace: str) -> object:
    """The shape of the main area in the saved workspace: splits and their tabs' restorer names."""
    request = urllib.request.Request(
        f"{lab.url}lab/api/workspaces/{workspace}", headers={"Authorization": f"token {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        data = json.loads(response.read())["data"]
    return _shape(data.get("layout-restorer:data", {}).get("main", {}).get("dock"))


def _shape(area: object) -> object:
    if not isinstance(area, dict):
        return None
    if area.get("type") == "tab-area":
        return [str(widget) for widget in area.get("widgets", [])]
    return {area.get("orientation", ""): [_shape(child) for child in area.get("children", [])]}


# The live main area in the same shape (a pane's restorer name is the tracker namespace and its id).
_LIVE_SHAPE = """() => {
  const shape = area => {
    if (!area) { return null; }
    if (area.type === 'tab-area') { return area.widgets.map(w => 'dashdock-plots:' + w.id); }
    return {[area.orientation]: area.children.map(shape)};
  };
  return shape(window.jupyterapp.shell.saveLayout().mainArea.dock.main);
}"""


def _wait_for_saved_layout(page: Page, lab: Lab, workspace: str, panes: int) -> None:
    """Until the saved workspace holds the layout on screen: Lab saves it in steps while panes are
    placed, and a reload in between restores an intermediate layout."""
    deadline = time.monotonic() + 60
    live = page.evaluate(_LIVE_SHAPE)
    assert json.dumps(live).count("dashdock-plots:") == panes, live
    while _saved_layout(lab, workspace) != live:
        assert time.monotonic() < deadline, (_saved_layout(lab, workspace), live)
        time.sleep(0.5)


def test_default_layout_then_reload_restores_panes(
    browser: Browser, lab: Lab, dask_cluster: DaskCluster
) -> None:
    lab.api("dashdock/api/sources", "POST", {"url": dask_cluster.dashboard})
    page = open_lab(browser, lab, "restore")
    # A main area with only a Launcher (Lab opens one into an empty main area): the layout replaces it.
    page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    expect(page.locator("#jp-main-dock-panel .jp-Launcher")).to_have_count(1)
    open_sidebar(page)
    page.click(".jp-dashdock-Plots-layout")
    for name in KEY_PLOTS:
        wait_for_bokeh_plot(page, name)
    expect(page.locator("#jp-main-dock-panel .jp-Launcher")).to_have_count(0)
    boxes = {name: pane(page, name).bounding_box() for name in KEY_PLOTS}
    assert all(boxes.values())
    # A grid: task stream top left, worker memory to its right, progress and graph below them.
    top_left, top_right = boxes["Task Stream"], boxes["Workers Memory"]
    bottom_left, bottom_right = boxes["Progress"], boxes["Graph"]
    assert top_right["x"] > top_left["x"] + 50 and abs(top_right["y"] - top_left["y"]) < 10  # type: ignore[index]
    assert bottom_left["y"] > top_left["y"] + 50 and abs(bottom_left["x"] - top_left["x"]) < 10  # type: ignore[index]
    assert bottom_right["y"] > top_right["y"] + 50 and abs(bottom_right["x"] - top_right["x"]) < 10  # type: ignore[index]

    _wait_for_saved_layout(page, lab, "restore", len(KEY_PLOTS))
    page.reload()
    wait_for_lab(page)
    for name in KEY_PLOTS:
        expect(pane(page, name)).to_have_count(1)
        wait_for_bokeh_plot(page, name)
    restored = {name: pane(page, name).bounding_box() for name in KEY_PLOTS}
    for name in KEY_PLOTS:
        assert abs(restored[name]["x"] - boxes[name]["x"]) < 5, name  # type: ignore[index]
        assert abs(restored[name]["y"] - boxes[name]["y"]) < 5, name  # type: ignore[index]
    screenshot(page, "restored-layout")


def test_commands_are_in_the_palette(browser: Browser, lab: Lab) -> None:
    page = open_lab(browser, lab, "palette")
    page.keyboard.press("Control+Shift+C")
    page.fill(".lm-CommandPalette-input", "Dask")
    items = page.locator(".lm-CommandPalette-item")
    expect(items.filter(has_text="Add Dask Dashboard Source")).to_have_count(1)
    expect(items.filter(has_text="Open Default Dask Dashboard Layout")).to_have_count(1)
    # Without a plot, open-plot is the plot picker (ui-tests/test_ui_pane_usability.py drives it).
    expect(items.filter(has_text="Open Dask Plot…")).to_have_count(1)
    for command in ("dashdock:add-source", "dashdock:open-plot", "dashdock:open-layout"):
        assert page.evaluate(f"() => window.jupyterapp.commands.hasCommand('{command}')")


def test_dask_launch_layout_command_accepts_a_proxied_dashboard_link(
    browser: Browser, lab: Lab, dask_cluster: DaskCluster
) -> None:
    # What Dask's own client repr passes when kernels link dashboards through dashdock.
    host_port = dask_cluster.root.split("//", 1)[1]
    link = f"{lab.base_url}dashdock/proxy/{host_port}/status"
    page = open_lab(browser, lab, "launch-layout")
    page.evaluate("url => window.jupyterapp.commands.execute('dask:populate-and-launch-layout', {url})", link)
    for name in KEY_PLOTS:
        # Beside the Launcher a grid cell can fall below the smallest pane size: it is a tab then.
        page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=name).first.click()
        wait_for_bokeh_plot(page, name)
