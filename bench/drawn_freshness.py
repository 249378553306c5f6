"""Is a plot dashdock draws as fresh as Dask's own page of it?

For "drawn" plots dashdock serves Dask's plot pages itself, from a mirror of the scheduler kept by its
watcher process (no Bokeh session on the scheduler): the watcher reads the scheduler once a second, and
every ``Limits.live_tick`` (0.08 s; its plot state every 0.16 s) while a drawn page is open; a drawn
page looks for a change every 80-160 ms and redraws when what it read has changed. Dask's own
page reads the scheduler itself every 100-500 ms. This bench measures how far behind Dask's page
a drawn page shows the same change, and how often each changes.

Set-up: a real ``distributed.LocalCluster`` (processes=True, 2 workers x 2 threads, 127.0.0.1) in a
Python process of its own, plain (dashdock installs its plugin by itself; with ``--preload`` its
scheduler runs ``dashdock.kernel.plot_state`` as a user's would); a Jupyter server with dashdock
(``_common.JupyterServer``), the cluster added with ``POST dashdock/api/sources``, and the bench waits
until the plots below are in the source's ``drawnPlots``; one Chromium
(Playwright). Each round opens, side by side in one browser context, Dask's own page of each of five
plots (straight from the scheduler's dashboard) and dashdock's (``{base}dashdock/proxy/<source id>/...``,
which redirects to a sandboxed view page), waits until each has drawn, and installs a recorder in each:
every 10 ms it takes a signature of the page's ColumnDataSources (rows, a sum of the numeric columns,
rows streamed) and, when it changed, logs ``[Date.now(), quantity]``. The quantity is monotonic during
the workload and the same on both pages: for the Task Stream the rectangles streamed since the
recorder started, for Progress the tasks done (memory + released + erred), for Workers Memory the
managed bytes of all workers (each task returns 20 kB, held until the end of the round); and two
plots Dask redraws every 500 ms: for Compute Time Per Key the seconds computed, for Memory by Key the
results held. Then, from a
``distributed.Client`` in this process, ``client.map`` of tasks that sleep 40 ms each, enough to keep
the 4 threads busy about ``--seconds`` (default 10), is waited for, and 3 s more.

Printed per plot (medians over rounds): changes per second during the workload on Dask's page and on
dashdock's, and their ratio (dashdock / Dask); the delay of dashdock's page behind Dask's (for each
value v Dask's page showed during the workload, the time dashdock's page first showed a value >= v
minus the time Dask's first did: median and p90), Dask's values dashdock's page never reached; the end
lag, from Dask's page showing its final value to dashdock's page showing it. Also the workload's
seconds and the CPU seconds over it of dashdock's watcher process and of the scheduler's (the cluster
process, workers excluded). Figures only, nothing asserted; targets: delay median <= 0.3 s, the drawn
Task Stream changing at least as often as Dask's. Needs Chromium.

    .venv/bin/python bench/drawn_freshness.py [--rounds N] [--seconds S] [--preload] [--refresh S]
    (3 rounds of 10 s; about 2 minutes)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from _common import (
    AUTH,
    HOST,
    TOKEN,
    JupyterServer,
    cpu_seconds,
    free_port,
    heading,
    median,
    percentile,
    table,
)
from live_panes_cost import CHROMIUM, DRAWN_JS, TIMEOUT_MS, recorder_cpu, spent

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ui-tests"))
from lab import CHROMIUM_ARGS  # the UI tests' Chromium flags

if TYPE_CHECKING:
    from distributed import Client
    from playwright.sync_api import Browser, Page

ROUNDS = 3
SECONDS = 10.0
TASK_S = 0.04  # each task sleeps this long: 4 threads finish about 100 tasks a second
RESULT_BYTES = 20_000  # each task's result, held until the round ends: Workers Memory grows with them
THREADS = 4
AFTER = 3.0  # seconds recorded after the workload
PLOTS = {  # path -> the quantity both pages share (the recorder's ``kind``)
    "/individual-task-stream": "task-stream",
    "/individual-progress": "progress",
    "/individual-workers-memory": "workers-memory",
    # Two of the pages Dask redraws every 500 ms: one drawn from the task stream, one from a part of
    # the state asked for only while it is watched (plots.PART_EVERY_S).
    "/individual-compute-time-per-key": "compute-time-per-key",
    "/individual-memory-by-key": "memory-by-key",
}
# Pages side by side, none in the background (where Chromium would slow its timers down).
BROWSER_ARGS = [
    *CHROMIUM_ARGS,
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]

CLUSTER_CODE = """
import sys

from distributed import LocalCluster

