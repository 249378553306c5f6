"""What a user does in the dashdock sidebar and panes, as playwright steps."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from page_log import frames_state, page_log
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Frame, Locator, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

SIDEBAR = ".jp-dashdock-Sidebar"
PANE = ".jp-dashdock-PlotPane"
SPARE = ".jp-dashdock-SpareFrames iframe"
# A pane's frame that shows its page: a pane waiting for a spare is named at once, in a frame
# with no page yet that the spare replaces.
PAGE_FRAME = "iframe[src]"


def open_sidebar(page: Page) -> Locator:
    sidebar = page.locator(SIDEBAR)
    if sidebar.is_visible():  # a restored layout may have it open: a click would close it
        return sidebar
    page.click('.jp-SideBar .lm-TabBar-tab[data-id="dashdock-sidebar"]')
    sidebar.wait_for(state="visible")
    return sidebar


def add_source(page: Page, url: str) -> None:
    page.fill(".jp-dashdock-AddSource-url", url)
    page.press(".jp-dashdock-AddSource-url", "Enter")


def plot_item(page: Page, name: str) -> Locator:
    return page.locator(f'{SIDEBAR} .jp-dashdock-Plot[data-name="{name}"]')


def pane(page: Page, name: str) -> Locator:
    return page.locator(f"{PANE}:has(iframe[title='{name}'])")


def pane_frame(page: Page, name: str) -> Frame:
    handle = pane(page, name).locator(PAGE_FRAME).element_handle()
    assert handle is not None
    frame = handle.content_frame()
    assert frame is not None
    return frame


def wait_for_bokeh_plot(page: Page, name: str) -> None:
    """The pane shows a Bokeh document with at least one root, drawn on a visible canvas."""
    frame = pane_frame(page, name)
    try:
        frame.wait_for_function(
            "() => window.Bokeh?.documents.some(doc => doc.roots().length > 0)",
            timeout=45_000,
        )
    except PlaywrightTimeoutError:
        # Say which pane and what it showed instead, so a failure on a loaded CI machine can be read.
        status = pane(page, name).locator(".jp-dashdock-PaneStatus").all_inner_texts()
        body = frame.evaluate("() => document.body ? document.body.innerText.slice(0, 300) : ''")
        shown = f"status {status}, frame {frame.url}: {body!r}\n{frames_state(page)}\n{page_log(page)}"
        raise AssertionError(f"{name!r} drew no Bokeh plot in 45 s: {shown}") from None
    frame.locator("canvas").first.wait_for(state="visible", timeout=45_000)


def history_frame(locator: Locator) -> Frame:
    """The page inside a History view or pane (``locator``)."""
    handle = locator.locator("iframe").element_handle()
    assert handle is not None
    frame = handle.content_frame()
    assert frame is not None
    return frame


def wait_for_history_plot(locator: Locator) -> None:
    """A History view or pane (``locator``) shows its Bokeh document, drawn on a visible canvas."""
    frame = history_frame(locator)
    frame.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].roots().length > 0",
        timeout=60_000,
    )
    frame.locator("canvas").first.wait_for(state="visible", timeout=60_000)


def drag_to(page: Page, source: Locator, x: float, y: float) -> None:
    """Press on `source` (scrolled into sight first, as a user would), move past the drag
    threshold in small steps, release at (x, y)."""

    def found() -> dict[str, float] | None:
        # The sidebar redraws a source's plots when what it knows of them changes (which are drawn
        # here): between two steps the item may be a new element, not yet laid out, or the old
        # one taken out of the page in the middle of a step (then the next try finds the new one).
        try:
            source.scroll_into_view_if_needed()
            box = source.bounding_box()
        except PlaywrightError as error:
            if "not attached to the DOM" not in str(error):
                raise
            return None
        return dict(box) if box is not None else None

    box: Any = wait_until(found, timeout=30)
    start_x, start_y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(start_x, start_y)
    page.mouse.down()
    page.mouse.move(start_x + 20, start_y + 5, steps=4)
    page.mouse.move(x, y, steps=20)
    # Released only once what is under the pointer takes the drop: Lumino's drag cursor says so.
    page.wait_for_function(
        "() => ['move', 'copy'].includes(document.querySelector('.lm-cursor-backdrop')?.style.cursor)"
    )
    page.mouse.move(x + 1, y, steps=2)
    page.mouse.up()


def wait_until(condition: Callable[[], object], timeout: float = 120.0) -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.5)


def set_theme(page: Page, theme: str) -> None:
    """Switches the Lab to ``theme`` ("JupyterLab Light" or "JupyterLab Dark") and returns once its
    colours are in force, not only its name: the Lab's background is light or dark."""
    page.evaluate("theme => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme)
    light = theme == "JupyterLab Light"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{str(light).lower()}'")
    page.wait_for_function(
        """light => {
            const probe = document.createElement('div');
            probe.style.background = 'var(--jp-layout-color0)';
            document.body.appendChild(probe);
            const [r, g, b] = getComputedStyle(probe).backgroundColor.match(/[0-9.]+/g).map(Number);
            probe.remove();
            return (0.2126 * r + 0.7152 * g + 0.0722 * b > 128) === light;
        }""",
        arg=light,
    )


def next_frames(frame: Page | Frame, count: int = 2) -> None:
    """Returns once the page has begun ``count`` more animation frames: what was changed before
    is painted (Bokeh and the dock lay out and draw in animation frames)."""
    frame.evaluate(
        """count => new Promise(done => {
            const step = left => (left ? requestAnimationFrame(() => step(left - 1)) : done());
            step(count);
        })""",
        count,
    )


def recorded_cluster(lab: Any) -> dict:
    """A managed cluster of one worker, running and being recorded (History), as the API lists it."""
    cluster = lab.api("dashdock/api/clusters", "POST", {"workers": 1})
    assert isinstance(cluster, dict)

    def running() -> dict:
        listing = lab.api("dashdock/api/clusters")
        assert isinstance(listing, dict)
        found = next((c for c in listing["clusters"] if c["id"] == cluster["id"]), {})
        return found if found.get("status") == "running" else {}

    ready = wait_until(running)
    assert isinstance(ready, dict)

    wait_until(lambda: live_run(lab, ready["source"]))
    return ready


def live_run(lab: Any, source: str) -> dict:
    """The run of ``source`` being recorded now, as GET history lists it; {} when there is none."""
    listing = lab.api("dashdock/api/history")
    assert isinstance(listing, dict)
    return next((r for r in listing["runs"] if r["source"] == source and r["live"]), {})


def run_in_notebook(page: Page, code: str, timeout: float = 150.0) -> None:
    """Run code in the open notebook's kernel, as a cell would, failing after ``timeout`` seconds.

    Playwright's evaluate has no timeout of its own: a cell that never finishes would hold the test
    (and a ``finally`` that runs more code behind it) forever, past pytest-timeout.
    """
    page.evaluate(
        """async ([code, seconds]) => {
            const notebook = [...window.jupyterapp.shell.widgets('main')].find(w => w.sessionContext);
            const kernel = notebook.sessionContext.session.kernel;
            let timer;
            const late = new Promise((_, reject) => {
                const error = new Error(`no reply in ${seconds} s to: ${code}`);
                timer = setTimeout(() => reject(error), seconds * 1000);
            });
            try {
                const reply = await Promise.race([kernel.requestExecute({code}).done, late]);
                if (reply.content.status !== 'ok') throw new Error(JSON.stringify(reply.content));
            } finally {
                clearTimeout(timer);
            }
        }""",
        [code, timeout],
    )


def ready_spare(page: Page) -> Frame:
    """The one spare frame, once it has told the Lab it is ready; marked, to be recognised later."""
    page.locator(f"{SPARE}[data-ready='true']").wait_for(state="attached", timeout=60_000)
    handle = page.locator(SPARE).element_handle()
    frame = handle.content_frame() if handle else None
    assert frame is not None
    assert frame.evaluate("() => window.Bokeh !== undefined && Bokeh.documents.length === 0")
    frame.evaluate("() => { window.__spareMark = 'the spare'; }")
    return frame
