"""A pane opened after another of its source draws in a spare frame that has run BokehJS already.

The Lab keeps a hidden spare page per recently used source (panes/spares.ts) and moves it into the
next pane of that source, so the pane draws as soon as its document arrives. What a user gets must
be the pane they would get otherwise: the plot drawn, tied to its pane, themed like the Lab.
"""

from __future__ import annotations

import pytest
from helpers import (
    SPARE,
    add_source,
    open_sidebar,
    pane,
    pane_frame,
    plot_item,
    ready_spare,
    wait_for_bokeh_plot,
)
from lab import DaskCluster, Lab, screenshot
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.parametrize("lab", ["/user/alice/"], indirect=True)


def test_a_second_pane_draws_in_the_spare_frame_tied_to_its_pane_and_themed(
    page: Page, lab: Lab, dask_cluster: DaskCluster
) -> None:
    open_sidebar(page)
    add_source(page, dask_cluster.dashboard)
    expect(page.locator(SPARE)).to_have_count(0)  # nothing is loaded before a plot is opened
    plot_item(page, "Task Stream").click()
    wait_for_bokeh_plot(page, "Task Stream")
    ready_spare(page)
    # The spare is hidden from people and the keyboard until a pane takes it.
    holder = page.locator(".jp-dashdock-SpareFrames")
    assert holder.evaluate("node => node.inert && node.getAttribute('aria-hidden') === 'true'")

    plot_item(page, "Progress").click()
    wait_for_bokeh_plot(page, "Progress")
    frame = pane_frame(page, "Progress")
    assert frame.evaluate("() => window.__spareMark") == "the spare"
    # The plot's own page, under its pane: Bokeh's websocket carries the pane's id, so pause and
    # rate act on it as on any pane.
    pane_id = pane(page, "Progress").get_attribute("id")
    assert "/individual-progress?" in frame.url and f"dashdock-pane={pane_id}" in frame.url
    assert frame.evaluate("() => Bokeh.documents.length") == 1
    assert frame.evaluate("() => document.title").startswith("Dask")
    expect(pane(page, "Progress").locator(".jp-dashdock-PaneStatus")).to_contain_text("live")
    iframe = pane(page, "Progress").locator("iframe")
    assert iframe.get_attribute("title") == "Progress" and iframe.get_attribute("aria-hidden") is None

    # The Lab's theme reaches the frame it now shows the plot in.
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})"
    )
    frame.wait_for_function("() => document.documentElement.dataset.dashdockTheme === 'dark'", timeout=60_000)
    screenshot(page, "spare-frame-pane-dark")
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})"
    )
    frame.wait_for_function("() => document.documentElement.dataset.dashdockTheme === 'own'", timeout=60_000)

    # Another spare is loaded for the next pane; reloading the pane loads its page the usual way.
    ready_spare(page)
    pane(page, "Progress").get_by_role("button", name="Reload").click()
    frame.wait_for_function(
        "() => window.__spareMark === undefined && window.Bokeh && Bokeh.documents.length > 0"
        " && Bokeh.documents[0].roots().length > 0",
        timeout=60_000,
    )
    assert "/individual-progress" in frame.url
