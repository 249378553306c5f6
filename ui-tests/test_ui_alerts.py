"""A user hears about trouble without watching a plot: 1,000 failing tasks are one notification that
counts them, its action opens the Exceptions pane; the alerts panel lists it; a muted source stays
quiet."""

from __future__ import annotations

import json
import operator
import re

from a11y import assert_accessible
from distributed import Client, wait
from helpers import PANE, open_sidebar, pane_frame, recorded_cluster, wait_until
from lab import Lab, open_lab, screenshot
from playwright.sync_api import Browser, Page, expect

TOAST = ".Toastify__toast"
FAILING = 1000


def _fail(scheduler: str, group: str) -> None:
    with Client(scheduler, timeout=30) as client:
        # A function workers can import: each task divides by zero.
        futures = client.map(
            operator.truediv, [1] * FAILING, [0] * FAILING, key=[f"{group}-{i}" for i in range(FAILING)]
        )
        wait(futures)


def _polled_since_load(page: Page) -> None:
    """The Lab's alerts have been polled once after the first look: what happens now is news."""
    page.wait_for_event("response", lambda r: "dashdock/api/alerts?since=" in r.url, timeout=60_000)


def test_a_thousand_failing_tasks_are_one_notification_that_opens_the_exceptions(
    browser: Browser, lab: Lab
) -> None:
    cluster = recorded_cluster(lab)
    page = open_lab(browser, lab, "alerts")
    _polled_since_load(page)
    _fail(cluster["scheduler"], "boom")

    # One toast, counting every failed task once they are all recorded.
    toast = page.locator(TOAST, has_text="boom:")
    expect(toast).to_contain_text(f"boom: {FAILING:,} tasks erred", timeout=60_000)
    expect(toast).to_have_count(1)
    expect(toast).to_contain_text(cluster["name"])
    screenshot(page, "alert-toast-task-erred")

    # Its action opens the source's Exceptions plot as a pane.
    toast.get_by_role("button", name="Exceptions").click()
    exceptions = page.locator(f"{PANE}:has(iframe[title='Exceptions'])")
    expect(exceptions).to_be_visible(timeout=30_000)
    # A table, not a canvas: it lists what the tasks raised.
    expect(pane_frame(page, "Exceptions").get_by_text("division by zero").first).to_be_visible(timeout=60_000)

    # The alerts panel, opened from its entry in the Dask sidebar (which counts the alerts),
    # lists it with what it offers; every control has a name.
    entry = open_sidebar(page).get_by_role("button", name=re.compile(r"^Alerts \([0-9,]+\)$"))
    # Beside the count, the sidebar's name shows whole in a sidebar of Lab's default width.
    header = page.locator(".jp-dashdock-Sidebar-header")
    assert header.evaluate("node => node.scrollWidth <= node.clientWidth"), header.inner_text()
    entry.focus()
    page.keyboard.press("Enter")
    panel = page.locator(".jp-dashdock-Alerts")
    item = panel.locator(".jp-dashdock-Alert[data-kind='task-erred']")
    expect(item).to_contain_text(f"boom: {FAILING:,} tasks erred")
    show = item.get_by_role("button", name=f"Show in history: boom: {FAILING:,} tasks erred")
    expect(show).to_be_visible()
    assert_accessible(page, ".jp-dashdock-Alerts")
    screenshot(page, "alerts-panel")

    # Show in history opens the run's History view with the alert's stretch brushed on the overview.
    found = lab.api(f"dashdock/api/alerts?source={cluster['source']}")
    assert isinstance(found, dict)
    (alert,) = [a for a in found["alerts"] if a["kind"] == "task-erred"]
    show.click()
    view = page.locator(".jp-dashdock-HistoryView")
    expect(view).to_be_visible()
    handle = view.locator("iframe").element_handle()
    assert handle is not None
    overview = handle.content_frame()
    assert overview is not None
    brush = overview.wait_for_function(
        """() => {
            const doc = window.Bokeh?.documents.find(d => d.roots().length > 0);
            const tool = doc && [...doc.all_models].find(m => m.type === 'RangeTool');
            return tool ? [tool.x_range.start, tool.x_range.end] : null;
        }""",
        timeout=45_000,
    ).json_value()
    margin = 30  # HISTORY_MARGIN of src/alerts/actions.ts
    assert abs(brush[0] / 1000 - (alert["time"] - margin)) < 1, (brush, alert)
    assert abs(brush[1] / 1000 - (alert["updated"] + margin)) < 1, (brush, alert)
    screenshot(page, "alert-show-in-history")


def test_a_muted_source_lists_its_alerts_without_notifying(browser: Browser, lab: Lab) -> None:
    cluster = recorded_cluster(lab)
    source = cluster["source"]
    page = open_lab(browser, lab, "muted")
    sidebar = open_sidebar(page)
    title = sidebar.locator(".jp-AccordionPanel-title", has_text="History")
    if title.get_attribute("aria-expanded") != "true":
        title.click()
    bell = page.locator(f'.jp-dashdock-AlertSwitch[data-source-id="{source}"]')
    expect(bell).to_have_attribute("aria-checked", "true")
    expect(bell).to_have_accessible_name(f"Notify alerts of {cluster['name']}")
    bell.focus()
    page.keyboard.press("Enter")
    expect(bell).to_have_attribute("aria-checked", "false")
    listed = lab.api(f"dashdock/api/sources/{source}")
    assert isinstance(listed, dict) and listed["alerts"] is False
    screenshot(page, "alerts-muted-switch")

    _polled_since_load(page)
    _fail(cluster["scheduler"], "quiet")

    def recorded() -> list:
        found = lab.api(f"dashdock/api/alerts?source={source}")
        assert isinstance(found, dict)
        return [a for a in found["alerts"] if a["kind"] == "task-erred" and a["count"] == FAILING]

    (alert,) = wait_until(recorded)  # type: ignore[misc]
    assert alert["notified"] is False
    _polled_since_load(page)  # the Lab has seen it too
    expect(page.locator(TOAST, has_text="quiet:")).to_have_count(0)
    page.evaluate(
        "source => { void window.jupyterapp.commands.execute('dashdock:open-alerts', {source}); }", source
    )
    expect(page.locator(".jp-dashdock-Alert[data-kind='task-erred']")).to_contain_text("not notified")


def test_a_trouble_toast_closes_by_itself_and_its_alert_stays_listed(browser: Browser, lab: Lab) -> None:
    settings = "lab/api/settings/dashdock:alerts"
    lab.api(settings, "PUT", {"raw": json.dumps({"toastSeconds": 2})})
    try:
        cluster = recorded_cluster(lab)
        page = open_lab(browser, lab, "toast-expiry")
        _polled_since_load(page)
        _fail(cluster["scheduler"], "fleeting")
        toast = page.locator(TOAST, has_text="fleeting:")
        expect(toast).to_contain_text("tasks erred", timeout=60_000)
        # Nobody touches it: it goes, and nothing is left over the panes (the count goes on in the
        # alerts panel).
        expect(toast).to_have_count(0, timeout=30_000)
        entry = open_sidebar(page).get_by_role("button", name=re.compile(r"^Alerts \([0-9,]+\)$"))
        entry.click()
        listed = page.locator(".jp-dashdock-Alert[data-kind='task-erred']", has_text="fleeting:")
        expect(listed).to_contain_text(f"fleeting: {FAILING:,} tasks erred")
    finally:
        lab.api(settings, "PUT", {"raw": "{}"})
