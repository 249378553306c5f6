"""A user starts a cluster from the sidebar, watches it work, and connects a notebook to it."""

from __future__ import annotations

from typing import Any

from helpers import drag_to, open_sidebar, pane, plot_item, wait_for_bokeh_plot, wait_until
from lab import Lab, open_lab, screenshot
from playwright.sync_api import Browser, expect

CARD = ".jp-dashdock-ClusterCard"


def test_start_cluster_open_its_plots_and_connect_a_notebook(browser: Browser, lab: Lab) -> None:
    page = open_lab(browser, lab, "clusters")
    open_sidebar(page)
    page.click('.jp-dashdock-Clusters button[data-action="new"]')
    card = page.locator(CARD)
    expect(card.locator(".jp-dashdock-ClusterCard-status")).to_have_text("running", timeout=120_000)
    scheduler = card.locator("dd").first.inner_text()
    assert scheduler.startswith("tcp://127.0.0.1:")

    # The new cluster is a source at once: its plots are listed and open as panes.
    expect(page.locator(".jp-dashdock-Source.jp-mod-selected")).to_contain_text("Cluster 1")
    plot_item(page, "Task Stream").click()
    wait_for_bokeh_plot(page, "Task Stream")

    # Scaling shows in the card.
    card.locator('input[name="workers"]').fill("2")
    card.locator('button[data-action="scale"]').click()
    expect(card.locator("dd").nth(1)).to_have_text("2", timeout=60_000)

    # A notebook, then the card dragged into it: a cell that connects to the cluster, which runs.
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:create-new', {kernelName: 'python3'})")
    notebook = page.locator(".jp-NotebookPanel").last
    expect(notebook.locator(".jp-Notebook-cell")).to_have_count(1)
    page.wait_for_selector(
        ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000
    )
    target = notebook.locator(".jp-Notebook-cell").first.bounding_box()
    assert target is not None
    drag_to(
        page,
        card.locator(".jp-dashdock-ClusterCard-header"),
        target["x"] + target["width"] / 2,
        target["y"] + target["height"] * 0.9,
    )
    inserted = notebook.locator(".jp-Notebook-cell", has_text="Client(")
    expect(inserted).to_have_count(1)
    expect(inserted).to_contain_text(scheduler)
    inserted.click()
    page.keyboard.press("Shift+Enter")
    expect(inserted.locator(".jp-dashdock-ClientRepr")).to_contain_text("Client", timeout=60_000)
    stderr = inserted.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
    assert stderr.count() == 0, stderr.all_inner_texts()
    screenshot(page, "cluster-connected-notebook")

    # Restarted, the cluster comes back on the same address (as Dask's client.restart() keeps the
    # scheduler): the notebook's client goes on, and the open pane reloads without a click.
    # It asks first, saying what is lost, with Cancel as the default.
    lost = _lost(lab, "Cluster 1")
    workers = inserted.locator('.jp-dashdock-ClientRepr dd[data-fact="workers"]')
    expect(workers).to_have_text("2", timeout=30_000)
    card.locator('button[data-action="restart"]').click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Restart Cluster 1?")
    expect(dialog).to_contain_text("Every result held in its memory is lost")
    assert page.evaluate("() => document.activeElement?.textContent") == "Cancel"
    screenshot(page, "cluster-restart-asks")
    dialog.get_by_role("button", name="Restart").click()
    wait_until(lambda: _lost(lab, "Cluster 1") > lost, timeout=120)
    expect(card.locator(".jp-dashdock-ClusterCard-status")).to_have_text("running", timeout=60_000)
    expect(card.locator("dd").first).to_have_text(scheduler)
    # The notebook's repr follows the new scheduler's workers (it read 0 for good).
    expect(workers).to_have_text("2", timeout=30_000)
    cells = notebook.locator(".jp-Notebook-cell")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:insert-cell-below')")
    after = cells.nth(cells.count() - 1)  # the new cell (Shift+Enter adds an empty one after it)
    after.locator(".cm-content").fill("client.submit(sum, [1, 2], pure=False).result(timeout=60)")
    page.keyboard.press("Shift+Enter")
    result = after.locator(".jp-OutputArea-output[data-mime-type='text/plain']")
    expect(result).to_have_text("3", timeout=90_000)
    pane_id = pane(page, "Task Stream").get_attribute("id")
    page.evaluate("id => window.jupyterapp.shell.activateById(id)", pane_id)  # it is behind the notebook
    expect(pane(page, "Task Stream")).to_have_attribute("data-status", "live", timeout=30_000)
    wait_for_bokeh_plot(page, "Task Stream")
    screenshot(page, "cluster-restarted-pane-follows")

    # Shutting it down removes the card and its source; its pane says so.
    card.locator('button[data-action="stop"]').click()
    expect(page.locator(CARD)).to_have_count(0, timeout=60_000)
    # The sidebar drops it at its next poll of the sources, later than 5 s on a loaded machine.
    expect(page.locator(".jp-dashdock-Source", has_text="Cluster 1")).to_have_count(0, timeout=60_000)
    expect(pane(page, "Task Stream")).to_have_attribute("data-status", "gone", timeout=30_000)


