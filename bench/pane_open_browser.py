"""What opening a dashdock pane costs in a real Lab (base URL /user/alice/) and Chromium.

1. Bytes received per warm pane open: Task Stream opened once from the sidebar, drawn, closed; then
   8 rounds of click -> drawn -> close. Per round, the response headers and bodies of every request of
   the page and its frames (Playwright's requestfinished, which covers out-of-process iframes) from the
   click until drawn, plus WebSocket frames received in that window (a Bokeh document arrives by
   WebSocket, which requestfinished does not see). The last round's top 5 URLs by bytes are listed.
2. Click to drawn, warm: from the click on the plot item until the pane's Bokeh document has a root and
   a visible canvas, against a direct browser tab of the scheduler's own /individual-task-stream
   (goto until the same condition, loaded once before), 8 rounds each, interleaved.
3. Ten panes restored after a reload: bytes received from page.reload() until all ten are drawn again,
   and the time until the last one is.

Needs Chromium (/usr/bin/chromium) and runs a LocalCluster doing sample work (rounds 0.2 s apart, as the
UI tests' cluster), or with ``--quiet`` one round and then nothing (a cluster between computations).
``--plot profile`` measures Profile, a plot dashdock does not draw (the pane relays Dask's own page),
instead of the Task Stream, which it draws. Prints figures only.

    .venv/bin/python bench/pane_open_browser.py [--plot task-stream|profile] [--quiet]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "ui-tests"))

from _common import heading, median, ratio, table  # noqa: E402
from helpers import open_sidebar, pane, pane_frame, plot_item  # noqa: E402
from lab import (  # noqa: E402 - the UI tests' harness: Lab, cluster and browser start-up
    BUSY,
    CHROMIUM_ARGS,
    TOKEN,
    Lab,
    start_cluster,
    start_lab,
    stop_cluster,
    stop_lab,
    wait_for_lab,
)
from playwright.sync_api import (  # noqa: E402
    BrowserContext,
    Frame,
    Page,
    Request,
    WebSocket,
    sync_playwright,
)

ROUNDS = 8
# The sidebar's name of each plot measured, and its path on the scheduler's dashboard (the tab's page).
PLOTS = {
    "task-stream": ("Task Stream", "/individual-task-stream"),
    "profile": ("Profile", "/individual-profile"),
}
PLOT = "Task Stream"
QUIET_PAUSE = 3600.0  # seconds between the quiet cluster's rounds: it runs one, then waits
# Preferred plots for the ten-pane layout; the sidebar's other plots fill up to ten if some are missing.
TEN = [
    "Task Stream",
    "Progress",
    "Workers Memory",
    "CPU",
    "Occupancy",
    "Processing",
    "Memory By Key",
    "Task Groups",
    "Graph",
    "Bandwidth Workers",
]
DRAWN_JS = "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].roots().length > 0"


class Traffic:
    """Requests finished and WebSocket bytes received by a page and its frames while recording."""

    def __init__(self, page: Page) -> None:
        self.recording = False
        self.requests: list[Request] = []
        self.ws_bytes = 0
        page.on("requestfinished", self._finished)
        page.on("websocket", self._websocket)

    def _finished(self, request: Request) -> None:
        if self.recording:
            self.requests.append(request)

    def _websocket(self, ws: WebSocket) -> None:
        ws.on("framereceived", self._frame)

    def _frame(self, payload: str | bytes) -> None:
        if self.recording:
            self.ws_bytes += len(payload.encode() if isinstance(payload, str) else payload)

    def start(self) -> None:
        self.requests, self.ws_bytes, self.recording = [], 0, True

    def stop(self) -> tuple[dict[str, int], int]:
        """Bytes per URL (headers + body) of the requests recorded, and WebSocket bytes."""
        self.recording = False
        per_url: dict[str, int] = defaultdict(int)
        for request in self.requests:
            sizes = request.sizes()
            per_url[request.url] += sizes["responseBodySize"] + sizes["responseHeadersSize"]
        return dict(per_url), self.ws_bytes


def wait_drawn(frame: Frame) -> None:
    frame.wait_for_function(DRAWN_JS, polling="raf", timeout=60_000)
    frame.locator("canvas").first.wait_for(state="visible", timeout=60_000)


def open_pane(page: Page, name: str) -> float:
    """Click the plot item, wait until drawn; seconds from the click."""
    begin = time.perf_counter()
    plot_item(page, name).click()
    pane(page, name).locator("iframe").wait_for(state="attached")
    wait_drawn(pane_frame(page, name))
    return time.perf_counter() - begin


def close_pane(page: Page, name: str) -> None:
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=name).locator(
        ".lm-TabBar-tabCloseIcon"
    ).click()
    pane(page, name).wait_for(state="detached")


def direct_tab(context: BrowserContext, url: str) -> float:
    tab = context.new_page()
    begin = time.perf_counter()
    tab.goto(url)
    wait_drawn(tab.main_frame)
    elapsed = time.perf_counter() - begin
    tab.close()
    return elapsed


def ms(values: list[float]) -> list[str]:
    return [f"{1000 * v:.0f}" for v in (median(values), min(values), max(values))]


def pane_frame_requests(requests: list[Request]) -> int:
    """Requests made by (or for) a pane's frame, {base}dashdock/view/...: proof frames are covered."""
    return sum(1 for r in requests if "/dashdock/view/" in r.frame.url or "/dashdock/view/" in r.url)


