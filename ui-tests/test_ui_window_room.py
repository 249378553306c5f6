"""Open window beside a full layout: no pane gets smaller than the minimum, no action hides.

A user has the default layout of a recorded cluster open, opens its History beside it and
docks a window: every dashdock pane on screen keeps the minimum pane size (320x200, the
settings' defaults), the History toolbar keeps its actions, and a plot pane about 530 px wide
keeps Rewind out of the toolbar's overflow menu (its status text shrinks first).
"""

from __future__ import annotations

import time

from distributed import Client
from helpers import PANE, live_run, recorded_cluster, wait_until
from lab import Lab, open_lab, screenshot
from playwright.sync_api import Browser, Locator, Page, expect

MIN_WIDTH, MIN_HEIGHT = 320, 200
VIEW = ".jp-dashdock-HistoryView"
HISTORY_PANE = ".jp-dashdock-HistoryPane"
TASKS = 100


def _shown_boxes(page: Page) -> list[tuple[str, float, float]]:
    found = []
    for selector in (PANE, VIEW, HISTORY_PANE):
        panes = page.locator(selector)
        for i in range(panes.count()):
            item = panes.nth(i)
            if item.is_visible():
                box = item.bounding_box()
                assert box
                found.append((item.get_attribute("id") or selector, box["width"], box["height"]))
    return found


def _in_toolbar(control: Locator) -> bool:
    """Shown in its toolbar itself, not moved into the overflow menu."""
    return control.is_visible() and control.evaluate("node => !node.closest('.jp-Toolbar-responsive-popup')")


def test_open_window_beside_a_layout_keeps_every_pane_usable(browser: Browser, lab: Lab) -> None:
    running = recorded_cluster(lab)
    source = running["source"]
    before = time.time()
    with Client(running["scheduler"], timeout=30) as client:
        client.gather(client.map(time.sleep, [0.01] * TASKS, pure=False))
    after = time.time()
    wait_until(lambda: live_run(lab, source).get("tasks", 0) >= TASKS)

    page = open_lab(browser, lab, "window-room")
    page.evaluate("source => window.jupyterapp.commands.execute('dashdock:open-layout', {source})", source)
    expect(page.locator(PANE)).to_have_count(4, timeout=60_000)
    page.evaluate("source => window.jupyterapp.commands.execute('dashdock:open-history', {source})", source)
    view = page.locator(VIEW)
    expect(view).to_be_visible()
    label = view.locator(".jp-dashdock-HistoryView-window")
    expect(label).to_contain_text(" s", timeout=60_000)  # the overview page posted the whole run
    frame = view.locator("iframe").content_frame
    frame.locator("body").evaluate(
        "(_, [start, end]) => window.parent.postMessage({type: 'dashdock:history-window', start, end}, '*')",
        [before - 1, after + 1],
    )
    expect(label).to_contain_text(" \u2013 ")
    open_window = view.locator('button[data-action="open-window"]')
    assert _in_toolbar(open_window)
    assert _in_toolbar(view.locator('button[data-action="export-trace"]'))
    open_window.click()
    expect(page.locator(HISTORY_PANE)).to_have_count(3)

    # Every dashdock pane on screen keeps the minimum size; what would not fit went in as a tab.
    def usable() -> bool:
        boxes = _shown_boxes(page)
        return bool(boxes) and all(w >= MIN_WIDTH - 1 and h >= MIN_HEIGHT - 1 for _, w, h in boxes)

    wait_until(usable, timeout=10)
    screenshot(page, "window-room-open-window")

    # A plot pane about 530 px wide: its status shrinks, Rewind and Pause stay in the toolbar.
    page.set_viewport_size({"width": 1340, "height": 950})
    page.evaluate("source => window.jupyterapp.commands.execute('dashdock:open-layout', {source})", source)
    shown = page.locator(f"{PANE}:visible").first
    wait_until(lambda: (shown.bounding_box() or {}).get("width", 0) < 600, timeout=10)
    width = shown.bounding_box()["width"]  # type: ignore[index]
    print(f"\nplot pane width: {width:.0f} px")
    assert _in_toolbar(shown.locator(".jp-dashdock-PaneRewind"))
    assert _in_toolbar(shown.locator(".jp-dashdock-PaneStatus-pause"))
    status = shown.locator(".jp-dashdock-PaneStatus")
    assert status.get_attribute("title"), "a status cut short is readable in full in its tooltip"
    screenshot(page, "window-room-narrow-pane")
    lab.api(f"dashdock/api/clusters/{running['id']}", "DELETE")
