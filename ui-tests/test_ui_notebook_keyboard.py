"""A keyboard-only user works with a Dask client's repr in a notebook: the key chips, the other plots
grouped as in the sidebar (none repeated), and Dask's own worker details one key press away."""

from __future__ import annotations

import re

from a11y import assert_accessible
from helpers import pane, wait_for_bokeh_plot
from lab import Lab, open_lab, screenshot
from playwright.sync_api import Browser, Page, expect

CELL = (
    "from distributed import Client, LocalCluster\n"
    "cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol='tcp',\n"
    "                       host='127.0.0.1', dashboard_address='127.0.0.1:0')\n"
    "client = Client(cluster)\n"
    "client"
)
REPR = ".jp-dashdock-ClientRepr"
# The sidebar's group labels, in its order (src/sources/plots.ts).
GROUP_ORDER = ["Tasks", "Memory", "Workers and system", "GPU", "Other"]


def focused(page: Page) -> str:
    return page.evaluate("() => document.activeElement.textContent.trim()")


def test_the_client_repr_by_keyboard(browser: Browser, lab: Lab) -> None:
    lab.write_notebook("keyboard.ipynb", [CELL])
    page = open_lab(browser, lab, "notebook-keyboard")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:open', {path: 'keyboard.ipynb'})")
    page.wait_for_selector(
        ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    client_repr = page.locator(REPR).first
    expect(client_repr.locator(".jp-dashdock-ClientRepr-status")).to_have_attribute(
        "data-status", "live", timeout=60_000
    )
    # Its source is known once the repr has polled: the worker details link goes through it.
    workers_link = client_repr.get_by_role("link", name="Worker details")
    expect(workers_link).to_have_attribute(
        "href", re.compile(r"/dashdock/proxy/[0-9a-f]{12}/info/main/workers\.html$"), timeout=30_000
    )
    source = re.search(r"/proxy/([0-9a-f]{12})/", workers_link.get_attribute("href") or "")
    assert source
    listing = lab.api(f"dashdock/api/sources/{source[1]}/plots")
    assert isinstance(listing, dict)
    catalog = {plot["path"]: plot for plot in listing["plots"]}

    # The key chips carry the catalog's names for their plots.
    key_chips = client_repr.locator(
        ".jp-dashdock-ClientRepr-chips .jp-dashdock-Chip:not(.jp-dashdock-Chip-all)"
    )
    keys = {key_chips.nth(i).get_attribute("data-path"): key_chips.nth(i).inner_text() for i in range(4)}
    assert keys == {path: catalog[path]["name"] for path in keys}, keys

    # Tab walks the chips, then "More plots"; Enter unfolds the other plots, by group.
    key_chips.first.focus()
    for name in list(keys.values())[1:]:
        page.keyboard.press("Tab")
        assert focused(page) == name
    page.keyboard.press("Tab")
    more = client_repr.get_by_role("button", name="More plots")
    expect(more).to_be_focused()
    expect(more).to_have_attribute("aria-expanded", "false")
    page.keyboard.press("Enter")
    expect(more).to_have_attribute("aria-expanded", "true")
    groups = client_repr.locator(".jp-dashdock-ClientRepr-allPlots [role='group']")
    expect(groups.first).to_be_visible()
    labels = groups.locator(".jp-dashdock-ClientRepr-groupLabel").all_text_contents()
    assert labels == [label for label in GROUP_ORDER if label in labels], labels
    assert labels[0] == "Tasks"
    # Every plot of the dashboard once: the key chips above, the others below, none twice.
    listed = groups.locator(".jp-dashdock-Chip")
    paths = [listed.nth(i).get_attribute("data-path") for i in range(listed.count())]
    assert not set(paths) & set(keys), "a key chip is repeated in the list"
    assert sorted(paths + list(keys)) == sorted(catalog)
    assert_accessible(page, REPR)
    screenshot(page, "notebook-repr-grouped-plots")

    # The next Tab reaches the first listed plot; Enter opens it as a pane.
    page.keyboard.press("Tab")
    first = listed.first
    expect(first).to_be_focused()
    name = first.inner_text()
    page.keyboard.press("Enter")
    wait_for_bokeh_plot(page, name)
    expect(pane(page, name)).to_be_visible()

    # Space folds the list again.
    more.focus()
    page.keyboard.press("Space")
    expect(more).to_have_attribute("aria-expanded", "false")
    expect(listed).to_have_count(0)

    # Worker details: Tab reaches the dashboard link, then the worker details; Enter opens Dask's
    # worker table in a tab of its own, through the proxy.
    page.keyboard.press("Tab")
    expect(client_repr.locator(".jp-dashdock-ClientRepr-link")).to_be_focused()
    page.keyboard.press("Tab")
    expect(workers_link).to_be_focused()
    with page.context.expect_page() as opened:
        page.keyboard.press("Enter")
    details = opened.value
    details.wait_for_load_state()
    expect(details.locator("body")).to_contain_text("tcp://127.0.0.1:", timeout=30_000)
    assert f"{lab.base_url}dashdock/view/" in details.url
    details.close()
