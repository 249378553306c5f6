"""What visible, hidden and paused panes cost, measured from both ends, in a real Lab and Chromium.

1. Server side: bytes and messages per second the proxy relays to a visible pane, to a pane hidden
   behind another tab (past the hidden-pane grace) and to a paused pane (dashdock's per-pane counters,
   GET {base}dashdock/api/panes/{id}).
2. Browser side: Chromium main-thread task time (CDP Performance.getMetrics, TaskDuration) with
   8 panes open, 6 of them hidden behind tabs, "before" (hidden panes keep streaming, as with today's
   tools: hiddenGrace set to a day) and "after" (dashdock's default 5 s grace).

Needs Chromium (`make test` installs it) and runs a LocalCluster doing sample work. Prints figures only.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "ui-tests"))

from lab import (  # noqa: E402 - the UI tests' harness: Lab, cluster and browser start-up
    BUSY,
    CHROMIUM_ARGS,
    Lab,
    start_cluster,
    start_lab,
    stop_cluster,
    stop_lab,
    wait_for_lab,
)
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright  # noqa: E402

PLOTS = [
    "/individual-task-stream",
    "/individual-progress",
    "/individual-workers-memory",
    "/individual-graph",
    "/individual-cpu",
    "/individual-occupancy",
    "/individual-memory-by-key",
    "/individual-nprocessing",
]
SETTLE_S = 8.0  # longer than the 5 s grace, so hidden panes have stopped
MEASURE_S = 15.0


def _write_grace(settings_dir: Path, seconds: float) -> None:
    target = settings_dir / "dashdock" / "panes.jupyterlab-settings"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"hiddenGrace": seconds}))


def _counters(lab: Lab, pane_id: str) -> tuple[int, int]:
    relays = lab.api(f"dashdock/api/panes/{pane_id}")["relays"]
    return sum(r["messages"] for r in relays), sum(r["bytes"] for r in relays)


OPEN_PANES_JS = """async ([source, plots]) => {
  const app = window.jupyterapp;
  // Two areas side by side; the first plots of each area end up hidden behind the last.
  const left = await app.commands.execute('dashdock:open-plot', {source, path: plots[0]});
  const right = await app.commands.execute('dashdock:open-plot',
    {source, path: plots[1], mode: 'split-right', ref: left.id});
  const ids = [left.id, right.id];
  for (let i = 2; i < plots.length; i++) {
    const ref = i % 2 === 0 ? left.id : right.id;
    const pane = await app.commands.execute('dashdock:open-plot',
      {source, path: plots[i], mode: 'tab-after', ref});
    ids.push(pane.id);
  }
  return ids;
}"""


def _open(browser: Browser, lab: Lab, workspace: str) -> tuple[BrowserContext, Page]:
    context = browser.new_context(viewport={"width": 1500, "height": 950})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{lab.url}lab/workspaces/{workspace}?reset&token=dashdock-ui-test-token")
    wait_for_lab(page)
    return context, page


def server_side(browser: Browser, lab: Lab, source_id: str) -> None:
    context, page = _open(browser, lab, "states")
    # Left area: a task stream hidden behind a second task stream; right area: progress, paused.
    hidden, paused_id, visible = page.evaluate(
        OPEN_PANES_JS,
        [source_id, ["/individual-task-stream", "/individual-progress", "/individual-task-stream"]],
    )
    page.locator(f"#{paused_id} .jp-dashdock-PaneStatus-pause").click()
    time.sleep(SETTLE_S)
    start = {pane: _counters(lab, pane) for pane in (visible, hidden, paused_id)}
    time.sleep(MEASURE_S)
    print(f"== Relayed to each pane over {MEASURE_S:.0f} s (server side; task stream x2, progress)")
    print(f"  {'pane':<28} {'msgs/s':>8} {'bytes/s':>10}")
    panes = (
        ("visible (task stream)", visible),
        ("hidden (task stream)", hidden),
        ("paused (progress)", paused_id),
    )
    for label, pane in panes:
        messages, size = _counters(lab, pane)
        messages -= start[pane][0]
        size -= start[pane][1]
        print(f"  {label:<28} {messages / MEASURE_S:>8.1f} {size / MEASURE_S:>10,.0f}")
    context.close()


def browser_cpu(browser: Browser, lab: Lab, source_id: str, label: str) -> float:
    context, page = _open(browser, lab, f"cpu-{label}")
    page.evaluate(OPEN_PANES_JS, [source_id, PLOTS])
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    time.sleep(SETTLE_S)

    def task_seconds() -> float:
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        return metrics["TaskDuration"]

    begin = task_seconds()
    time.sleep(MEASURE_S)
    used = task_seconds() - begin
    context.close()
    return used


def main() -> None:
    cluster = start_cluster(work=BUSY)
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for label, grace in (("before", 86400.0), ("after", 5.0)):
            lab_dir = Path(tmp) / label
            lab_dir.mkdir()
            lab = start_lab(lab_dir)
            try:
                _write_grace(lab_dir / "settings", grace)
                source = lab.api("dashdock/api/sources", "POST", {"url": cluster.dashboard})
                if label == "after":
                    server_side(browser, lab, source["id"])
                results[label] = browser_cpu(browser, lab, source["id"], label)
            finally:
                stop_lab(lab)
        browser.close()
    stop_cluster(cluster)
    print(f"\n== Chromium main-thread task time, 8 panes of which 6 hidden, over {MEASURE_S:.0f} s")
    for label, used in results.items():
        print(f"  {label:<7} {used:6.2f} s  ({100 * used / MEASURE_S:5.1f}% of a core)")
    print(f"  after/before: {results['after'] / results['before']:.2f}x")


if __name__ == "__main__":
    main()