extra = {"scheduler_kwargs": {"preload": ["dashdock.kernel.plot_state"]}} if sys.argv[2] == "1" else {}
with LocalCluster(
    n_workers=2,
    threads_per_worker=2,
    processes=True,
    host="127.0.0.1",
    dashboard_address="127.0.0.1:" + sys.argv[1],
    **extra,
) as cluster:
    print("SCHEDULER", cluster.scheduler_address, flush=True)
    print("DASHBOARD", cluster.dashboard_link, flush=True)
    try:
        sys.stdin.read()  # until the bench closes our stdin
    except KeyboardInterrupt:
        pass
"""

# Installed in each drawn page: polls a signature of its data every 10 ms, logs [time, quantity] on change.
RECORDER_JS = """(kind) => {
  const entries = (d) => (d instanceof Map ? [...d.entries()] : Object.entries(d));
  const column = (s, name) => (s.data instanceof Map ? s.data.get(name) : s.data[name]);
  const sources = [...Bokeh.documents[0].all_models].filter(
    (m) => m.data != null && typeof m.stream_to === "function" && typeof m.get_length === "function");
  const rec = { log: [], streamed: 0 };
  for (const s of sources) {  // count the rows streamed in (the Task Stream rolls over at 1000 rows)
    const streamTo = s.stream_to;
    s.stream_to = function (prop, data, rollover, options) {
      for (const [, values] of entries(data)) { rec.streamed += values.length; break; }
      return streamTo.call(this, prop, data, rollover, options);
    };
  }
  const quantity = () => {
    if (kind === "task-stream") return rec.streamed;
    let total = 0;
    const summed = {
      "progress": ["memory", "released", "erred"],
      "compute-time-per-key": ["times"],
      "memory-by-key": ["count"],
    }[kind];
    for (const s of sources) {
      if (summed) {
        for (const name of summed) {
          for (const x of column(s, name) ?? []) total += Number(x) || 0;
        }
      } else {
        const managed = column(s, "managed"), worker = column(s, "worker");
        if (managed == null || worker == null) continue;
        const byWorker = new Map();  // four rectangles a worker, each with its managed bytes
        for (let i = 0; i < managed.length; i++) byWorker.set(worker[i], Number(managed[i]) || 0);
        for (const x of byWorker.values()) total += x;
      }
    }
    return total;
  };
  const signature = () => {
    let rows = 0, sum = 0;
    for (const s of sources) {
      for (const [, values] of entries(s.data)) {
        rows += values.length;
        for (let i = 0; i < values.length; i++) if (typeof values[i] === "number") sum += values[i];
      }
    }
    return rows + ":" + sum + ":" + rec.streamed;
  };
  let last = signature();
  rec.log.push([Date.now(), quantity()]);
  setInterval(() => {
    const now = signature();
    if (now !== last) {
      last = now;
      rec.log.push([Date.now(), quantity()]);
    }
  }, 10);
  window.__freshness = rec;
  return sources.length;
}"""

T = TypeVar("T")
Log = list[tuple[float, float]]  # (seconds since the epoch, quantity)


def work(i: int) -> bytes:
    time.sleep(TASK_S)
    return bytes(RESULT_BYTES)


class Cluster:
    """``CLUSTER_CODE`` in a process (and process group) of its own; its pid is the scheduler's process."""

    def __init__(self, preload: bool) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CLUSTER_CODE, str(free_port()), "1" if preload else "0"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its workers join its process group, so none is left behind
        )
        found: dict[str, str] = {}
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            word, _, value = line.strip().partition(" ")
            found[word] = value
            if word == "DASHBOARD":
                break
        self.scheduler, self.dashboard_link = found.get("SCHEDULER", ""), found.get("DASHBOARD", "")
        if not (self.scheduler and self.dashboard_link.startswith(f"http://{HOST}:")):
            self.close()
            raise RuntimeError(f"the LocalCluster did not start ({found})")
        self.root = self.dashboard_link.rsplit("/", 1)[0]  # http://127.0.0.1:PORT

    def close(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(20)
        except (OSError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the group we started: leftover workers, if any
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()


def api(server: JupyterServer, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{server.url}/dashdock/api/{path}",
        method="POST" if body is not None else "GET",
        data=json.dumps(body).encode() if body is not None else None,
        headers={**AUTH, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def add_source(server: JupyterServer, dashboard_link: str, timeout: float = 90.0) -> str:
    """Register the cluster and wait until dashdock draws the three plots from its mirror."""
    source = api(server, "sources", {"url": dashboard_link})
    began = time.monotonic()
    while not set(PLOTS) <= set(source.get("drawnPlots", [])):
        if time.monotonic() - began > timeout:
            raise TimeoutError(f"dashdock draws only {source.get('drawnPlots')} after {timeout:.0f} s")
        time.sleep(0.5)
        source = api(server, f"sources/{source['id']}")
    print(f"  drawn by dashdock after {time.monotonic() - began:.1f} s: {len(source['drawnPlots'])} plots")
    return str(source["id"])


# -- figures ------------------------------------------------------------------------------------


def read_log(page: Page) -> Log:
    """A page's recorder log, its times in seconds (``Date.now()`` and ``time.time()`` share a clock)."""
    return [(t / 1000, q) for t, q in page.evaluate("() => window.__freshness.log")]


def rate(log: Log, start: float, end: float) -> float:
    return sum(start <= t <= end for t, _ in log) / (end - start)


def since(log: Log, start: float) -> Log:
    """The log from ``start`` on, beginning with the value shown at ``start``."""
    before = [entry for entry in log if entry[0] < start]
    return ([(start, before[-1][1])] if before else []) + [entry for entry in log if entry[0] >= start]


def first_at_least(log: Log, value: float) -> float | None:
    return next((t for t, q in log if q >= value - abs(value) * 1e-9), None)  # sums of seconds: as floats


def delays(dask: Log, drawn: Log) -> tuple[list[float], int]:
    """For each value Dask's page showed above its first: dashdock's first time >= it minus Dask's."""
    found, missed, top = [], 0, dask[0][1] if dask else 0.0
    for t, q in dask:
        if q <= top:
            continue
        top = q
        seen = first_at_least(drawn, q)
        if seen is None:
            missed += 1
        else:
            found.append(seen - t)
    return found, missed


def end_lag(dask: Log, drawn: Log) -> float:
    if not dask:
        return float("nan")
    final = dask[-1][1]
    shown, seen = first_at_least(dask, final), first_at_least(drawn, final)
    return seen - shown if shown is not None and seen is not None else float("nan")


# -- the bench ----------------------------------------------------------------------------------


class Bench:
    def __init__(self, cluster: Cluster, server: JupyterServer, client: Client, seconds: float) -> None:
        self.cluster, self.server, self.client = cluster, server, client
        self.tasks = round(THREADS * seconds / TASK_S)
        self.source = add_source(server, cluster.dashboard_link)
        self.thread = ThreadPoolExecutor(1)  # Client calls away from Playwright's loop in this thread
        self.figures: dict[str, dict[str, list[float]]] = {path: {} for path in PLOTS}
        self.work: dict[str, list[float]] = {}
        self.round = 0

    def call(self, fn: Callable[[], T]) -> T:
        return self.thread.submit(fn).result()

    def add(self, table_: dict[str, list[float]], name: str, value: float) -> None:
        table_.setdefault(name, []).append(value)

    def open(self, browser: Browser) -> tuple[Any, dict[str, tuple[Page, Page]]]:
        context = browser.new_context(viewport={"width": 1000, "height": 700})
        context.set_default_timeout(TIMEOUT_MS)
        login = context.new_page()
        login.goto(f"{self.server.url}/api/status?token={TOKEN}")  # the token cookie
        login.close()
        pages: dict[str, tuple[Page, Page]] = {}
        for path in PLOTS:
            dask, drawn = context.new_page(), context.new_page()
            dask.goto(f"{self.cluster.root}{path}", wait_until="commit")
            drawn.goto(f"{self.server.dashdock(self.source)}{path}", wait_until="commit")
            pages[path] = (dask, drawn)
        for path, both in pages.items():
            for page in both:  # a proxied page is the sandboxed view page it redirects to: evaluated in it
                page.wait_for_function(DRAWN_JS, polling=100, timeout=TIMEOUT_MS)
                if not page.evaluate(RECORDER_JS, PLOTS[path]):
                    raise RuntimeError(f"no ColumnDataSource in {page.url}")
        return context, pages

    def one(self, browser: Browser) -> None:
        context, pages = self.open(browser)
        try:
            time.sleep(1.0)  # the pages settle
            client, offset = self.client, self.round * self.tasks
            scheduler0, watcher0 = cpu_seconds(self.cluster.proc.pid), recorder_cpu(self.server.pid)
            start = time.time()

            def run() -> list[Any]:
                from distributed import wait

                futures = client.map(work, range(offset, offset + self.tasks), pure=False)
                wait(futures)
                return futures

            futures = self.call(run)
            end = time.time()
            scheduler1, watcher1 = cpu_seconds(self.cluster.proc.pid), recorder_cpu(self.server.pid)
            time.sleep(AFTER)
            logs = {
                path: tuple(since(read_log(page), start) for page in both) for path, both in pages.items()
            }
            self.call(lambda: client.cancel(futures))
        finally:
            context.close()
        self.add(self.work, "workload s", end - start)
        self.add(self.work, "watcher CPU s", spent(watcher0, watcher1))
        self.add(self.work, "scheduler CPU s", scheduler1 - scheduler0)
        print(
            f"  round {self.round + 1}: {self.tasks} tasks in {end - start:.1f} s, watcher "
            f"{spent(watcher0, watcher1):.2f} s CPU, scheduler {scheduler1 - scheduler0:.2f} s CPU",
            flush=True,
        )
        for path, (dask, drawn) in logs.items():
            found, missed = delays(dask, drawn)
            figures = self.figures[path]
            dask_rate, drawn_rate = rate(dask, start, end), rate(drawn, start, end)
            values = {
                "Dask changes/s": dask_rate,
                "dashdock changes/s": drawn_rate,
                "rate ratio": drawn_rate / dask_rate if dask_rate else float("nan"),
                "delay median s": median(found),
                "delay p90 s": percentile(found, 90),
                "end lag s": end_lag(dask, drawn),
                "never reached": float(missed),
                "Dask final": dask[-1][1] if dask else float("nan"),
                "dashdock final": drawn[-1][1] if drawn else float("nan"),
            }
            for name, value in values.items():
                self.add(figures, name, value)
            print(
                f"    {path:<28} Dask {dask_rate:5.1f}/s, dashdock {drawn_rate:5.1f}/s, delay median "
                f"{values['delay median s']:.3f} s p90 {values['delay p90 s']:.3f} s over {len(found)} "
                f"values ({missed} never reached), end lag {values['end lag s']:.3f} s, final "
                f"{values['Dask final']:.0f} / {values['dashdock final']:.0f}",
                flush=True,
            )

    def report(self, rounds: int) -> None:
        heading(f"{self.tasks} tasks of {TASK_S * 1000:.0f} ms per round, {rounds} rounds (medians)")
        names = list(next(iter(self.figures.values())))
        rows = [["plot", *names]]
        for path, figures in self.figures.items():
            rows.append([path, *(f"{median(figures[name]):.3g}" for name in names)])
        table(rows)
        print("  " + ", ".join(f"{name} {median(values):.2f}" for name, values in self.work.items()))
        print("  targets: delay median <= 0.3 s; Task Stream rate ratio >= 1")


def main(rounds: int, seconds: float, preload: bool, refresh: float | None = None) -> None:
    from distributed import Client
    from playwright.sync_api import sync_playwright

    began = time.perf_counter()
    heading(
        f"Drawn plots vs Dask's own pages: {rounds} rounds of ~{seconds:g} s, "
        f"cluster {'with' if preload else 'without'} dashdock's preload"
    )
    extra: tuple[str, ...] = ()
    if refresh is not None:
        print(f"  dashdock's drawn panes refreshed every {refresh:g} s (draw_key_plots_refresh)")
        extra = (f"--DashdockApp.draw_key_plots_refresh={refresh}",)
    cluster = Cluster(preload)
    try:
        with JupyterServer(with_jsp=False, extra_args=extra) as server:
            asyncio.run(server.wait_ready())
            with Client(cluster.scheduler, timeout=60) as client:
                client.gather(client.map(work, range(-40, 0), pure=False))  # warm the workers up
                bench = Bench(cluster, server, client, seconds)
                try:
                    with sync_playwright() as playwright:
                        if Path(CHROMIUM).exists():
                            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
                        else:  # the Chromium Playwright installed
                            browser = playwright.chromium.launch(args=BROWSER_ARGS)
                        try:
                            for n in range(rounds):
                                bench.round = n
                                bench.one(browser)
                        finally:
                            browser.close()
                    bench.report(rounds)
                finally:
                    bench.thread.shutdown()
            server.log_errors()
    finally:
        cluster.close()
    print(f"\n  ({time.perf_counter() - began:.0f} s in all)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Is a drawn plot as fresh as Dask's own page?")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument(
        "--seconds", type=float, default=SECONDS, help="how long the workload keeps 4 threads busy"
    )
    parser.add_argument(
        "--preload", action="store_true", help="the scheduler runs dashdock.kernel.plot_state"
    )
    parser.add_argument(
        "--refresh", type=float, default=None, help="dashdock's draw_key_plots_refresh (default: the trait's)"
    )
    options = parser.parse_args()
    main(options.rounds, options.seconds, options.preload, options.refresh)
