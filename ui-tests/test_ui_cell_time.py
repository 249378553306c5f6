"""A saved notebook's cell strip: where the cell's own time went, and its text readable in both themes.

The strip is read back from a saved output (the kernel's bundle, as a notebook keeps it), so no
kernel runs: what is checked is how the Lab shows a report. `tests/notebook/test_cell_accounting.py`
checks that a real cluster's ledger fills in the same fields.
"""

from __future__ import annotations

import re

from a11y import assert_accessible
from helpers import set_theme
from lab import Lab, screenshot
from playwright.sync_api import Page, expect

from dashdock.kernel.cellstrip import bundle

REPORT = {
    "tasks": 2400,
    "done": 1400,
    "erred": 1000,
    "cancelled": 0,
    "settled": True,
    "groups": [["inc", 1400, 1400, 0], ["explode", 1000, 0, 1000]],
    "submitted": 1795580000.5,
    "wall": 42.2,
    "ran": [1795580000.6, 1795580042.6],
    # Thread-seconds: more than the wall time, since four threads ran the cell's tasks.
    "seconds": {"compute": 60.0, "transfer": 87.0, "disk": 0.0, "spill": 0.067},
    "group_seconds": [["inc", 50.0, 80.0, 0.0, 0.067], ["explode", 10.0, 7.0, 0.0, 0.0]],
    "threads": 4,
    "produced_bytes": 56_320,
    "moved_bytes": 2048,
    "memory_peak": 256 * 2**20,
    "error": {"key": "explode-7", "exception": "ValueError('bad input 7')", "traceback": '  File "x"'},
}
MIME = "application/vnd.dashdock.cell+json"


def _saved_strip_notebook(lab: Lab, path: str) -> None:
    output = bundle({"cell_id": "a" * 32, "label": "[3]", "span": "cell [3]"}, REPORT)
    cell = {
        "cell_type": "code",
        "source": "futures = client.map(explode, range(1000))",
        "metadata": {},
        "execution_count": 3,
        "outputs": [{"output_type": "display_data", "data": output, "metadata": {}}],
    }
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    content = {"cells": [cell], "metadata": {"kernelspec": kernelspec}, "nbformat": 4, "nbformat_minor": 5}
    lab.api(f"api/contents/{path}", "PUT", {"type": "notebook", "content": content})


def test_where_time_went_shows_the_cells_own_time_and_labels_its_sums(page: Page, lab: Lab) -> None:
    _saved_strip_notebook(lab, "saved-strip.ipynb")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:open', {path: 'saved-strip.ipynb'})")
    strip = page.locator(".jp-dashdock-CellStrip")
    expect(strip).to_have_attribute("data-state", "erred", timeout=60_000)
    # The notebook has finished opening (its kernel is idle) before the keyboard part begins.
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)

    # The sums say what they are: thread time over four threads (87 s beside a 42 s cell).
    details = strip.locator(".jp-dashdock-CellStrip-details")
    expect(details).to_contain_text("Thread time, summed over 4 threads: compute 60.0 s · transfer 87.0 s")
    expect(details).to_contain_text("storing results 67 ms")
    expect(strip.locator(".jp-dashdock-CellStrip-error")).to_contain_text("1,000 tasks erred")

    # "Where time went", from the keyboard: the cell's own time by group, each group's share.
    toggle = strip.get_by_role("button", name="Where time went")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.focus()
    page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(toggle).to_be_focused()
    region = strip.get_by_role("region", name="Where this cell's time went")
    expect(region).to_contain_text(re.compile(r"2\.5 min of thread time on 4 worker threads in 42\.2 s"))
    expect(region).to_contain_text("they spent 87% of that time on this cell")
    rows = region.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator("th")).to_have_text("inc")  # the larger share first
    expect(rows.nth(0)).to_contain_text("88%")
    expect(rows.nth(1)).to_contain_text("12%")
    expect(region.get_by_role("button", name="Cluster-wide: Fine Performance Metrics")).to_be_visible()
    assert_accessible(page, ".jp-dashdock-CellStrip")
    screenshot(page, "cell-time-light")

    # Dark: every text of the strip, the error's too, reaches 4.5:1 (axe's colour-contrast rule).
    set_theme(page, "JupyterLab Dark")
    assert_accessible(page, ".jp-dashdock-CellStrip")
    screenshot(page, "cell-time-dark")
    toggle.focus()  # in a CI run under load, the Enter here went elsewhere
    page.keyboard.press("Enter")
    expect(region).to_have_count(0)
    set_theme(page, "JupyterLab Light")
