"""Panes stay honest about their scheduler: restarts, pause and hidden tabs."""

from __future__ import annotations

import time

from helpers import open_sidebar, pane, pane_frame, plot_item, wait_for_bokeh_plot
from lab import DaskCluster, Lab, free_port, open_lab, screenshot, start_cluster, stop_cluster
from playwright.sync_api import Browser, Page, expect


def _pane_id(page: Page, name: str) -> str:
    return pane(page, name).first.get_attribute("id") or ""


def _relayed(lab: Lab, pane_id: str) -> tuple[int, int]:
    """Messages and bytes the server has relayed to a pane's open websockets."""
    state = lab.api(f"dashdock/api/panes/{pane_id}")
    relays = state["relays"]  # type: ignore[index]
    return sum(r["messages"] for r in relays), sum(r["bytes"] for r in relays)


def _wait_until_silent(lab: Lab, pane_id: str) -> tuple[int, int]:
    """Until no relay of the pane streams from the dashboard any more (a pause closed its side,
    after the message in flight); returns its counters then."""
    deadline = time.monotonic() + 20
    while any(r["streaming"] for r in lab.api(f"dashdock/api/panes/{pane_id}")["relays"]):  # type: ignore[index]
        assert time.monotonic() < deadline, "the pane's relay still streams"
        time.sleep(0.2)
    return _relayed(lab, pane_id)


def _expect_status(page: Page, name: str, status: str, timeout: float = 15_000) -> None:
    """The pane says `status` (live, paused, suspended, reconnecting, gone), in its toolbar and tab."""
    expect(pane(page, name)).to_have_attribute("data-status", status, timeout=timeout)


def test_pane_reconnects_after_the_scheduler_restarts(browser: Browser, lab: Lab) -> None:
    port = free_port()
    cluster = start_cluster(port)
    try:
        lab.api("dashdock/api/sources", "POST", {"url": cluster.dashboard})
        page = open_lab(browser, lab, "restart")
        open_sidebar(page)
        page.locator(".jp-dashdock-Source", has_text=f"127.0.0.1:{port}").click()
        plot_item(page, "Task Stream").click()
        wait_for_bokeh_plot(page, "Task Stream")
        _expect_status(page, "Task Stream", "live")

        stop_cluster(cluster)
        _expect_status(page, "Task Stream", "reconnecting", timeout=20_000)
        screenshot(page, "scheduler-down")

        cluster = start_cluster(port)
        _expect_status(page, "Task Stream", "live", timeout=30_000)
        wait_for_bokeh_plot(page, "Task Stream")
        screenshot(page, "scheduler-back")
        page.close()
    finally:
        stop_cluster(cluster)


def test_pause_freezes_and_resume_goes_live(browser: Browser, lab: Lab, dask_cluster: DaskCluster) -> None:
    lab.api("dashdock/api/sources", "POST", {"url": dask_cluster.dashboard})
    page = open_lab(browser, lab, "pause")
    open_sidebar(page)
    page.locator(".jp-dashdock-Source", has_text=dask_cluster.root.split("//")[1]).click()
    plot_item(page, "Task Stream").click()
    wait_for_bokeh_plot(page, "Task Stream")
    pane_id = _pane_id(page, "Task Stream")
    deadline = time.monotonic() + 20
    while _relayed(lab, pane_id)[0] < 5 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _relayed(lab, pane_id)[0] >= 5, "the live pane received no updates"

    pane(page, "Task Stream").locator(".jp-dashdock-PaneStatus-pause").click()
    _expect_status(page, "Task Stream", "paused")
    frozen = _wait_until_silent(lab, pane_id)
    time.sleep(3)  # an observation window: nothing may arrive in it
    assert _relayed(lab, pane_id) == frozen, "a paused pane still received updates"

    pane(page, "Task Stream").locator(".jp-dashdock-PaneStatus-pause").click()
    _expect_status(page, "Task Stream", "live")
    wait_for_bokeh_plot(page, "Task Stream")
    deadline = time.monotonic() + 20
    while _relayed(lab, pane_id)[0] < 5 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _relayed(lab, pane_id)[0] >= 5, "the resumed pane received no updates"


def test_hidden_pane_stops_streaming_and_resumes_when_shown(
    browser: Browser, lab: Lab, dask_cluster: DaskCluster
) -> None:
    source = lab.api("dashdock/api/sources", "POST", {"url": dask_cluster.dashboard})
    page = open_lab(browser, lab, "hidden")
    open_sidebar(page)
    page.evaluate(
        """async source => {
            const app = window.jupyterapp;
            const first = await app.commands.execute('dashdock:open-plot',
              {source, path: '/individual-task-stream'});
            await app.commands.execute('dashdock:open-plot',
              {source, path: '/individual-progress', mode: 'tab-after', ref: first.id});
        }""",
        source["id"],  # type: ignore[index]
    )
    wait_for_bokeh_plot(page, "Progress")
    hidden_id = _pane_id(page, "Task Stream")
    _expect_status(page, "Task Stream", "suspended", timeout=20_000)
    frozen = _wait_until_silent(lab, hidden_id)
    time.sleep(3)  # an observation window: nothing may arrive in it
    assert _relayed(lab, hidden_id) == frozen, "a hidden pane still received updates"

    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="Task Stream").click()
    _expect_status(page, "Task Stream", "live")
    wait_for_bokeh_plot(page, "Task Stream")


# Bokeh's notices (toasts in a shadow root appended to the page's body), counted.
_BOKEH_NOTICES = """() => [...document.body.children]
  .map(el => el.shadowRoot?.querySelector('.entries')?.children.length ?? 0)
  .reduce((a, b) => a + b, 0)"""


def test_bokeh_connection_notices_never_cover_a_pane(browser: Browser, lab: Lab) -> None:
    """While dashdock says "reconnecting", Bokeh's own "connection lost" toast stays away."""
    port = free_port()
    cluster = start_cluster(port)
    try:
        source = lab.api("dashdock/api/sources", "POST", {"url": cluster.dashboard})
        page = open_lab(browser, lab, "no-bokeh-toast")
        page.evaluate(
            "source => window.jupyterapp.commands.execute("
            "'dashdock:open-plot', {source, path: '/individual-task-stream'})",
            source["id"],  # type: ignore[index]
        )
        wait_for_bokeh_plot(page, "Task Stream")
        frame = pane_frame(page, "Task Stream")
        frame.wait_for_function(
            "() => Bokeh.documents[0].config.notify_connection_status === false"
            " && Bokeh.documents[0].config.reconnect_session === false"
        )
        refused = lab.log.read_text().count("used by its page already")

        stop_cluster(cluster)
        _expect_status(page, "Task Stream", "reconnecting", timeout=20_000)
        seen = []
        for _ in range(12):  # Bokeh shows its first toast as soon as its socket closes
            seen.append(frame.evaluate(_BOKEH_NOTICES))
            time.sleep(0.5)
        screenshot(page, "reconnecting-without-bokeh-toast")
        assert seen == [0] * len(seen), seen
        # Nor does Bokeh retry the page's websocket, which its spent view link would refuse.
        assert lab.log.read_text().count("used by its page already") == refused
        page.close()
    finally:
        stop_cluster(cluster)
