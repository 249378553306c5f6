"""History pages show task keys anyone's code chose: they must never act as the user.

A managed cluster runs tasks whose keys are markup, under a Lab at a base URL as on JupyterHub.
The History view's overview, a window's task-stream pane and the HTML report show them as text;
and the attacks a hostile page would try (hostile.py), run inside each page as if a key had
smuggled them in, find an opaque origin without the user's session.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any

import pytest
from distributed import Client
from helpers import recorded_cluster, wait_until
from hostile import ATTACKS, attack_values
from lab import Lab, open_lab, screenshot
from playwright.sync_api import Browser, Frame, expect
from test_ui_isolation import _assert_contained, _assert_lab_untouched

pytestmark = pytest.mark.parametrize("lab", ["/user/alice/"], indirect=True)

HOSTILE_KEY = "<img src=x onerror=window.__injected=1;top.__x=1>"


@pytest.fixture
def kernel(lab: Lab) -> Iterator[str]:
    started: Any = lab.api("api/kernels", "POST", {"name": "python3"})
    yield started["id"]
    lab.api(f"api/kernels/{started['id']}", "DELETE")


def _attack(frame: Frame, lab: Lab, kernel: str) -> dict[str, Any]:
    """Run every attack inside the page, as a script a task key smuggled in would."""
    frame.evaluate("() => {" + ATTACKS % attack_values(lab.base_url, kernel) + "}")
    frame.wait_for_function("() => window.__attacksDone === true", timeout=45_000)
    return frame.evaluate("() => window.__attacks")


def _frame_of(selector: str, page: Any) -> Frame:
    handle = page.locator(selector).locator("iframe").first.element_handle()
    assert handle is not None
    frame = handle.content_frame()
    assert frame is not None
    frame.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=60_000)
    return frame


def test_recorded_hostile_keys_are_text_and_history_pages_cannot_act_as_the_user(
    browser: Browser, lab: Lab, kernel: str
) -> None:
    cluster = recorded_cluster(lab)
    source = cluster["source"]
    with Client(cluster["scheduler"], timeout=30) as client:
        keys = [f"{HOSTILE_KEY}-{i}" for i in range(20)]
        client.gather(client.map(operator.neg, range(20), key=keys))

    def recorded() -> bool:
        runs: Any = lab.api("dashdock/api/history")
        return any(r["source"] == source and r["tasks"] >= 20 for r in runs["runs"])

    wait_until(recorded)

    page = open_lab(browser, lab, "history-hostile")
    page.evaluate(
        "source => { void window.jupyterapp.commands.execute('dashdock:open-history', {source}); }", source
    )
    overview = _frame_of(".jp-dashdock-HistoryView", page)
    attacks = _attack(overview, lab, kernel)
    _assert_contained(attacks, lab, kernel, framed=True)

    # A window's task stream draws the keys: as data, the markup never runs.
    page.locator('.jp-dashdock-HistoryView button[data-action="open-window"]').click()
    stream = _frame_of(".jp-dashdock-HistoryPane:has(iframe[title='Task Stream'])", page)
    assert stream.evaluate("() => window.__injected === undefined")
    assert HOSTILE_KEY not in stream.content() or "&lt;img" in stream.content()
    _assert_contained(_attack(stream, lab, kernel), lab, kernel, framed=True)
    _assert_lab_untouched(page, lab)
    screenshot(page, "history-hostile-keys")

    # The report opened as a page of its own: sandboxed too, though not framed.
    report = page.context.new_page()
    report.goto(f"{lab.url}dashdock/api/history/{source}/report")
    expect(report.locator("body")).to_contain_text("20 tasks, 0 erred")
    assert report.evaluate("() => window.__injected === undefined")
    _assert_contained(_attack(report.main_frame, lab, kernel), lab, kernel, framed=False)
