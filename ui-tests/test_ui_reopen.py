"""What a user closes opens again: Layout's panes, a History view, its window panes and the alerts
panel, also after a reload.

Lab's widget tracker forgets a widget when it emits ``disposed``; a pane that cleared its signals
before disposing never did, so Layout (and a History view) "brought forward" a closed widget and
showed nothing, for good, even after a reload of that workspace.
"""

from __future__ import annotations

import json
from typing import Any

from helpers import PANE, open_sidebar, wait_until
from lab import DaskCluster, Lab, open_lab, wait_for_lab
from playwright.sync_api import Browser, Page, expect

VIEW = ".jp-dashdock-HistoryView"
WINDOW_PANE = ".jp-dashdock-HistoryPane"
ALERTS = ".jp-dashdock-Alerts"


def _close_all(page: Page) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    for selector in (PANE, VIEW, WINDOW_PANE, ALERTS):
        expect(page.locator(selector)).to_have_count(0)


def _layout_and_history(page: Page, source: str) -> None:
    """Layout by its button, the History view by its command: both shown."""
    open_sidebar(page)
    page.click(".jp-dashdock-Plots-layout")
    expect(page.locator(PANE).first).to_be_visible(timeout=30_000)
    page.evaluate("source => window.jupyterapp.commands.execute('dashdock:open-history', {source})", source)
    expect(page.locator(VIEW)).to_have_count(1, timeout=30_000)  # a tab (Layout's panes may cover it)
    # The view's page posts the whole run as its window once drawn: Open window docks its panes.
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="History ·").click()
    open_window = page.locator(f'{VIEW} button[data-action="open-window"]')
    expect(open_window).to_be_enabled(timeout=60_000)
    open_window.click()
    expect(page.locator(WINDOW_PANE)).to_have_count(3)
    page.locator(".jp-dashdock-AlertsEntry").click()
    expect(page.locator(ALERTS)).to_have_count(1)


def test_layout_and_history_open_again_after_they_were_closed_and_after_a_reload(
    browser: Browser, lab: Lab, dask_cluster: DaskCluster
) -> None:
    source: Any = lab.api("dashdock/api/sources", "POST", {"url": dask_cluster.dashboard})

    def recorded() -> bool:  # a source added by URL is recorded: its run is in History
        runs: Any = lab.api("dashdock/api/history")
        return any(run["source"] == source["id"] for run in runs["runs"])

    wait_until(recorded)
    page = open_lab(browser, lab, "reopen")
    _layout_and_history(page, source["id"])
    panes = page.locator(PANE).count()
    _close_all(page)
    _layout_and_history(page, source["id"])
    expect(page.locator(PANE)).to_have_count(panes)

    # Closed one by one with their tabs' x, then the workspace reloaded: still opens.
    for _ in range(page.locator(".lm-DockPanel-tabBar .lm-TabBar-tabCloseIcon").count()):
        page.locator(".lm-DockPanel-tabBar .lm-TabBar-tabCloseIcon").first.click()
    for selector in (PANE, VIEW, WINDOW_PANE, ALERTS):
        expect(page.locator(selector)).to_have_count(0)

    def saved() -> bool:  # Lab saves its workspace a moment later: a reload before restores them
        workspace: Any = lab.api("lab/api/workspaces/reopen")
        main = workspace["data"].get("layout-restorer:data", {}).get("main", {})
        return "dashdock" not in json.dumps(main)

    wait_until(saved)
    page.reload()
    wait_for_lab(page)
    _layout_and_history(page, source["id"])
    expect(page.locator(PANE)).to_have_count(panes)
