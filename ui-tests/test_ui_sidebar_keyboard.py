"""A keyboard-only user works the sidebar: sources, folding plot groups, the filter; errors clear.

The tests of this module share one Lab, in order: the first sees it with no source at all.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from a11y import assert_accessible
from helpers import SIDEBAR, add_source, open_sidebar, pane, plot_item, set_theme
from lab import DaskCluster, Lab, open_lab, screenshot, wait_for_lab
from playwright.sync_api import Browser, Page, expect

PLOTS = f"{SIDEBAR} .jp-dashdock-Plots"
TREE = f"{PLOTS} .jp-dashdock-PlotList"
FILTER = ".jp-dashdock-Plots-filter"
SOURCES = f"{SIDEBAR} .jp-dashdock-SourceList"


class SmallDashboard:
    """A dashboard on a loopback port with one plot, whose plot list can be made to fail."""

    def __init__(self) -> None:
        self.failing = False
        dashboard = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/health":
                    self._send(200, "text/plain", "ok")
                elif self.path == "/individual-plots.json" and not dashboard.failing:
                    plots = {"Individual Progress": "/individual-progress"}
                    self._send(200, "application/json", json.dumps(plots))
                else:
                    self._send(503, "text/plain", "busy")

            def _send(self, status: int, content_type: str, body: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def small_dashboard() -> Iterator[SmallDashboard]:
    dashboard = SmallDashboard()
    yield dashboard
    dashboard.close()


def _focused(page: Page) -> dict[str, str]:
    """What has the keyboard focus: its class, text, role and tabindex."""
    return page.evaluate(
        """() => {
            const node = document.activeElement;
            return {
                className: node.className, role: node.getAttribute('role') || '',
                name: node.dataset.name || node.dataset.group || node.getAttribute('aria-label') || '',
                tabindex: node.getAttribute('tabindex') || '',
                outline: getComputedStyle(node.matches('[aria-expanded]')
                    ? node.firstElementChild : node).outlineStyle
            };
        }"""
    )


def _open_settled(browser: Browser, lab: Lab, workspace: str) -> Page:
    """Lab with the sidebar open, once its restored layout has taken the focus it takes on load."""
    page = open_lab(browser, lab, workspace)
    page.evaluate("() => window.jupyterapp.restored")
    page.wait_for_function("() => document.activeElement?.closest('.jp-Launcher') !== null")
    open_sidebar(page)
    return page


def _wait_for_saved(lab: Lab, workspace: str, key: str, value: object) -> None:
    """Until the Lab has saved ``value`` under ``key`` in its workspace (it saves a moment later)."""
    deadline = time.monotonic() + 60
    while True:
        saved = lab.api(f"lab/api/workspaces/{workspace}")
        assert isinstance(saved, dict)
        if saved.get("data", {}).get(key) == value:
            return
        assert time.monotonic() < deadline, saved
        time.sleep(0.5)


def _tab_stops(page: Page, selector: str) -> int:
    return page.locator(f'{selector} [tabindex="0"]').count()


def _contrast(page: Page, row: str, text: str) -> tuple[float, float]:
    """The contrast ratio of the selected row's text on its background, now and with the old CSS."""
    colours = page.evaluate(
        """([row, text]) => {
            const rgba = value => {
                const probe = document.createElement('canvas').getContext('2d');
                probe.fillStyle = value;
                probe.fillRect(0, 0, 1, 1);
                return Array.from(probe.getImageData(0, 0, 1, 1).data);
            };
            const onWhite = value => {
                const probe = document.createElement('canvas').getContext('2d');
                probe.fillStyle = 'white';
                probe.fillRect(0, 0, 1, 1);
                probe.fillStyle = value;
                probe.fillRect(0, 0, 1, 1);
                return Array.from(probe.getImageData(0, 0, 1, 1).data);
            };
            const old = document.createElement('div');
            old.style.background = 'var(--jp-brand-color3)';
            old.style.color = 'var(--jp-ui-font-color0)';
            document.body.appendChild(old);
            const result = {
                text: getComputedStyle(document.querySelector(text)).color,
                background: getComputedStyle(document.querySelector(row)).backgroundColor,
                oldText: getComputedStyle(old).color,
                oldBackground: getComputedStyle(old).backgroundColor
            };
            old.remove();
            return Object.fromEntries(Object.entries(result).map(
                ([key, value]) => [key, key.endsWith('ackground') ? onWhite(value) : rgba(value)]));
        }""",
        [row, text],
    )
    return (
        _ratio(colours["text"], colours["background"]),
        _ratio(colours["oldText"], colours["oldBackground"]),
    )


