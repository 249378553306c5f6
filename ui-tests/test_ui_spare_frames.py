"""A pane opened after another of its source draws in a spare frame that has run BokehJS already.

The Lab keeps a hidden spare page per recently used source (panes/spares.ts) and moves it into the
next pane of that source, so the pane draws as soon as its document arrives. What a user gets must
be the pane they would get otherwise: the plot drawn, tied to its pane, themed like the Lab.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
    wait_until,
)
from lab import DaskCluster, Lab, open_lab, screenshot, start_lab, stop_lab
from playwright.sync_api import Browser, Frame, Page, Route, expect


@pytest.mark.parametrize("lab", ["/user/alice/"], indirect=True)
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

    frame = _opened_in_the_spare(page, lab, dask_cluster, "Progress")
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


@pytest.mark.parametrize("lab", ["/user/alice/"], indirect=True)
def test_a_pane_opened_while_its_spare_still_loads_waits_for_it_and_draws_in_it(
    page: Page, lab: Lab, dask_cluster: DaskCluster
) -> None:
    """A pane opened a moment after another finds the next spare still loading: it takes that one
    rather than load its page from nothing (which would be slower), and draws in it once ready."""
    added: Any = lab.api("dashdock/api/sources", "POST", {"url": dask_cluster.dashboard})
    # Progress drawn by dashdock from the start, so no pane reloads when its drawing begins.
    wait_until(lambda: "/individual-progress" in _drawn_plots(lab, added["id"]), timeout=120)
    held: list[Route] = []

    def hold_the_spare(route: Route) -> None:
        """The first spare's page waits until a pane has taken the spare."""
        if not held and route.request.is_navigation_request():
            held.append(route)
        else:
            route.continue_()

    page.route("**/.dashdock/spare*", hold_the_spare)
    open_sidebar(page)
    page.locator(".jp-dashdock-Source", has_text=dask_cluster.root.split("//")[1]).click()
    plot_item(page, "Task Stream").click()
    wait_for_bokeh_plot(page, "Task Stream")
    loading = page.locator(SPARE)
    expect(loading).to_have_count(1)  # the next spare's frame, its page held
    while not held:  # Playwright runs the route handler only while it is called
        page.wait_for_timeout(100)
    loading.evaluate("frame => { frame.dataset.testMark = 'the loading spare'; }")
    assert loading.get_attribute("data-ready") is None

    plot_item(page, "Progress").click()
    # It took the spare and waits for it, named already: its own frame has no page.
    waiting = pane(page, "Progress").locator("iframe")
    expect(waiting).to_have_attribute("title", "Progress")
    assert waiting.get_attribute("src") is None
    held[0].continue_()
    wait_for_bokeh_plot(page, "Progress")
    iframe = pane(page, "Progress").locator("iframe")
    assert iframe.get_attribute("data-test-mark") == "the loading spare"
    assert iframe.get_attribute("aria-hidden") is None and iframe.get_attribute("title") == "Progress"
    pane_id = pane(page, "Progress").get_attribute("id")
    assert f"dashdock-pane={pane_id}" in pane_frame(page, "Progress").url


def _drawn_plots(lab: Lab, source: str) -> list[str]:
    listed: Any = lab.api("dashdock/api/sources")
    return list(next((s for s in listed["sources"] if s["id"] == source), {}).get("drawnPlots", []))


def _lost(lab: Lab, cluster: DaskCluster) -> int:
    """How often the cluster's source lost its dashboard: its open panes reload each time."""
    listing: Any = lab.api("dashdock/api/sources")
    return next(source["lost"] for source in listing["sources"] if source["url"] == cluster.root)


def _opened_in_the_spare(page: Page, lab: Lab, cluster: DaskCluster, name: str) -> Frame:
    """Open ``name`` with a spare ready, and return its frame, which shows the spare.

    A source's open panes reload when dashdock starts drawing one of its plots, which it may do
    in the first seconds of a source. A pane that reloads while its spare's page is fetched loads
    the usual way (the fetched page may be stale): then the pane is closed and opened again."""
    for _ in range(3):
        lost = _lost(lab, cluster)
        plot_item(page, name).click()
        wait_for_bokeh_plot(page, name)
        frame = pane_frame(page, name)
        if frame.evaluate("() => window.__spareMark") == "the spare":
            return frame
        assert _lost(lab, cluster) != lost, "a pane opened with a spare ready, not in it, with no reload"
        page.evaluate(
            "id => [...window.jupyterapp.shell.widgets('main')].find(w => w.id === id)?.close()",
            pane(page, name).get_attribute("id"),
        )
        expect(pane(page, name)).to_have_count(0)
        ready_spare(page)
    raise AssertionError(f"{name} never opened in a spare: the source's panes kept reloading")


@pytest.fixture
def short_links_lab(tmp_path: Path) -> Iterator[Lab]:
    """A Lab whose view links last 30 s (as after a server restart, a spare's link no longer holds).

    Long enough for the first pane's page to open its websocket on a loaded 2-core machine (with
    10 s it sometimes had not, and its link had expired first)."""
    server = start_lab(tmp_path, "/user/alice/", ["--DashdockApp.view_link_lifetime=30"])
    yield server
    stop_lab(server)


def test_a_spare_whose_view_link_no_longer_holds_is_not_used(
    browser: Browser, short_links_lab: Lab, dask_cluster: DaskCluster
) -> None:
    page = open_lab(browser, short_links_lab, "expired-spare")
    open_sidebar(page)
    add_source(page, dask_cluster.dashboard)
    plot_item(page, "Task Stream").click()
    wait_for_bokeh_plot(page, "Task Stream")
    spare = ready_spare(page)
    view = spare.evaluate("() => location.pathname")
    origin = short_links_lab.url.split("/user/", 1)[0]

    def refused() -> bool:
        request = urllib.request.Request(f"{origin}{view}", method="HEAD")
        try:
            urllib.request.urlopen(request, timeout=10)
        except urllib.error.HTTPError as error:
            return error.code == 403
        return False

    wait_until(refused, timeout=60)  # its link has expired
    plot_item(page, "Progress").click()
    wait_for_bokeh_plot(page, "Progress")  # loaded the usual way, under a fresh link
    assert pane_frame(page, "Progress").evaluate("() => window.__spareMark") is None
