"""A recorded source's key plots are drawn by dashdock from its recording (``draw_key_plots``, on
by default, asked for here all the same): the pane opens as any other, draws Dask's plot, keeps up
with the work, and says what it is; a plot dashdock does not draw stays Dask's page."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers import open_sidebar, pane, pane_frame, plot_item, wait_for_bokeh_plot, wait_until
from lab import DaskCluster, Lab, screenshot, start_lab, stop_lab
from playwright.sync_api import Page, expect


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    server = start_lab(tmp_path_factory.mktemp("lab"), "/user/alice/", ["--DashdockApp.draw_key_plots=True"])
    yield server
    stop_lab(server)


# The newest task end drawn (ms), and how many tasks, over the Task Stream's data sources.
_NEWEST_TASK = """() => {
    let newest = 0, tasks = 0;
    for (const model of Bokeh.documents[0].all_models) {
        if (!model.data) continue;
        const data = model.data instanceof Map ? Object.fromEntries(model.data) : model.data;
        const start = data.start || [], duration = data.duration || [];
        tasks += duration.length;
        for (let i = 0; i < duration.length; i++) newest = Math.max(newest, start[i] + duration[i] / 2);
    }
    return [newest, tasks];
}"""


# The titles a plot's document holds (Bokeh draws them on a canvas, not as text).
_TITLES = """() => [...Bokeh.documents[0].all_models]
    .map((model) => model.text).filter((text) => typeof text === "string").join("\\n")"""


# The nodes the Graph shows (those of tasks not yet forgotten).
_GRAPH_NODES = """() => {
    let shown = 0;
    for (const model of Bokeh.documents[0].all_models) {
        if (!model.data) continue;
        const data = model.data instanceof Map ? Object.fromEntries(model.data) : model.data;
        if (data.state && data.visible) shown += [...data.visible].filter((v) => v === "True").length;
    }
    return shown;
}"""


def _drawn(lab: Lab, source: str) -> list[Any]:
    listed: Any = lab.api("dashdock/api/sources")
    found = next((s for s in listed["sources"] if s["id"] == source), {})
    return list(found.get("drawnPlots", []))


def test_a_recorded_task_stream_is_drawn_by_dashdock_and_keeps_up(
    page: Page, lab: Lab, dask_cluster: DaskCluster
) -> None:
    added: Any = lab.api("dashdock/api/sources", "POST", {"url": dask_cluster.dashboard})
    source = added["id"]
    open_sidebar(page)
    page.locator(".jp-dashdock-Source", has_text=dask_cluster.root.split("//")[1]).click()
    # Drawn here once the recorder reads the scheduler; until then the pane would be Dask's page.
    wait_until(lambda: "/individual-task-stream" in _drawn(lab, source), timeout=120)

    plot_item(page, "Task Stream").click()
    wait_for_bokeh_plot(page, "Task Stream")
    task_stream = pane(page, "Task Stream")
    expect(task_stream).to_have_attribute("data-drawn", "true")
    status = task_stream.locator(".jp-dashdock-PaneStatus")
    expect(status).to_contain_text("live (dashdock)")
    assert "Drawn by dashdock" in (status.get_attribute("title") or "")

    # The sample work's tasks arrive, and keep arriving: the plot follows the recording.
    frame = pane_frame(page, "Task Stream")
    wait_until(lambda: frame.evaluate(_NEWEST_TASK)[1] >= 50, timeout=90)
    first_newest = frame.evaluate(_NEWEST_TASK)[0]
    wait_until(lambda: frame.evaluate(_NEWEST_TASK)[0] > first_newest, timeout=60)
    screenshot(page, "drawn-task-stream")

    # The sample work's scheduler offers its state (kernel/plot_state.py): Progress is drawn too,
    # with the counts of the tasks under way.
    wait_until(lambda: "/individual-progress" in _drawn(lab, source), timeout=60)
    plot_item(page, "Progress").click()
    wait_for_bokeh_plot(page, "Progress")
    expect(pane(page, "Progress")).to_have_attribute("data-drawn", "true")
    progress = pane_frame(page, "Progress")
    wait_until(lambda: "Progress -- total: " in progress.evaluate(_TITLES), timeout=60)
    screenshot(page, "drawn-progress")

    # The Graph too, laid out in the recorder rather than in the scheduler: the sample work's
    # tasks appear on it as they are submitted.
    wait_until(lambda: "/individual-graph" in _drawn(lab, source), timeout=60)
    plot_item(page, "Graph").click()
    wait_for_bokeh_plot(page, "Graph")
    expect(pane(page, "Graph")).to_have_attribute("data-drawn", "true")
    graph = pane_frame(page, "Graph")
    wait_until(lambda: graph.evaluate(_GRAPH_NODES) > 0, timeout=60)
    screenshot(page, "drawn-graph")

    # The scheduler's own profile is not drawn by dashdock: its pane is Dask's page, saying nothing more.
    plot_item(page, "Profile Server").click()
    wait_for_bokeh_plot(page, "Profile Server")
    expect(pane(page, "Profile Server")).to_have_attribute("data-drawn", "false")
    expect(pane(page, "Profile Server").locator(".jp-dashdock-PaneStatus")).not_to_contain_text("dashdock")