def kb(size: float) -> str:
    return f"{size / 1024:,.1f}"


def warm_opens(page: Page, context: BrowserContext, direct_url: str) -> None:
    traffic = Traffic(page)
    open_sidebar(page)
    open_pane(page, PLOT)  # cold: loads Bokeh's scripts into the cache
    close_pane(page, PLOT)
    direct_tab(context, direct_url)  # cold, for the tab as well

    pane_s: list[float] = []
    tab_s: list[float] = []
    rows = [["round", "requests KB", "ws KB", "total KB", "requests", "pane-frame reqs"]]
    totals: list[float] = []
    last: dict[str, int] = {}
    for n in range(ROUNDS):
        traffic.start()
        pane_s.append(open_pane(page, PLOT))
        per_url, ws_bytes = traffic.stop()
        count = len(traffic.requests)
        framed = pane_frame_requests(traffic.requests)
        close_pane(page, PLOT)
        tab_s.append(direct_tab(context, direct_url))
        http = sum(per_url.values())
        totals.append(http + ws_bytes)
        rows.append([str(n + 1), kb(http), kb(ws_bytes), kb(http + ws_bytes), str(count), str(framed)])
        last = per_url

    heading(f"1. Bytes received per warm pane open ({PLOT}, click until drawn)")
    table(rows)
    print(f"  median: {kb(median(totals))} KB (requests + WebSocket frames)")
    print("  last round, top 5 URLs by bytes:")
    top = sorted(last.items(), key=lambda item: -item[1])[:5]
    table([["URL", "KB"]] + [[url.split("?")[0][-90:], kb(size)] for url, size in top])

    heading(f"2. Click to drawn, warm ({PLOT}, {ROUNDS} rounds, interleaved)")
    table(
        [
            ["route", "median ms", "min ms", "max ms"],
            ["dashdock pane", *ms(pane_s)],
            ["direct tab", *ms(tab_s)],
        ]
    )
    print(f"  pane/tab: {ratio(median(pane_s), median(tab_s))}")


def ten_names(page: Page) -> list[str]:
    listed: list[str] = page.locator(".jp-dashdock-Sidebar .jp-dashdock-Plot").evaluate_all(
        "items => items.map(item => item.dataset.name)"
    )
    names = [name for name in TEN if name in listed]
    names += [name for name in listed if name not in names][: 10 - len(names)]
    return names[:10]


def ten_panes(page: Page) -> None:
    open_sidebar(page)
    names = ten_names(page)
    for name in names:
        plot_item(page, name).click()
        pane(page, name).locator("iframe").wait_for(state="attached")
    for name in names:
        wait_drawn(pane_frame(page, name))
    time.sleep(2)  # let the workspace save the layout
    traffic = Traffic(page)
    traffic.start()
    begin = time.perf_counter()
    page.reload()
    wait_for_lab(page)
    for name in names:
        pane(page, name).locator("iframe").wait_for(state="attached")
        wait_drawn(pane_frame(page, name))
    elapsed = time.perf_counter() - begin
    per_url, ws_bytes = traffic.stop()
    framed = pane_frame_requests(traffic.requests)
    heading("3. Ten panes restored after a reload (reload until all drawn)")
    print(f"  plots: {', '.join(names)}")
    table(
        [
            ["requests KB", "ws KB", "total KB", "requests", "pane-frame reqs", "to last drawn s"],
            [
                kb(sum(per_url.values())),
                kb(ws_bytes),
                kb(sum(per_url.values()) + ws_bytes),
                str(len(traffic.requests)),
                str(framed),
                f"{elapsed:.2f}",
            ],
        ]
    )


def _small_panes(settings_dir: Path) -> None:
    """Let ten panes split the main area rather than open as (paused, undrawn) tabs."""
    target = settings_dir / "dashdock" / "panes.jupyterlab-settings"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"minPaneWidth": 120, "minPaneHeight": 100}))


def _page(context: BrowserContext, lab: Lab, workspace: str) -> Page:
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{lab.url}lab/workspaces/{workspace}?reset&token={TOKEN}")
    wait_for_lab(page)
    return page


def main() -> None:
    global PLOT
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plot", choices=sorted(PLOTS), default="task-stream")
    parser.add_argument("--quiet", action="store_true", help="a cluster between computations")
    args = parser.parse_args()
    PLOT, path = PLOTS[args.plot]
    began = time.perf_counter()
    cluster = start_cluster(work=replace(BUSY, pause=QUIET_PAUSE) if args.quiet else BUSY)
    print(f"  {PLOT}, on a {'quiet' if args.quiet else 'busy'} cluster")
    try:
        with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            lab = start_lab(Path(tmp), "/user/alice/")
            try:
                _small_panes(Path(tmp) / "settings")
                lab.api("dashdock/api/sources", "POST", {"url": cluster.dashboard})
                context = browser.new_context(viewport={"width": 1800, "height": 1000})
                warm_opens(_page(context, lab, "warm"), context, cluster.root + path)
                context.close()
                context = browser.new_context(viewport={"width": 1800, "height": 1000})
                ten_panes(_page(context, lab, "ten"))
                context.close()
            finally:
                stop_lab(lab)
                browser.close()
    finally:
        stop_cluster(cluster)
    print(f"\n  ({time.perf_counter() - began:.0f} s in all)")


if __name__ == "__main__":
    main()
