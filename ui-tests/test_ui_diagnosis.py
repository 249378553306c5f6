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
    straggler = region.locator(".jp-dashdock-Finding[data-kind='straggler'] .jp-dashdock-Finding-title")
    expect(straggler).to_contain_text(
        re.compile(r"^\d+ % of thread time was idle in the last "), timeout=30_000
    )
    # The heading counts them (the list scrolls past about four).
    expect(region.get_by_role("heading")).to_have_text(re.compile(r"^Why it took this long \(\d+\)$"))
    # What it rests on and what to do are behind a button, for the keyboard and screen readers too.
    item = region.locator(".jp-dashdock-Finding[data-kind='straggler']")
    how = item.get_by_role("button", name="How to fix it")
    expect(how).to_have_attribute("aria-expanded", "false")
    how.focus()
    page.keyboard.press("Enter")
    expect(how).to_have_attribute("aria-expanded", "true")
    expect(item).to_contain_text("split the long ones")
    expect(item).to_contain_text("The longest: sleep-")
    expect(item.get_by_role("link", name=re.compile("documentation on it$"))).to_have_attribute(
        "href", re.compile(r"^https://")
    )
    assert_accessible(page, ".jp-dashdock-Findings")
    screenshot(page, "history-why-it-took-this-long")
    page.keyboard.press("Enter")  # folded again
    expect(how).to_have_attribute("aria-expanded", "false")

    # In a narrow window each sentence wraps and is shown whole: nothing to scroll sideways or down.
    page.set_viewport_size({"width": 700, "height": 800})
    shown_whole = "n => n.scrollWidth <= n.clientWidth && n.scrollHeight <= n.clientHeight + 1"
    wait_until(lambda: region.evaluate(shown_whole), timeout=30)
    screenshot(page, "history-why-narrow")
    page.set_viewport_size(VIEWPORT)

    # A click (from the keyboard) brushes the straggler's stretch (its tail and the busy work it
    # held up: here the whole computation) and docks its Task Stream in front.
    straggler.focus()
    page.keyboard.press("Enter")
    # Its stretch's own findings keep it marked.
    expect(straggler).to_have_attribute("aria-current", "true")
    stream = page.locator(".jp-dashdock-HistoryPane[data-dashdock-page='task-stream']")
    expect(stream).to_be_visible(timeout=30_000)
    expect(page.locator(".jp-dashdock-HistoryPane")).to_have_count(3)  # with Progress and Workers Memory
    for pane in page.locator(".jp-dashdock-HistoryPane").all():
        wait_for_history_plot(pane)
    screenshot(page, "history-finding-chosen")
