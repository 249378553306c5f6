"""A keyboard-only user manages a cluster from its card: what the section says with no cluster,
the Scale field that shows the cluster's size, errors on the card that clear, and a shut down that
asks first while work is running."""

from __future__ import annotations

import json
import operator
import re
import time
from collections.abc import Callable, Iterator

import pytest
from a11y import assert_accessible
from distributed import Client
from helpers import open_sidebar
from lab import Lab, open_lab, screenshot
from playwright.sync_api import Browser, Locator, Page, Route, expect

SECTION = ".jp-dashdock-Clusters"
CARD = ".jp-dashdock-ClusterCard"
# The clusters listing and New cluster's request (Lab adds a query that defeats caches).
NEW_CLUSTER = re.compile(r"/dashdock/api/clusters(\?\d*)?$")


@pytest.fixture
def page_lab(browser: Browser, lab: Lab, request: pytest.FixtureRequest) -> Iterator[tuple[Page, Lab]]:
    """Lab in a workspace of the test's own, with dashdock's sidebar open."""
    page = open_lab(browser, lab, request.node.name.replace("_", "-"))
    open_sidebar(page)
    yield page, lab


def focused(page: Page) -> str:
    """What has the keyboard focus: its data-action, else its input name, else its text."""
    return page.evaluate(
        """() => {
            const node = document.activeElement;
            return node.dataset.action || node.name || node.textContent.trim();
        }"""
    )


def tab_to(page: Page, target: str, limit: int = 30) -> list[str]:
    """Press Tab until `target` (as `focused` names it) has the focus; every stop on the way."""
    stops = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        stops.append(focused(page))
        if stops[-1] == target:
            return stops
    raise AssertionError(f"Tab never reached {target!r}: {stops}")


def type_number(page: Page, value: str) -> None:
    page.keyboard.press("Control+A")
    page.keyboard.type(value)


def listed(lab: Lab, cluster_id: str) -> dict[str, object]:
    listing = lab.api("dashdock/api/clusters")
    assert isinstance(listing, dict)
    return next(c for c in listing["clusters"] if c["id"] == cluster_id)


