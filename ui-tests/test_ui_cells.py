"""A user runs a notebook that computes with Dask: every computing cell says what it computed.

Real Lab under a base URL, a real kernel with a real cluster, the computing cells run at once (so
they queue behind each other, as with Run All), a future that outlives its cell, a failing task, a
cell without Dask work; the saved notebook read back through the contents API.
"""

from __future__ import annotations

import re
from urllib.error import HTTPError

import pytest
from a11y import assert_accessible
from helpers import PANE, pane_frame, wait_until
from lab import Lab, open_lab, screenshot
from playwright.sync_api import Browser, Locator, Page, expect

CELLS = [
    "from distributed import Client, LocalCluster\n"
    "import time\n"
    "cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol='tcp',\n"
    "                       host='127.0.0.1', dashboard_address='127.0.0.1:0')\n"
    "client = Client(cluster)\n"
    "def inc(x):\n"
    "    return x + 1",
    "first = client.gather(client.map(inc, range(1234)))",
    "second = client.gather(client.map(inc, range(10_000, 10_567)))",
    "slow = client.submit(time.sleep, 4, pure=False)",
    "def boom(x):\n    return x / 0\nfailed = client.gather(client.map(boom, [1]), errors='skip')",
    "plain = sum(range(10))",
]
MIME = "application/vnd.dashdock.cell+json"
IDLE = ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']"


def strip_of(page: Page, cell: int) -> Locator:
    return page.locator(".jp-NotebookPanel .jp-Cell").nth(cell).locator(".jp-dashdock-CellStrip")


@pytest.mark.parametrize("lab", ["/user/alice/"], indirect=True)
def test_run_all_gives_each_computing_cell_its_own_strip(browser: Browser, lab: Lab) -> None:
    lab.write_notebook("cells.ipynb", CELLS)
    page = open_lab(browser, lab, "cell-strips")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:open', {path: 'cells.ipynb'})")
    page.wait_for_selector(IDLE, timeout=60_000)
    # Run All: the cluster's cell, then the computing cells queued behind it, with no pause. The
    # history attaches seconds later and still records the cells' first tasks (the scheduler keeps
    # its task stream from the moment the notebook's Client connected).
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

    # Each cell its own count (the second map is not added to the first: Dask's spans would).
    expect(strip_of(page, 1)).to_contain_text("1,234 tasks", timeout=90_000)
    expect(strip_of(page, 2)).to_contain_text("567 tasks", timeout=60_000)
    expect(strip_of(page, 1)).to_have_attribute("data-state", "done")
    bars = strip_of(page, 2).get_by_role("progressbar", name="inc")
    expect(bars).to_have_attribute("aria-valuenow", "567")

    # The future of the fourth cell ends after later cells started: still counted there.
    expect(strip_of(page, 3)).to_have_attribute("data-state", "done", timeout=60_000)
    expect(strip_of(page, 3).locator(".jp-dashdock-CellStrip-status")).to_contain_text("1 task")
    # One 4 s task on two threads: the strip names what cost its window most, with its figure.
    why = strip_of(page, 3).locator(".jp-dashdock-CellStrip-finding")
    expect(why).to_have_text(re.compile(r"^Why: \d+ % of thread time "), timeout=150_000)

    # A failing task: one error, its exception, the traceback a click away.
    failing = strip_of(page, 4)
    expect(failing).to_have_attribute("data-state", "erred", timeout=60_000)
    expect(failing.locator(".jp-dashdock-CellStrip-error")).to_contain_text("1 task erred")
    expect(failing.locator(".jp-dashdock-CellStrip-error")).to_contain_text("ZeroDivisionError")
    failing.locator("summary", has_text="Traceback").click()
    expect(failing.locator("pre")).to_contain_text("in boom")

    # A cell that computed nothing with Dask shows nothing.
    page.wait_for_selector(IDLE, timeout=60_000)
    plain_cell = page.locator(".jp-NotebookPanel .jp-Cell").nth(5)
    expect(plain_cell.locator(".jp-OutputArea-output")).to_have_count(0)
    expect(page.locator(".jp-dashdock-CellStrip")).to_have_count(4)
    assert_accessible(page, ".jp-dashdock-CellStrip")
    strip_of(page, 4).scroll_into_view_if_needed()
    screenshot(page, "cell-strips")

    # The saved notebook holds each strip's summary as text, the late one settled. A strip writes
    # its settled summary into the cell's output just after it shows it: a save may come first, so
    # save until the file has them (autosave is off in tests). One save at a time: the command's
    # promise is awaited, because two saves of one file at once race in the server's atomic write
    # (the second fails with "No such file or directory", and Lab shows a dialog over the page).

    def saved() -> dict[int, str] | None:
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        return _saved_summaries(lab, settled=4)

    summaries = wait_until(saved)
    assert summaries[1].startswith("Dask, cell [2]: 1,234 tasks in ")
    assert summaries[2].startswith("Dask, cell [3]: 567 tasks in ")
    assert summaries[3].startswith("Dask, cell [4]: 1 task in ")
    assert "Errors: 1 task erred: ZeroDivisionError" in summaries[4]
    assert 0 not in summaries and 5 not in summaries

    # "Task stream" opens the recorded task stream of that cell's work as a pane: all of it.
    wait_until(lambda: _recorded_tasks(lab, "cells.ipynb") >= 1234 + 567 + 2, timeout=120)
    strip_of(page, 1).get_by_role("button", name="Task stream").click()
    tab = page.locator(".lm-TabBar-tab", has_text=re.compile(r"Task stream · cell \[2\]", re.IGNORECASE))
    expect(tab).to_be_visible(timeout=30_000)
    recorded = page.frame_locator(".jp-dashdock-HistoryPane iframe").last.locator("body")
    # Every task of the cell (a task may have more than one span: a first call deserializes).
    expect(recorded).to_contain_text(re.compile(r"[0-9,]+ spans of 1,234 tasks"), timeout=30_000)
    screenshot(page, "cell-strip-task-stream")