def _ratio(text: list[int], background: list[int]) -> float:
    """WCAG contrast of `text` (RGBA, alpha 0-255, blended over the opaque `background`)."""
    alpha = text[3] / 255
    blended = [alpha * t + (1 - alpha) * b for t, b in zip(text[:3], background[:3], strict=True)]

    def luminance(rgb: list[float]) -> float:
        channels = [c / 255 for c in rgb]
        linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    opaque = [float(c) for c in background[:3]]
    lighter, darker = sorted((luminance(blended), luminance(opaque)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def test_with_no_source_the_sidebar_says_what_to_do(browser: Browser, lab: Lab) -> None:
    page = open_lab(browser, lab, "sidebar-empty")
    sidebar = open_sidebar(page)
    plots = page.locator(PLOTS)
    expect(plots.locator(".jp-dashdock-PlotList-message")).to_have_text(
        "No dashboard yet. Add a dashboard URL under Sources above, or start a cluster under Clusters below."
    )
    # Nothing that would do nothing: no filter, no Layout, no empty list.
    expect(plots.locator(FILTER)).to_be_hidden()
    expect(plots.locator(".jp-dashdock-Plots-layout")).to_be_hidden()
    expect(plots.locator(".jp-dashdock-PlotList")).to_be_hidden()

    sidebar.locator(".jp-AccordionPanel-title", has_text="Workers").click()
    workers = sidebar.locator(".jp-dashdock-Workers")
    expect(workers.locator(".jp-dashdock-WorkerList-message")).to_have_text(
        "Pick a source under Sources to list its workers."
    )
    expect(workers.locator(".jp-dashdock-Workers-header")).to_be_hidden()
    screenshot(page, "sidebar-empty")
    assert_accessible(page, SIDEBAR)


def test_a_plot_opens_from_the_keyboard_alone(browser: Browser, lab: Lab, dask_cluster: DaskCluster) -> None:
    page = _open_settled(browser, lab, "sidebar-keyboard")
    page.set_viewport_size({"width": 1600, "height": 1000})
    sidebar = page.locator(SIDEBAR)

    # The add-source error goes as soon as the URL is edited, and a success leaves none.
    add_source(page, "http://127.0.0.1:1/status")
    error = sidebar.locator(".jp-dashdock-AddSource-error")
    expect(error).to_contain_text("Could not reach 127.0.0.1:1", timeout=15_000)
    page.focus(".jp-dashdock-AddSource-url")
    page.keyboard.press("End")
    page.keyboard.press("Backspace")
    expect(error).to_have_text("")
    page.keyboard.press("Enter")
    expect(error).to_contain_text("Could not reach 127.0.0.1:1", timeout=15_000)
    page.fill(".jp-dashdock-AddSource-url", "")
    page.keyboard.type(dask_cluster.dashboard)
    page.keyboard.press("Enter")
    expect(sidebar.locator(".jp-dashdock-Source")).to_have_count(1, timeout=15_000)
    expect(error).to_have_text("")
    expect(plot_item(page, "Task Stream")).to_be_visible()

    # Each plot says what it shows, and how to open it.
    title = plot_item(page, "Task Stream").get_attribute("title") or ""
    assert "When each task ran" in title and "Enter or click to open, drag to dock" in title, title

    # The GPU group says what it needs and starts folded; its plots are not in the way.
    gpu = page.locator(f'{TREE} .jp-dashdock-PlotGroup[data-group="gpu"]')
    expect(gpu).to_have_attribute("aria-expanded", "false")
    expect(gpu.locator(".jp-dashdock-PlotGroup-header")).to_contain_text("needs NVIDIA GPUs on the workers")
    expect(gpu.locator(".jp-dashdock-Plot").first).to_be_hidden()

    # The filter, Layout, then ONE stop for the whole tree, then out of it.
    page.focus(FILTER)
    page.keyboard.press("Tab")
    assert "jp-dashdock-Plots-layout" in _focused(page)["className"]
    assert _tab_stops(page, TREE) == 1
    page.keyboard.press("Tab")
    assert _focused(page) | {"outline": ""} == {
        "className": "jp-dashdock-PlotGroup",
        "role": "treeitem",
        "name": "tasks",
        "tabindex": "0",
        "outline": "",
    }
    assert _focused(page)["outline"] != "none", "the focused row shows no focus ring"
    page.keyboard.press("Tab")
    assert "jp-dashdock-Plot" not in _focused(page)["className"], "Tab went through the plots one by one"

    # Arrows move through the shown rows; Left folds a group, Right unfolds it and enters it.
    page.focus(FILTER)
    page.keyboard.press("ArrowDown")
    assert _focused(page)["name"] == "tasks"
    page.keyboard.press("ArrowDown")
    assert _focused(page)["name"] == "Task Stream"
    assert _focused(page)["outline"] != "none", "the focused row shows no focus ring"
    assert _tab_stops(page, TREE) == 1
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowLeft")
    tasks = page.locator(f'{TREE} .jp-dashdock-PlotGroup[data-group="tasks"]')
    expect(tasks).to_have_attribute("aria-expanded", "false")
    expect(plot_item(page, "Task Stream")).to_be_hidden()
    page.keyboard.press("ArrowDown")
    assert _focused(page)["name"] == "memory", "Down went into a folded group"
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowRight")
    expect(tasks).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("ArrowRight")
    assert _focused(page)["name"] == "Task Stream"
    page.keyboard.press("End")
    assert _focused(page)["name"] == "gpu", "End should land on the folded GPU group, the last row shown"
    page.keyboard.press("Enter")
    expect(gpu).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("Space")
    expect(gpu).to_have_attribute("aria-expanded", "false")
    page.keyboard.press("Home")
    assert _focused(page)["name"] == "tasks"

    # A fold is remembered when the list is built again (here by the filter).
    page.locator(f'{TREE} .jp-dashdock-PlotGroup[data-group="memory"] .jp-dashdock-PlotGroup-header').click()
    memory = page.locator(f'{TREE} .jp-dashdock-PlotGroup[data-group="memory"]')
    expect(memory).to_have_attribute("aria-expanded", "false")
    page.fill(FILTER, "memory")
    expect(memory).to_have_attribute("aria-expanded", "true")  # matches show while filtering
    page.fill(FILTER, "")
    expect(memory).to_have_attribute("aria-expanded", "false")

    # Enter on a focused plot opens it.
    page.focus(FILTER)
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert _focused(page)["name"] == "Progress"
    page.keyboard.press("Enter")
    expect(pane(page, "Progress")).to_be_attached()

    # From the filter: type, Enter opens the first match.
    page.focus(FILTER)
    start = time.monotonic()
    page.keyboard.type("exce")
    page.keyboard.press("Enter")
    pane(page, "Exceptions").wait_for(state="attached")
    print(f"\nkeyboard: filter focused -> Exceptions pane attached in {time.monotonic() - start:.2f} s")
    page.fill(FILTER, "")

    # Sources, the filter and the other sections stay in view without scrolling past every plot.
    sidebar_box = sidebar.bounding_box()
    assert sidebar_box is not None
    bottom = sidebar_box["y"] + sidebar_box["height"]
    for part in [
        ".jp-dashdock-AddSource-url",
        ".jp-dashdock-Source",
        FILTER,
        '.jp-AccordionPanel-title:has-text("Workers")',
        '.jp-AccordionPanel-title:has-text("Clusters")',
    ]:
        box = sidebar.locator(part).first.bounding_box()
        assert box is not None and box["y"] >= sidebar_box["y"] and box["y"] + box["height"] <= bottom, part
    sizes = page.evaluate(
        """() => ['Sources', 'Plots', 'Workers', 'Clusters'].map(name => {
            const node = document.querySelector('.jp-dashdock-' + name);
            return [name, node.clientHeight, node.scrollHeight];
        })"""
    )
    print(f"sections at 1600x1000 (class, visible px, content px): {sizes}")
    print(f"plots listed: {sidebar.locator('.jp-dashdock-Plot').count()}")
    screenshot(page, "sidebar-keyboard-1600x1000")
    assert_accessible(page, SIDEBAR)


def test_sources_by_keyboard_selection_contrast_and_plot_errors(
    browser: Browser, lab: Lab, dask_cluster: DaskCluster, small_dashboard: SmallDashboard
) -> None:
    lab.api("dashdock/api/sources", "POST", {"url": dask_cluster.dashboard})
    lab.api("dashdock/api/sources", "POST", {"url": small_dashboard.url})
    page = _open_settled(browser, lab, "sidebar-sources")
    sidebar = page.locator(SIDEBAR)
    rows = sidebar.locator(".jp-dashdock-Source")
    expect(rows).to_have_count(2)
    first, second = rows.nth(0), rows.nth(1)
    expect(first).to_have_attribute("aria-selected", "true")
    expect(second).to_have_attribute("aria-selected", "false")
    assert _tab_stops(page, SOURCES) == 1

    # Down then Enter selects the second source; its plots replace the first's, and the Plots
    # section's title says whose they are.
    plots_title = sidebar.locator(".jp-AccordionPanel-title", has_text="Plots")
    first_name = first.locator(".jp-dashdock-Source-name").inner_text()
    second_name = second.locator(".jp-dashdock-Source-name").inner_text()
    expect(plots_title).to_have_text(f"Plots · {first_name}")
    first.focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    expect(second).to_have_attribute("aria-selected", "true")
    expect(first).to_have_attribute("aria-selected", "false")
    expect(plot_item(page, "Progress")).to_have_count(1)
    expect(plot_item(page, "Task Stream")).to_have_count(0)
    expect(plots_title).to_have_text(f"Plots · {second_name}")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Space")
    expect(first).to_have_attribute("aria-selected", "true")
    expect(plot_item(page, "Task Stream")).to_have_count(1)
    expect(plots_title).to_have_text(f"Plots · {first_name}")

    # The remove buttons have a name and a tooltip, and are not tab stops of their own.
    remove = second.locator(".jp-dashdock-Source-remove")
    expect(remove).to_have_attribute("aria-label", f"Remove {small_dashboard.url.split('//')[1]}")
    expect(remove).to_have_attribute("title", "Remove this source (Delete)")
    expect(remove).to_have_attribute("tabindex", "-1")

    # The selected row reads at 4.5:1 or more in the light and the dark theme.
    selected = ".jp-dashdock-Source.jp-mod-selected"
    light, light_before = _contrast(page, selected, f"{selected} .jp-dashdock-Source-name")
    screenshot(page, "sidebar-selected-light")
    set_theme(page, "JupyterLab Dark")
    dark, dark_before = _contrast(page, selected, f"{selected} .jp-dashdock-Source-name")
    screenshot(page, "sidebar-selected-dark")
    assert_accessible(page, SIDEBAR)
    set_theme(page, "JupyterLab Light")
    print(f"\nselected source contrast: light {light_before:.2f} -> {light:.2f}, ", end="")
    print(f"dark {dark_before:.2f} -> {dark:.2f}")
    assert light >= 4.5 and dark >= 4.5, (light, dark)

    # A plot list that fails to load says so in the Plots section, and the message goes on success.
    small_dashboard.failing = True
    second.click()
    message = page.locator(f"{PLOTS} .jp-dashdock-PlotList-message")
    expect(message).to_contain_text("is not available")
    expect(page.locator(TREE)).to_be_hidden()
    screenshot(page, "sidebar-plots-error")
    small_dashboard.failing = False
    retry = message.get_by_role("button", name="Try again")
    retry.focus()
    page.keyboard.press("Enter")
    expect(plot_item(page, "Progress")).to_be_visible()
    expect(message).to_be_hidden()

    # A plot of each open: both sources are on one host, so each tab names its source by its port,
    # which a narrow tab would otherwise cut off.
    plot_item(page, "Progress").click()
    first.click()
    plot_item(page, "Task Stream").click()
    tabs = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tabLabel")
    expect(tabs.filter(has_text="Progress")).to_have_text(f"Progress · :{second_name.rsplit(':', 1)[1]}")
    expect(tabs.filter(has_text="Task Stream")).to_have_text(f"Task Stream · :{first_name.rsplit(':', 1)[1]}")
    screenshot(page, "tabs-two-sources-one-host")

    # The Lab reloaded shows the source the user had selected, not the first one listed.
    second.click()
    expect(second).to_have_attribute("aria-selected", "true")
    second_id = second.locator(".jp-dashdock-Source-remove").get_attribute("data-source-id")
    _wait_for_saved(lab, "sidebar-sources", "dashdock:sources:selected", second_id)
    page.reload()
    wait_for_lab(page)
    open_sidebar(page)
    expect(plots_title).to_have_text(f"Plots · {second_name}")
    expect(second).to_have_attribute("aria-selected", "true")
    expect(first).to_have_attribute("aria-selected", "false")

    # Delete removes the focused source; focus stays in the list.
    second.focus()
    page.keyboard.press("Delete")
    expect(rows).to_have_count(1)
    expect(first).to_be_focused()
    assert_accessible(page, SIDEBAR)