def wait_until(check: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the cluster never got there"
        time.sleep(0.5)


def workers_fact(card: Locator) -> Locator:
    return card.locator("dd").nth(1)


def test_a_cluster_card_used_from_the_keyboard(page_lab: tuple[Page, Lab]) -> None:
    page, lab = page_lab
    section = page.locator(SECTION)

    # No cluster: the section says what to do, and offers only the buttons that start one.
    empty = section.locator(".jp-dashdock-Clusters-empty")
    expect(empty).to_contain_text("No clusters yet. New cluster starts a Dask cluster")
    assert section.locator("button, input, a").count() == 2
    # Side by side in a sidebar of Lab's default width.
    new, options = (section.locator(f'button[data-action="{a}"]').bounding_box() for a in ("new", "form"))
    assert new is not None and options is not None
    assert abs(new["y"] - options["y"]) < 2, (new, options)
    expect(section.locator(".jp-dashdock-Clusters-error")).to_be_hidden()
    assert_accessible(page, SECTION)
    screenshot(page, "clusters-empty")

    # Enter on New cluster starts one; Tab then walks through every control of its card.
    section.locator('button[data-action="new"]').focus()
    page.keyboard.press("Enter")
    card = page.locator(CARD)
    expect(card.locator(".jp-dashdock-ClusterCard-status")).to_have_text("running", timeout=120_000)
    expect(empty).to_have_count(0)
    cluster_id = card.get_attribute("data-cluster-id") or ""
    section.locator('button[data-action="new"]').focus()  # where the walk starts, whatever moved the focus
    stops = tab_to(page, "stop")
    assert stops[-9:] == [
        "workers",
        "scale",
        "minimum",
        "maximum",
        "adapt",
        "layout",
        "insert",
        "restart",
        "stop",
    ]

    # The Scale field shows the cluster's size, and follows it while the user is not editing it.
    wait_until(lambda: int(listed(lab, cluster_id)["workers"]) > 0)  # type: ignore[call-overload]
    size = int(listed(lab, cluster_id)["workers"])  # type: ignore[call-overload]
    expect(workers_fact(card)).to_have_text(str(size), timeout=30_000)
    workers = card.get_by_label("Workers", exact=True)
    expect(workers).to_have_value(str(size))
    lab.api(f"dashdock/api/clusters/{cluster_id}", "PATCH", {"workers": size + 1})
    expect(workers_fact(card)).to_have_text(str(size + 1), timeout=60_000)
    expect(workers).to_have_value(str(size + 1))
    # The adapt bounds are labelled by label elements, which name the inputs.
    for label, name in (("Minimum", "minimum"), ("Maximum", "maximum")):
        expect(card.get_by_label(label, exact=True)).to_have_attribute("name", name)
        expect(card.locator(f"label:has(input[name='{name}'])")).to_contain_text(label)

    # A minimum above the maximum, typed and sent with Enter: the card says so in plain words,
    # and nothing was sent.
    error = card.locator(".jp-dashdock-ClusterCard-error")
    expect(error).to_be_hidden()
    workers.focus()
    tab_to(page, "minimum")
    type_number(page, "3")
    page.keyboard.press("Tab")
    type_number(page, "1")
    page.keyboard.press("Enter")
    expect(error).to_have_text("The minimum number of workers cannot be larger than the maximum.")
    expect(error).to_have_attribute("role", "alert")
    expect(card.get_by_label("Minimum", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(section.locator(".jp-dashdock-Clusters-error")).to_be_hidden()
    assert listed(lab, cluster_id)["adapt"] is None
    screenshot(page, "cluster-card-adapt-error")
    # The next edit clears it.
    page.keyboard.type("0")
    expect(error).to_be_hidden()
    expect(card.locator("input[aria-invalid='true']")).to_have_count(0)

    # A size over the server's limit: its refusal shows on the card, and the next success clears it.
    max_workers = lab.api("dashdock/api/clusters")["limits"]["max_workers"]  # type: ignore[index]
    workers.focus()
    type_number(page, str(max_workers + 1))
    page.keyboard.press("Enter")
    expect(error).to_contain_text(f"limit of {max_workers} workers per cluster")
    expect(section.locator(".jp-dashdock-Clusters-error")).to_be_hidden()
    type_number(page, str(size))
    expect(error).to_be_hidden()
    page.keyboard.press("Enter")
    expect(workers_fact(card)).to_have_text(str(size), timeout=60_000)
    expect(error).to_be_hidden()
    expect(workers).to_be_focused()  # the keyboard stays where it was through the operation
    assert_accessible(page, CARD)
    screenshot(page, "cluster-card-keyboard")

    # Shut down with work running asks first, with Cancel focused: Enter keeps the cluster.
    scheduler = card.locator("dd").first.inner_text()
    with Client(scheduler, timeout=30) as client:
        futures = client.map(time.sleep, [120] * 4, pure=False)
        wait_until(lambda: listed(lab, cluster_id)["tasks"] == 4)
        card.locator('button[data-action="stop"]').focus()
        page.keyboard.press("Enter")
        dialog = page.locator(".jp-Dialog")
        expect(dialog).to_contain_text("Shut down Cluster 1?")
        expect(dialog).to_contain_text("4 tasks are still running.")
        assert focused(page) == "Cancel"
        screenshot(page, "cluster-shutdown-asks")
        page.keyboard.press("Enter")
        expect(dialog).to_have_count(0)
        expect(card.locator(".jp-dashdock-ClusterCard-status")).to_have_text("running")
        assert listed(lab, cluster_id)["status"] == "running"

        # Results the workers hold would be lost too: it asks for them, with the count.
        client.cancel(futures)
        results = client.map(operator.neg, range(3), pure=False)
        client.gather(results)
        wait_until(lambda: listed(lab, cluster_id)["tasks"] == 0 and listed(lab, cluster_id)["held"] == 3)
        card.locator('button[data-action="stop"]').focus()
        page.keyboard.press("Enter")
        expect(dialog).to_contain_text("Its workers hold 3 results in memory, which are lost.")
        expect(dialog).not_to_contain_text("running")
        page.keyboard.press("Enter")
        expect(dialog).to_have_count(0)
        assert listed(lab, cluster_id)["status"] == "running"

        # Once nothing is running or held (released here), it shuts down at once, and the focus
        # stays in the section.
        client.cancel(results)
        wait_until(lambda: listed(lab, cluster_id)["held"] == 0)
    card.locator('button[data-action="stop"]').focus()
    page.keyboard.press("Space")
    expect(page.locator(CARD)).to_have_count(0, timeout=60_000)
    expect(page.locator(".jp-Dialog")).to_have_count(0)
    expect(section.locator('button[data-action="new"]')).to_be_focused()
    expect(empty).to_be_visible()


def test_every_card_control_has_a_name_and_a_tooltip(page_lab: tuple[Page, Lab]) -> None:
    page = page_lab[0]
    page.locator(f'{SECTION} button[data-action="new"]').click()
    card = page.locator(CARD)
    expect(card.locator(".jp-dashdock-ClusterCard-status")).to_have_text("running", timeout=120_000)
    controls = card.locator("button, input")
    assert controls.count() == 9
    for index in range(controls.count()):
        control = controls.nth(index)
        expect(control).to_have_attribute("title", re.compile(r"\w"))
        expect(control).to_have_accessible_name(re.compile(r"\w"))
    # A visible focus: the focused button draws an outline.
    card.locator('button[data-action="layout"]').focus()
    page.keyboard.press("Tab")
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid", outline

    # A New cluster that fails says why at the top of the section, until the next success: here a
    # scale of the card. (The refusal is the server's 409 for max_clusters, answered by the test
    # so that no eight clusters have to run.)
    refusal = "This server runs at most 1 clusters at a time and has that many."

    def refuse_new(route: Route) -> None:
        if route.request.method == "POST":
            route.fulfill(status=409, content_type="application/json", body=json.dumps({"message": refusal}))
        else:
            route.continue_()

    page.route(NEW_CLUSTER, refuse_new)
    section_error = page.locator(f"{SECTION} .jp-dashdock-Clusters-error")
    page.locator(f'{SECTION} button[data-action="new"]').focus()
    page.keyboard.press("Enter")
    expect(section_error).to_have_text(refusal)
    expect(section_error).to_have_attribute("role", "alert")
    expect(page.locator(CARD)).to_have_count(1)
    workers = card.get_by_label("Workers", exact=True)
    workers.focus()
    page.keyboard.press("Enter")
    expect(section_error).to_be_hidden()
    page.unroute(NEW_CLUSTER)

    card.locator('button[data-action="stop"]').click()
    expect(page.locator(CARD)).to_have_count(0, timeout=60_000)


def test_the_new_cluster_form_starts_a_local_cluster_as_chosen(page_lab: tuple[Page, Lab]) -> None:
    page, lab = page_lab
    section = page.locator(SECTION)
    # From the keyboard: the button, then the form (no gateway here: only this server is offered).
    section.get_by_role("button", name="New cluster with options").focus()
    page.keyboard.press("Enter")
    dialog = page.locator(".jp-Dialog")
    provider = dialog.get_by_label("Runs on")
    expect(provider).to_be_focused()
    assert provider.locator("option").all_inner_texts() == ["This Jupyter server"]
    threads = dialog.get_by_label("Threads per worker")
    expect(threads).to_have_attribute("placeholder", "default", timeout=30_000)  # Dask decides
    expect(threads).to_have_value("")
    expect(dialog.get_by_label("Worker processes")).to_be_checked()
    assert_accessible(page, ".jp-Dialog")
    screenshot(page, "local-new-cluster-form")
    dialog.get_by_label("Workers", exact=True).fill("1")
    threads.fill("3")
    dialog.get_by_label("Memory limit per worker").fill("lots")  # the browser cannot tell it is wrong
    threads.press("Enter")  # Enter accepts the form, as in Lab's own dialogs

    # The cluster class refuses it: the form comes back holding what was typed, with the reason.
    status = page.locator(".jp-Dialog .jp-dashdock-ClusterForm-status")
    expect(status).to_contain_text("'lots'", timeout=60_000)
    again = page.locator(".jp-Dialog")
    expect(again.get_by_label("Memory limit per worker")).to_have_value("lots")
    expect(again.get_by_label("Threads per worker")).to_have_value("3")
    expect(again.get_by_label("Workers", exact=True)).to_have_value("1")
    expect(page.locator(CARD)).to_have_count(0)
    again.get_by_label("Memory limit per worker").fill("auto")
    again.get_by_label("Memory limit per worker").press("Enter")

    card = page.locator(CARD)
    expect(card.locator(".jp-dashdock-ClusterCard-status")).to_have_text("running", timeout=120_000)
    cluster_id = card.get_attribute("data-cluster-id") or ""
    wait_until(lambda: listed(lab, cluster_id)["workers"] == 1)
    # The option reached the cluster class: its one worker runs 3 threads.
    assert listed(lab, cluster_id)["threads"] == 3
    card.locator('button[data-action="stop"]').click()
    expect(page.locator(CARD)).to_have_count(0, timeout=60_000)