FAILING = 1000
ALERT_CELLS = [
    CELLS[0],
    "from distributed import wait\n"
    "def explode(x):\n"
    "    raise ValueError(f'bad input {x}')\n"
    f"futures = client.map(explode, range({FAILING}), key=[f'explode-{{i}}' for i in range({FAILING})])\n"
    "_ = wait(futures)",
]
RUN_NEXT = "() => window.jupyterapp.commands.execute('notebook:run-cell-and-select-next')"


@pytest.mark.parametrize("lab", ["/user/alice/"], indirect=True)
def test_a_cells_strip_lists_the_alerts_raised_while_it_ran(browser: Browser, lab: Lab) -> None:
    lab.write_notebook("alerting.ipynb", ALERT_CELLS)
    page = open_lab(browser, lab, "cell-strip-alerts")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:open', {path: 'alerting.ipynb'})")
    page.wait_for_selector(IDLE, timeout=60_000)
    # The cluster's cell first; the failing one once the history follows the kernel's cluster.
    page.evaluate(RUN_NEXT)
    wait_until(lambda: _live_run(lab, "alerting.ipynb"), timeout=120)
    page.evaluate(RUN_NEXT)

    # The server's one alert for the 1,000 failures is listed under the cell that raised them.
    strip = strip_of(page, 1)
    expect(strip).to_have_attribute("data-state", "erred", timeout=90_000)
    title = f"explode: {FAILING:,} tasks erred"
    row = strip.locator(".jp-dashdock-CellStrip-alert[data-kind='task-erred']")
    expect(row).to_contain_text(title, timeout=60_000)
    expect(row).to_have_count(1)
    expect(row).to_contain_text(f"{FAILING:,} times")
    # The notification's actions, named after the alert they act on.
    expect(row.get_by_role("button", name=f"Show in history: {title}")).to_be_visible()
    exceptions = row.get_by_role("button", name=f"Exceptions: {title}")
    expect(exceptions).to_be_visible()
    # The cell of the cluster raised nothing.
    expect(page.locator(".jp-dashdock-CellStrip-alert")).to_have_count(1)
    assert_accessible(page, ".jp-dashdock-CellStrip")
    strip.scroll_into_view_if_needed()
    shot = screenshot(page, "cell-strip-alerts")
    strip.screenshot(path=str(shot.with_name("cell-strip-alerts-strip.png")))

    # From the keyboard, as the notification's button: the source's Exceptions plot as a pane.
    exceptions.focus()
    page.keyboard.press("Enter")
    expect(page.locator(f"{PANE}:has(iframe[title='Exceptions'])")).to_be_visible(timeout=30_000)
    expect(pane_frame(page, "Exceptions").get_by_text("bad input").first).to_be_visible(timeout=60_000)
    screenshot(page, "cell-strip-alert-exceptions")


def _live_run(lab: Lab, name: str) -> bool:
    """Whether the history records the cluster of the notebook ``name``."""
    listed = lab.api("dashdock/api/history")
    assert isinstance(listed, dict)
    return any(run["live"] and run["name"] == name for run in listed["runs"])


def _recorded_tasks(lab: Lab, name: str) -> int:
    """The tasks the history has recorded of the notebook ``name`` (its live run)."""
    listed = lab.api("dashdock/api/history")
    assert isinstance(listed, dict)
    return sum(run["tasks"] for run in listed["runs"] if run["live"] and run["name"] == name)


def _saved_summaries(lab: Lab, settled: int) -> dict[int, str] | None:
    """Cell index -> the text summary of its strip in the saved file, once `settled` are final."""
    try:
        notebook = lab.api("api/contents/cells.ipynb")
    except HTTPError:  # read while Lab's save was writing it: ask again
        return None
    assert isinstance(notebook, dict)
    found: dict[int, str] = {}
    final = 0
    for index, cell in enumerate(notebook["content"]["cells"]):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if MIME in data:
                found[index] = data["text/plain"]
                final += data[MIME]["report"]["settled"] and " in " in data["text/plain"]
    return found if final >= settled else None
