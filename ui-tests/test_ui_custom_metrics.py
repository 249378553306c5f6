"""A user's own metrics (``dashdock.metric``) listed with the cluster's plots and docked as panes."""

from __future__ import annotations

from typing import Any

from distributed import Client
from helpers import open_sidebar, pane, pane_frame, plot_item, wait_for_bokeh_plot, wait_until
from lab import Lab, open_lab, screenshot, start_cluster, stop_cluster
from playwright.sync_api import Browser, Frame, expect

import dashdock

# The values of a line's data source in a pane: its Bokeh model is named after the line.
_LINE_VALUES = """name => {
    const source = Bokeh.documents[0].get_model_by_name(name);
    if (!source) return null;
    const data = source.data instanceof Map ? Object.fromEntries(source.data) : source.data;
    return Array.from(data.value);
}"""

_LINE_NAMES = """() => [...Bokeh.documents[0].all_models]
    .filter(model => model.type === 'ColumnDataSource' || model.constructor.name === 'ColumnDataSource')
    .map(model => model.name).sort()"""

_ERROR_TEXT = """() => {
    const error = Bokeh.documents[0].get_model_by_name('dashdock-metric-error');
    return error && error.visible ? error.text : '';
}"""


def _values(frame: Frame, line: str) -> list[float]:
    return frame.evaluate(_LINE_VALUES, line) or []


def _open(page: Any, name: str) -> Frame:
    plot_item(page, name).click()
    wait_for_bokeh_plot(page, name)
    return pane_frame(page, name)


def test_metrics_from_a_notebook_dock_and_update_live(browser: Browser, lab: Lab) -> None:
    # A cluster of its own: its metrics would show in every other test's sidebar.
    cluster = start_cluster()
    try:
        with Client(cluster.scheduler, timeout=30) as client:
            answer = dashdock.metric(client, "answer", lambda dask_scheduler: 42, every=0.5)
            dashdock.metric(
                client,
                "Tasks per worker",
                lambda dask_worker: len(dask_worker.state.tasks),
                every=0.5,
                where="workers",
            )
            dashdock.metric(client, "Broken", lambda dask_scheduler: 1 / 0, every=0.5)

            source = lab.api("dashdock/api/sources", "POST", {"url": cluster.dashboard})
            assert isinstance(source, dict)
            listed = lab.api(f"dashdock/api/sources/{source['id']}/plots")
            assert isinstance(listed, dict)
            custom = {plot["name"]: plot["path"] for plot in listed["plots"] if plot["group"] == "custom"}
            assert custom == {
                "answer": "/dashdock-metric-answer",
                "Broken": "/dashdock-metric-broken",
                "Tasks per worker": "/dashdock-metric-tasks-per-worker",
            }

            page = open_lab(browser, lab, "custom-metrics")
            sidebar = open_sidebar(page)
            group = sidebar.locator('.jp-dashdock-PlotGroup[data-group="custom"]')
            expect(group.locator(".jp-dashdock-Plot")).to_have_count(3)
            expect(group).to_contain_text("Custom")

            # A metric added while the sidebar shows the source appears there, no reselection needed
            # (the section asks again every 2 s while it is seen), and goes when removed.
            late = dashdock.metric(client, "Late", lambda dask_scheduler: 7, every=0.5)
            expect(plot_item(page, "Late")).to_be_visible(timeout=20_000)
            assert late.remove()
            expect(plot_item(page, "Late")).to_have_count(0, timeout=20_000)

            frame = _open(page, "answer")
            first = wait_until(lambda: _values(frame, "answer"))
            assert set(first) == {42.0}, first
            # Sampled every half second and streamed into the open pane.
            wait_until(lambda: len(_values(frame, "answer")) >= len(first) + 3, timeout=30)
            assert set(_values(frame, "answer")) == {42.0}

            per_worker = _open(page, "Tasks per worker")
            lines = wait_until(
                lambda: per_worker.evaluate(_LINE_NAMES) == ["Worker 0", "Worker 1"], timeout=30
            )
            assert lines, per_worker.evaluate(_LINE_NAMES)  # demo/sample_work.py runs two workers

            broken = _open(page, "Broken")
            wait_until(
                lambda: "ZeroDivisionError: division by zero" in broken.evaluate(_ERROR_TEXT), timeout=30
            )
            expect(pane(page, "Broken")).to_have_attribute("data-status", "live")
            screenshot(page, "custom-metrics")

            # The failing metric hurt nothing: the scheduler computes and the other metric goes on.
            assert client.submit(lambda x: x + 1, 41).result(timeout=30) == 42
            count = len(_values(frame, "answer"))
            wait_until(lambda: len(_values(frame, "answer")) > count, timeout=30)

            assert answer.remove()
            assert [metric.name for metric in dashdock.metrics(client)] == ["Tasks per worker", "Broken"]
            listed = lab.api(f"dashdock/api/sources/{source['id']}/plots")
            assert isinstance(listed, dict)
            assert "answer" not in {plot["name"] for plot in listed["plots"]}
            page.close()
    finally:
        stop_cluster(cluster)
