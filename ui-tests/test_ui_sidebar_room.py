"""Every sidebar section gets usable room when it is expanded, on a laptop screen and a desktop one.

A second-hour sidebar: a recorded source, a failed add, a running cluster, and every section
opened in turn, then the same after a reload. Room is measured as a user sees it: the section's
first row and its controls lie inside the window, above the status bar.
"""

from __future__ import annotations

import pytest
from helpers import add_source, open_sidebar, wait_until
from lab import DaskCluster, Lab, open_lab, screenshot, wait_for_lab
from playwright.sync_api import Browser, Locator, Page, expect

SECTIONS = ("Sources", "Plots", "Workers", "Clusters", "History")
# The least height an expanded section's content gets: a few rows, or a card's controls.
USABLE = 80
# History's: three runs and its recording switches (src/plugins/history.ts asks 200 px, cut in
# proportion with the other sections' on a small screen).
HISTORY_ROOM = 170


def _title(sidebar: Locator, name: str) -> Locator:
    return sidebar.locator(".jp-AccordionPanel-title", has_text=name)


def _expand(sidebar: Locator, name: str, expanded: bool = True) -> None:
    title = _title(sidebar, name)
    if (title.get_attribute("aria-expanded") == "true") != expanded:
        title.click()
    expect(title).to_have_attribute("aria-expanded", "true" if expanded else "false")


def _content_height(sidebar: Locator, name: str) -> float:
    """The height of the section's content (the widget after its title)."""
    box = _title(sidebar, name).locator("xpath=following-sibling::*[1]").bounding_box()
    return box["height"] if box else 0.0


def _visible_bottom(page: Page) -> float:
    """Where the sidebar's room ends: the top of the status bar."""
    box = page.locator("#jp-main-statusbar").bounding_box()
    assert box
    return box["y"]


def _inside(page: Page, locator: Locator) -> bool:
    box = locator.bounding_box()
    return bool(box) and box["height"] > 0 and box["y"] + box["height"] <= _visible_bottom(page) + 0.5


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 800)], ids=["1600x1000", "1280x800"])
def test_each_expanded_section_has_room(
    browser: Browser, lab: Lab, dask_cluster: DaskCluster, size: tuple[int, int]
) -> None:
    width, height = size
    page = open_lab(browser, lab, f"sidebar-room-{width}", (width, height))
    sidebar = open_sidebar(page)
    add_source(page, dask_cluster.dashboard)
    expect(sidebar.locator(".jp-dashdock-Source")).to_have_count(1, timeout=30_000)

    # A failed add says why and still leaves the list a whole row.
    expect(sidebar.locator(".jp-dashdock-AddSource-button")).to_have_text("Add")  # the first is done
    add_source(page, "http://127.0.0.1:9/status")
    error = sidebar.locator(".jp-dashdock-AddSource-error")
    expect(error).to_be_visible(timeout=60_000)
    assert _inside(page, sidebar.locator(".jp-dashdock-Source").first)
    source_box = sidebar.locator(".jp-dashdock-Source").first.bounding_box()
    list_box = sidebar.locator(".jp-dashdock-Sources").bounding_box()
    assert source_box and list_box
    assert source_box["y"] + source_box["height"] <= list_box["y"] + list_box["height"] + 0.5, (
        "the source row is cut off by the error"
    )

    # Every section, opened on top of the others: each gets usable room, all inside the window.
    for name in SECTIONS:
        _expand(sidebar, name)
    wait_until(lambda: all(_content_height(sidebar, name) >= USABLE for name in SECTIONS), timeout=10)
    heights = {name: round(_content_height(sidebar, name)) for name in SECTIONS}
    print(f"\n{width}x{height} all open: {heights}")
    assert _inside(page, _title(sidebar, "History"))
    screenshot(page, f"sidebar-room-all-{width}")

    # History opened alone after the others were folded and opened again: still its share.
    for name in SECTIONS:
        _expand(sidebar, name, False)
    _expand(sidebar, "Plots")
    _expand(sidebar, "History")
    assert _content_height(sidebar, "History") >= USABLE
    assert _content_height(sidebar, "Plots") >= USABLE

    # After a reload, History opened again shows its run inside the window, above the status bar.
    page.reload()
    wait_for_lab(page)
    sidebar = open_sidebar(page)
    _expand(sidebar, "History")
    # Room for three runs, not the 94 px it got beside an empty Clusters.
    wait_until(lambda: _content_height(sidebar, "History") >= HISTORY_ROOM, timeout=10)
    run = sidebar.locator(".jp-dashdock-Run").first
    run.scroll_into_view_if_needed()
    assert _inside(page, run)
    screenshot(page, f"sidebar-room-reloaded-{width}")


@pytest.mark.parametrize("height", [1000, 760])
def test_a_new_clusters_card_shows_its_controls_on_a_small_screen(
    browser: Browser, lab: Lab, height: int
) -> None:
    page = open_lab(browser, lab, f"sidebar-room-cluster-{height}", (1600, height))
    sidebar = open_sidebar(page)
    section = sidebar.locator(".jp-dashdock-Clusters")
    section.locator('button[data-action="new"]').click()
    card = section.locator(".jp-dashdock-ClusterCard")
    expect(card.locator(".jp-dashdock-ClusterCard-status")).to_have_text("running", timeout=120_000)
    # Without scrolling by hand, its last control is inside the section and the window.
    shut_down = card.get_by_role("button", name="Shut down")
    wait_until(lambda: _inside(page, shut_down) and _within(shut_down, section), timeout=10)
    # And its name and status above them, the header kept in sight.
    header = card.locator(".jp-dashdock-ClusterCard-header")
    assert _inside(page, header) and _within(header, section)
    assert page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).closest('.jp-dashdock-ClusterCard-header') !== null",
        [header.bounding_box()["x"] + 20, header.bounding_box()["y"] + 8],  # type: ignore[index]
    ), "the header is drawn over the facts scrolled under it"
    screenshot(page, f"sidebar-room-cluster-card-{height}")
    cluster_id = card.get_attribute("data-cluster-id")
    lab.api(f"dashdock/api/clusters/{cluster_id}", "DELETE")


def _within(locator: Locator, container: Locator) -> bool:
    inner, outer = locator.bounding_box(), container.bounding_box()
    return (
        bool(inner and outer)
        and outer["y"] - 0.5 <= inner["y"]
        and (inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5)
    )
