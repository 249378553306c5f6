"""A user looks back at a cluster's work: the History section, a run's overview, a window's panes."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from a11y import assert_accessible
from distributed import Client
from helpers import history_frame, live_run, open_sidebar, recorded_cluster, wait_for_history_plot, wait_until
from lab import Lab, open_lab, screenshot
from playwright.sync_api import Browser, Locator, Page, expect

SECTION = ".jp-dashdock-History"
VIEW = ".jp-dashdock-HistoryView"
PAGES = ("Task Stream", "Progress", "Workers Memory")
TASKS = 120


def _history_pane(page: Page, name: str) -> Locator:
    return page.locator(f".jp-dashdock-HistoryPane:has(iframe[title='{name}'])")


def test_a_recorded_run_is_browsed_by_window_and_exported(browser: Browser, lab: Lab, tmp_path: Path) -> None:
    # A managed cluster is recorded without anyone asking; known work runs on it.
    running = recorded_cluster(lab)
    source = running["source"]
    before = time.time()
    with Client(running["scheduler"], timeout=30) as client:
        # A function the workers can import (this module is not on their path): each task a sleep.
        client.gather(client.map(time.sleep, [0.01] * TASKS, pure=False))
    after = time.time()
    wait_until(lambda: live_run(lab, source).get("tasks", 0) >= TASKS)

    # The History section, opened from the keyboard, lists the run as recording.
    page = open_lab(browser, lab, "history")
    requested: list[str] = []
    page.on("requestfinished", lambda request: requested.append(request.url))
    sidebar = open_sidebar(page)
    title = sidebar.locator(".jp-AccordionPanel-title", has_text="History")
    title.focus()
    page.keyboard.press("Enter")
    expect(title).to_have_attribute("aria-expanded", "true")
    section = page.locator(SECTION)
    row = section.locator(f'.jp-dashdock-Run[data-run-id="{source}"]')
    expect(row).to_contain_text("Cluster 1", timeout=30_000)
    expect(row.locator(".jp-dashdock-Run-live")).to_be_visible()
    expect(row).to_contain_text("tasks")
    # Its start on a 24-hour clock, as the History view and its plots' axes give times.
    details = row.locator(".jp-dashdock-Run-details")
    expect(details).to_contain_text(re.compile(r"\b\d{2}:\d{2}\b"))
    expect(details).not_to_contain_text(re.compile(r"\b(AM|PM)\b", re.IGNORECASE))
    switch = section.locator(f'.jp-dashdock-RecordSwitch[data-source-id="{source}"]')
    expect(switch).to_have_attribute("aria-checked", "true")
    assert_accessible(page, SECTION)
    screenshot(page, "history-section")

    # Enter on the run opens its History view; the overview page draws.
    row.focus()
    page.keyboard.press("Enter")
    view = page.locator(VIEW)
    expect(view).to_be_visible()
    wait_for_history_plot(view)
    label = view.locator(".jp-dashdock-HistoryView-window")

    # A window posted by anything but the view's own page is ignored, however well formed.
    expect(label).to_contain_text(" s")  # the page posted the whole run once loaded
    shown = label.inner_text()
    bogus = {"type": "dashdock:history-window", "start": 1.0, "end": 2.0}
    # Our listener, added after the view's, sees the message once the view has handled it; then
    # two frames for anything the view would redraw.
    page.evaluate(
        """message => new Promise(done => {
            const seen = event => {
                if (event.data?.type !== message.type || event.data?.start !== message.start) return;
                window.removeEventListener('message', seen);
                requestAnimationFrame(() => requestAnimationFrame(done));
            };
            window.addEventListener('message', seen);
            window.postMessage(message, '*');
        })""",
        bogus,
    )
    assert label.inner_text() == shown

    # The page chooses the window of the work (as its brush does); the toolbar says it.
    start, end = before - 1, after + 1
    history_frame(view).evaluate(
        "([start, end]) => window.parent.postMessage({type: 'dashdock:history-window', start, end}, '*')",
        [start, end],
    )
    expect(label).to_contain_text(" \u2013 ")  # an en dash between the two times
    expect(label).to_contain_text(" s")
    assert_accessible(page, f"{VIEW} .jp-Toolbar")
    screenshot(page, "history-view")

    # Open window docks the window's task stream, progress and memory, each drawn by Bokeh.
    view.locator('button[data-action="open-window"]').click()
    for name in PAGES:
        pane = _history_pane(page, name)
        expect(pane).to_have_count(1)
        wait_for_history_plot(pane)
    tab = page.locator(".lm-TabBar-tab", has_text="Task Stream · Cluster 1")
    expect(tab).to_have_count(1)
    screenshot(page, "history-window-panes")
    # Four sandboxed pages drew, and BokehJS came to them from the Lab, once per file.
    fetched = [url for url in requested if "/dashdock/bokehjs/" in url]
    assert fetched and len(fetched) == len(set(fetched)), fetched
    assert not [url for url in requested if "/dashdock/bokeh/static/js/bokeh" in url]

    # Export trace downloads the window as a Chrome trace holding the work's tasks.
    with page.expect_download() as download:
        view.locator('button[data-action="export-trace"]').click()
    path = tmp_path / "trace.json"
    download.value.save_as(path)
    trace = json.loads(path.read_text())
    tasks = [e for e in trace["traceEvents"] if e.get("ph") == "X" and "sleep" in json.dumps(e)]
    assert len(tasks) >= TASKS, len(tasks)

    # The run can be deleted from the sidebar, after a confirmation.
    row.focus()
    page.keyboard.press("Delete")
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Delete this run?")
    dialog.locator("button", has_text="Delete").click()
    expect(row).to_have_count(0, timeout=30_000)

    lab.api(f"dashdock/api/clusters/{running['id']}", "DELETE")
