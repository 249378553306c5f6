"""A user opens the History of a computation that a straggler held up: "Why it took this long" names
it with its figure, and a click brushes its stretch and brings its Task Stream forward."""

from __future__ import annotations

import re
import time

from a11y import assert_accessible
from distributed import Client, get_task_stream
from helpers import recorded_cluster, wait_for_history_plot, wait_until
from lab import VIEWPORT, Lab, open_lab, screenshot
from playwright.sync_api import Browser, expect


def test_the_history_view_says_why_a_window_took_so_long(browser: Browser, lab: Lab) -> None:
    cluster = recorded_cluster(lab)
    with Client(cluster["scheduler"], timeout=30) as client:
        threads = sum(client.nthreads().values())
        with get_task_stream(client) as stream:
            client.gather(client.map(time.sleep, [0.2] * (5 * threads), pure=False))
            client.submit(time.sleep, 3.0, pure=False).result()  # a straggler holds the end
    # The window as the workers stamped its tasks (their clocks' offset from the scheduler's, as
    # they estimate it, shifts their times): the client's clock around the work can miss the first.
    spans = [span for task in stream.data for span in task["startstops"]]
    started, ended = min(s["start"] for s in spans), max(s["stop"] for s in spans)

    def recorded() -> bool:
        found = lab.api(f"dashdock/api/history/{cluster['source']}/diagnosis?start={started}&end={ended}")
        assert isinstance(found, dict)
        return found["tasks"] >= 5 * threads + 1

    wait_until(recorded)
    page = open_lab(browser, lab, "diagnosis")
    page.evaluate(
        "([source, start, end]) => window.jupyterapp.commands.execute("
        "'dashdock:open-history', {source, start, end})",
        [cluster["source"], started, ended],
    )
    region = page.get_by_role("region", name="Why it took this long")
    expect(region).to_be_visible(timeout=30_000)
    straggler = region.locator(".jp-dashdock-Finding[data-kind='straggler'] button")
    expect(straggler).to_contain_text(
        re.compile(r"^\d+ % of thread time was idle in the last "), timeout=30_000
    )
    expect(region.get_by_role("link", name="How to fix it").first).to_have_attribute(
        "href", re.compile(r"^https://")
    )
    assert_accessible(page, ".jp-dashdock-Findings")
    screenshot(page, "history-why-it-took-this-long")

    # In a narrow window each sentence wraps and is shown whole: nothing to scroll sideways or down.
    page.set_viewport_size({"width": 700, "height": 800})
    shown_whole = "n => n.scrollWidth <= n.clientWidth && n.scrollHeight <= n.clientHeight + 1"
    wait_until(lambda: region.evaluate(shown_whole), timeout=30)
    screenshot(page, "history-why-narrow")
    page.set_viewport_size(VIEWPORT)

    # A click (from the keyboard) brushes the straggler's stretch and docks its Task Stream in front.
    label = page.locator(".jp-dashdock-HistoryView-window")
    before = label.inner_text()
    straggler.focus()
    page.keyboard.press("Enter")
    expect(label).not_to_have_text(before)
    stream = page.locator(".jp-dashdock-HistoryPane[data-dashdock-page='task-stream']")
    expect(stream).to_be_visible(timeout=30_000)
    expect(page.locator(".jp-dashdock-HistoryPane")).to_have_count(3)  # with Progress and Workers Memory
    for pane in page.locator(".jp-dashdock-HistoryPane").all():
        wait_for_history_plot(pane)
    screenshot(page, "history-finding-chosen")
