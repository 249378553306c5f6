"""A live pane is rewound to its source's recording by keyboard, and returned to live."""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.error import HTTPError
from urllib.parse import parse_qs, urlparse

import pytest
from a11y import assert_accessible
from distributed import Client
from helpers import live_run, pane, recorded_cluster, wait_for_bokeh_plot, wait_until
from lab import DaskCluster, Lab, open_lab, screenshot
from playwright.sync_api import Browser, expect

TASKS = 60


def test_a_task_stream_pane_is_rewound_and_returned_to_live(browser: Browser, lab: Lab) -> None:
    # A managed cluster, recorded without anyone asking, runs known work.
    running = recorded_cluster(lab)
    source = running["source"]
    with Client(running["scheduler"], timeout=30) as client:
        client.gather(client.map(time.sleep, [0.01] * TASKS, pure=False))
    wait_until(lambda: live_run(lab, source).get("tasks", 0) >= TASKS)

    page = open_lab(browser, lab, "rewind")
    page.evaluate(
        "source => window.jupyterapp.commands.execute('dashdock:open-plot',"
        " {source, path: '/individual-task-stream'})",
        source,
    )
    stream = pane(page, "Task Stream")
    expect(stream).to_have_count(1)
    frame = stream.locator("iframe")
    status = stream.locator(".jp-dashdock-PaneStatus")
    expect(status).to_contain_text("live")
    wait_for_bokeh_plot(page, "Task Stream")
    live_src = frame.get_attribute("src")
    assert live_src and "/history/" not in live_src

    # Only this control rewinds; it has a name and a tooltip, and starts on Live.
    rewind = stream.get_by_role("combobox", name="Rewind")
    expect(rewind).to_have_attribute("title", "Show the recorded plot of the last minutes, or the live plot")
    expect(rewind).to_have_value("0")

    # Two steps down by keyboard: the last 5 minutes of the recording, in the same frame.
    rewind.focus()
    before = time.time()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(rewind).to_have_value("300")
    expect(status).to_contain_text("rewound · last 5 min")
    expect(stream).to_have_attribute("data-status", "rewound")
    expect(page.locator(".lm-TabBar-tab.jp-dashdock-PaneTab.jp-mod-rewound")).to_have_count(1)
    view = f"{lab.url}dashdock/api/history/{source}/view/task-stream?"
    expect(frame).to_have_attribute("src", re.compile("^" + re.escape(view)))
    src = frame.get_attribute("src") or ""
    url = urlparse(src)
    assert url.path == f"{urlparse(lab.url).path}dashdock/api/history/{source}/view/task-stream", src
    query = {key: float(values[0]) for key, values in parse_qs(url.query).items()}
    assert query["end"] - query["start"] == 300
    assert before - 2 <= query["end"] <= time.time() + 1
    # The recorded page draws (with the work in it); pause and rate have no sense on it.
    wait_for_bokeh_plot(page, "Task Stream")
    expect(stream.locator(".jp-dashdock-PaneStatus-pause")).to_be_disabled()
    expect(stream.locator("select.jp-dashdock-PaneRate")).to_be_disabled()
    assert_accessible(page, ".jp-dashdock-PlotPane .jp-Toolbar")
    screenshot(page, "rewind-5-min")

    # Back up to Live: the proxied live plot again, drawn afresh.
    rewind.focus()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    expect(rewind).to_have_value("0")
    expect(frame).to_have_attribute("src", live_src)
    expect(stream).to_have_attribute("data-status", "live")
    expect(status).not_to_contain_text("rewound")
    expect(stream.locator(".jp-dashdock-PaneStatus-pause")).to_be_enabled()
    wait_for_bokeh_plot(page, "Task Stream")
    screenshot(page, "rewind-live-again")

    # A plot without a recorded counterpart offers no rewind.
    page.evaluate(
        "source => window.jupyterapp.commands.execute('dashdock:open-plot',"
        " {source, path: '/individual-nprocessing'})",
        source,
    )
    other = page.locator(".jp-dashdock-PlotPane[data-dashdock-path='/individual-nprocessing']")
    expect(other).to_have_count(1)
    expect(other.locator("select.jp-dashdock-PaneRewind")).to_have_count(0)
    lab.api(f"dashdock/api/clusters/{running['id']}", "DELETE")


def test_an_unrecorded_source_stays_live(browser: Browser, lab: Lab, dask_cluster: DaskCluster) -> None:
    # A source whose recording was switched off, its runs deleted: the server has no run for it.
    source: Any = lab.api("dashdock/api/sources", "POST", {"url": dask_cluster.dashboard})
    lab.api(f"dashdock/api/history/{source['id']}/recording", "PUT", {"enabled": False})

    def no_run() -> bool:
        listing: Any = lab.api("dashdock/api/history")
        runs = [run for run in listing["runs"] if run["source"] == source["id"]]
        for run in runs:
            if not run["live"]:
                lab.api(f"dashdock/api/history/{run['id']}", "DELETE")
        return not runs

    wait_until(no_run)
    with pytest.raises(HTTPError) as missing:
        lab.api(f"dashdock/api/history/{source['id']}")
    assert missing.value.code == 404

    page = open_lab(browser, lab, "no-recording")
    page.evaluate(
        "source => window.jupyterapp.commands.execute('dashdock:open-plot',"
        " {source, path: '/individual-task-stream'})",
        source["id"],
    )
    stream = pane(page, "Task Stream")
    expect(stream).to_have_count(1)
    # The whole main area (a clicked plot takes a lone Launcher's place), so Rewind has room.
    expect(page.locator("#jp-main-dock-panel .jp-Launcher")).to_have_count(0)
    wait_for_bokeh_plot(page, "Task Stream")
    frame = stream.locator("iframe")
    live_src = frame.get_attribute("src")

    # Asked for the last minute, the pane says why it cannot and keeps the live plot.
    rewind = stream.get_by_role("combobox", name="Rewind")
    rewind.focus()
    page.keyboard.press("ArrowDown")
    status = stream.locator(".jp-dashdock-PaneStatus")
    expect(status).to_contain_text("no recording for this source")
    # Said where it cannot be missed too: the status may be cut short in a narrow pane.
    toast = page.locator(".Toastify__toast", has_text="has no recording to rewind to")
    expect(toast).to_contain_text("Turn it on in the History section")
    expect(stream).to_have_attribute("data-status", "live")
    expect(rewind).to_have_value("0")
    assert frame.get_attribute("src") == live_src
    screenshot(page, "rewind-no-recording")
    lab.api(f"dashdock/api/sources/{source['id']}", "DELETE")
