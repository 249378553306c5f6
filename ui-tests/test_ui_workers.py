"""A user opens a worker's own dashboard page from the worker selector of a source."""

from __future__ import annotations

from helpers import add_source, open_sidebar, pane, wait_for_bokeh_plot
from lab import DaskCluster, Lab, open_lab, screenshot
from playwright.sync_api import Browser, expect


def test_open_a_workers_page_from_the_selector(browser: Browser, lab: Lab, dask_cluster: DaskCluster) -> None:
    page = open_lab(browser, lab, "workers")
    sidebar = open_sidebar(page)
    add_source(page, dask_cluster.dashboard)
    expect(sidebar.locator(".jp-dashdock-Source-name")).to_have_count(1)

    # Collapsed until opened: the scheduler is not queried for workers nobody looks at.
    section = sidebar.locator(".jp-dashdock-Workers")
    expect(section).to_be_hidden()
    sidebar.locator(".jp-AccordionPanel-title", has_text="Workers").click()
    workers = section.locator(".jp-dashdock-Worker")
    expect(workers).to_have_count(2, timeout=30_000)  # demo/sample_work.py runs two workers
    expect(section.locator(".jp-dashdock-Workers-filter")).to_be_hidden()  # two need no filter
    first = workers.first
    expect(first.locator(".jp-dashdock-Worker-facts")).to_contain_text("127.0.0.1:")
    expect(first.locator(".jp-dashdock-WorkerPage")).to_have_text(
        ["Status", "System", "Profile", "Profile Server", "Counters"]
    )

    first.locator('.jp-dashdock-WorkerPage[data-path="/system"]').click()
    name = f"System of {first.locator('.jp-dashdock-Worker-name').inner_text()}"
    wait_for_bokeh_plot(page, name)
    worker_pane = pane(page, name)
    src = worker_pane.locator("iframe[src]").get_attribute("src") or ""
    assert "/dashdock/proxy/127.0.0.1:" in src and "/system" in src, src
    # It follows its scheduler's health, so it is live rather than an unknown source.
    expect(worker_pane).to_have_attribute("data-status", "live")
    screenshot(page, "worker-system-page")