def test_the_cluster_limits_show_and_a_scale_beyond_them_says_why(browser: Browser, lab: Lab) -> None:
    listing = lab.api("dashdock/api/clusters")
    assert isinstance(listing, dict)
    max_workers, max_clusters = listing["limits"]["max_workers"], listing["limits"]["max_clusters"]
    page = open_lab(browser, lab, "cluster-limits")
    open_sidebar(page)
    section = page.locator(".jp-dashdock-Clusters")
    expect(section.locator(".jp-dashdock-Clusters-limits")).to_have_text(
        f"Up to {max_workers} workers per cluster, {max_clusters} clusters at a time"
    )

    section.locator('button[data-action="new"]').click()
    card = page.locator(CARD).last
    expect(card.locator(".jp-dashdock-ClusterCard-status")).to_have_text("running", timeout=120_000)
    for name in ("workers", "minimum", "maximum"):
        expect(card.locator(f'input[name="{name}"]')).to_have_attribute("max", str(max_workers))

    # What the user is typing survives news from the poll: the card is updated, not rebuilt.
    workers = int(card.locator("dd").nth(1).inner_text())
    minimum = card.locator('input[name="minimum"]')
    minimum.fill("1")
    lab.api(
        f"dashdock/api/clusters/{card.get_attribute('data-cluster-id')}", "PATCH", {"workers": workers + 1}
    )
    expect(card.locator("dd").nth(1)).to_have_text(str(workers + 1), timeout=60_000)
    expect(minimum).to_be_focused()
    expect(minimum).to_have_value("1")

    # One worker more than allowed: the server's refusal shows, naming the limit; the size stays.
    workers = card.locator("dd").nth(1).inner_text()
    card.locator('input[name="workers"]').fill(str(max_workers + 1))
    card.locator('button[data-action="scale"]').click()
    error = card.locator(".jp-dashdock-ClusterCard-error")
    expect(error).to_contain_text(f"limit of {max_workers} workers per cluster")
    expect(error).to_contain_text("max_workers")
    expect(section.locator(".jp-dashdock-Clusters-error")).to_be_hidden()
    expect(card.locator("dd").nth(1)).to_have_text(workers)
    screenshot(page, "cluster-limits")

    card.locator('button[data-action="stop"]').click()
    expect(page.locator(CARD)).to_have_count(0, timeout=60_000)


def _lost(lab: Lab, name: str) -> int:
    """How often the source ``name`` lost its dashboard (a restart counts, so panes reload)."""
    listing: Any = lab.api("dashdock/api/sources")
    return next(source["lost"] for source in listing["sources"] if source["name"] == name)
