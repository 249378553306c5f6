"""What open live dashboard panes cost a busy Dask scheduler.

Every Dask dashboard plot page (``/individual-task-stream`` and the like) open in a browser is a Bokeh
session of its own, and each session's periodic callbacks (every 100-500 ms: gather the scheduler's
state, diff it, send it) run in the scheduler's event loop, the loop that also schedules the tasks. So
N open plots are N sessions computing in the scheduler's loop, and a workload runs slower while they are
open. This bench measures how much, and whether opening the plots through dashdock changes it.

Set-up: a real ``distributed.LocalCluster`` (processes=True, 2 workers of 1 thread, 127.0.0.1) in a
Python process of its own, whose scheduler (and the two nannies) live in that process while the workers
are its children; a Jupyter server with dashdock (``_common.JupyterServer``: token auth, isolated dirs);
one Chromium (Playwright). The plots are the scheduler's ``/individual-plots.json`` Bokeh pages, Task
Stream, Progress, Workers Memory, CPU, Occupancy, Processing, Memory by Key, Task Groups, Workers,
Cluster Memory, Bandwidth Workers and Bandwidth Types first, then the rest by path (round-robin
past the end of the list; Dask's static pages, not Bokeh sessions, are left out).

Ways of watching, N plots each:
  none      N = 0, the baseline;
  direct    each plot a page of its own in one browser context, straight from the scheduler's dashboard;
  jsp       (when jupyter-server-proxy is installed) each plot through ``{base}proxy/<host>:<port>/...``,
            as dask-labextension links them: the scheduler's own pages, relayed;
  dashdock  each plot a page of its own through ``{base}dashdock/proxy/<source id>/<plot path>`` (the
            cluster registered with ``POST dashdock/api/sources``), which redirects to a sandboxed view
            page drawing the same Bokeh plot through the Jupyter server; 30 of Dask's 32 plots (all
            but the two Profile pages, which redraw only when clicked) are drawn by
            dashdock's recorder (the watcher process, ``python -m dashdock.watcher``) from its
            one connection (``draw_key_plots``; the cluster's scheduler runs ``--preload
            dashdock.kernel.plot_state``, or with ``--plain`` it does not and the watcher installs
            its plugin itself: ``DashdockApp.install_on_url_schedulers``), no session on the
            scheduler, once the recorder has read its state (the bench waits until the source's
            ``drawnPlots`` lists the state plots, ``/individual-progress``, not only the task stream);
  load      no page: instead, processes that keep as many cores busy as the viewers of this round's
            "dashdock" N=24 did (``cpu_load.py``). A scheduler's CPU seconds grow with anything
            running beside it on two cores, so the last lines set the 24-page rows against this one.

For each round and each (way, N) in a fixed interleaved order: open the pages, wait until every one
has drawn (``Bokeh.documents[0]`` has a root: a state, not a delay), run
``client.gather(client.map(inc, range(T), pure=False))`` from a ``distributed.Client`` in this process,
timed, with the CPU seconds (``/proc/PID/stat`` utime + stime) of the cluster process (the scheduler's
own, workers excluded) and of the Jupyter server over it; then close the pages, wait until the
scheduler holds no Bokeh session any more, and let it settle a second. Closed sessions would otherwise
keep computing for Bokeh's unused-session lifetime (15 s by default); the cluster here sets it to 1 s so
the rounds do not wait that long, which changes nothing while the pages are open.

Printed: per way and N the median workload seconds, its ratio to the "none" median, median scheduler and
Jupyter server CPU seconds over the workload (the server's also as a share of one core), the CPU
seconds of dashdock's recorder process (its plot server draws dashdock's pages) and of Chromium's
processes (the browser drawing the N plots), the p99 latency of the Jupyter server's
``GET api/status`` polled every 50 ms during the workload (from a process of its own), the Bokeh
sessions open in the scheduler when it started, the 1-minute load average after it, and the RSS in MiB,
read right after the workload while the pages are still open, of the scheduler's process (the cluster
process, nannies in it, workers not), of the Jupyter server and of the recorder (the watcher process,
its plot server in it). Figures only, nothing asserted. Chromium shares the machine's cores with the
scheduler: the browser drawing N plots is part of what N open plots cost.

With ``--plain`` the cluster's scheduler is started without dashdock's preload: a plain scheduler, as
one whose dashboard URL a user pastes, which dashdock's watcher gives its plugin by itself. If its state
plots are not drawn within 60 s, the bench says so (and the heading of its table too) and goes on: its
"dashdock" rows then measure mostly the relay of the scheduler's own pages.

With ``--remote-viewers`` the pages are opened by ``remote_viewers.py`` instead of Chromium: each page
loaded and its Bokeh websocket read to the last message, nothing drawn. That stands in for browsers on
other machines (JupyterHub users' laptops): what is left is what the plots cost their servers, the
scheduler's sessions for "direct", dashdock's server and recorder for "dashdock". Its "viewer CPU" is
that process's.

With ``--no-redraw`` dashdock's drawn pages open and are watched as usual but never redraw
(``no_redraw/sitecustomize.py``, in the watcher only): its rows are then what the live reads, the
sessions and the recording cost without any drawing, the floor under every way of drawing the plots
that reads the scheduler as often. Not a way to watch: the pages show nothing.

    .venv/bin/python bench/live_panes_cost.py [tasks] [rounds] [--plain] [--remote-viewers] [--refresh S]
        [--only 8|24] [--no-redraw]
    (30000 and 2; ~10 min on 2 cores)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import psutil  # a dependency of Dask's distributed
from _common import (
    AUTH,
    HOST,
    TOKEN,
    JupyterServer,
    cpu_seconds,
    free_port,
    heading,
    median,
    ratio,
    rss_bytes,
    table,
)
from cpu_load import CpuLoad

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ui-tests"))
from lab import CHROMIUM_ARGS  # the UI tests' Chromium flags

if TYPE_CHECKING:
    from distributed import Client
    from playwright.sync_api import Browser, BrowserContext, Page

TASKS = 30_000
ROUNDS = 2
COUNTS = (8, 24)
# Interleaved, the same order every round; jupyter-server-proxy's rows only when it is installed.
ORDER: tuple[tuple[str, int], ...] = (
    ("none", 0),
    ("direct", COUNTS[0]),
    ("dashdock", COUNTS[0]),
    ("jsp", COUNTS[0]),
    ("direct", COUNTS[1]),
    ("dashdock", COUNTS[1]),
    ("load", COUNTS[1]),  # after "dashdock": as much CPU as its viewers used
    ("jsp", COUNTS[1]),
)
PREFERRED = (
    "Task Stream",
    "Progress",
    "Workers Memory",
    "CPU",
    "Occupancy",
    "Processing",
    "Memory by Key",
    "Task Groups",
    "Workers",
    "Cluster Memory",
    "Bandwidth Workers",
    "Bandwidth Types",
)
# Dask's names for some of the plots above (its JSON keys are "Individual " + the path, title-cased).
ALIASES = {"processing": "nprocessing", "task groups": "groups"}
CHROMIUM = "/usr/bin/chromium"
DRAWN_JS = "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].roots().length > 0"
TIMEOUT_MS = 120_000
SETTLE = 1.0  # seconds after the scheduler has dropped the closed pages' sessions
DRAWN_WAIT = 60.0  # seconds the bench waits for dashdock to draw the cluster's plots
MIB = 1024 * 1024
# The cluster's scheduler_kwargs: with dashdock's preload, or none (--plain).
PRELOAD = '{"preload": ["dashdock.kernel.plot_state"]}'

# The cluster process: a LocalCluster with its scheduler in this process, workers in child processes.
CLUSTER_CODE = """
import json
import sys

import dask

dask.config.set(
    {"distributed.scheduler.dashboard.bokeh-application.unused_session_lifetime_milliseconds": 1000}
)
from distributed import LocalCluster

with LocalCluster(
    n_workers=2,
    threads_per_worker=1,
    processes=True,
    host="127.0.0.1",
    dashboard_address="127.0.0.1:" + sys.argv[1],
    # With dashdock's preload (it offers the state its plots read), or none: a plain scheduler.
    scheduler_kwargs=json.loads(sys.argv[2]),
) as cluster:
    print("SCHEDULER", cluster.scheduler_address, flush=True)
    print("DASHBOARD", cluster.dashboard_link, flush=True)
    try:
        sys.stdin.read()  # until the bench closes our stdin
    except KeyboardInterrupt:
        pass
"""

T = TypeVar("T")


def inc(x: int) -> int:
    return x + 1


def bokeh_sessions(dask_scheduler: Any) -> int:
    """Run on the scheduler: its dashboard's Bokeh sessions (open pages, closed ones not yet dropped)."""
    from bokeh.server.tornado import BokehTornado

    count = 0
    for app in getattr(dask_scheduler.http_application, "applications", []):
        if isinstance(app, BokehTornado):
            count += sum(len(list(context.sessions)) for context in app._applications.values())
    return count


# -- the cluster --------------------------------------------------------------------------------


class Cluster:
    """``CLUSTER_CODE`` in a process (and process group) of its own; its pid is the scheduler's process."""

    def __init__(self, plain: bool, timeout: float = 120.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CLUSTER_CODE, str(free_port()), "{}" if plain else PRELOAD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its workers join its process group, so none is left behind
        )
        self.scheduler = self.dashboard_link = ""
        try:
            deadline = time.monotonic() + timeout
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                word, _, value = line.strip().partition(" ")
                if word == "SCHEDULER":
                    self.scheduler = value
                elif word == "DASHBOARD":
                    self.dashboard_link = value
                    break
                if time.monotonic() > deadline:
                    break
            if not (self.scheduler and self.dashboard_link.startswith(f"http://{HOST}:")):
                raise RuntimeError(
                    f"the LocalCluster did not start ({self.scheduler!r}, {self.dashboard_link!r})"
                )
        except BaseException:
            self.close()
            raise
        self.root = self.dashboard_link.rsplit("/", 1)[0]  # http://127.0.0.1:PORT

    @property
    def pid(self) -> int:
        return self.proc.pid

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


def plot_paths(dashboard_root: str) -> list[str]:
    """The Bokeh plots of ``individual-plots.json``, the preferred ones first, then by path."""
    with urllib.request.urlopen(f"{dashboard_root}/individual-plots.json", timeout=30) as response:
        document: dict[str, str] = json.loads(response.read())
    by_name: dict[str, str] = {}
    for title, path in document.items():
        if isinstance(path, str) and path.startswith("/individual-"):  # not /statics/...: no Bokeh session
            words = title.split()
            name = " ".join(words[1:] if words and words[0].lower() == "individual" else words)
            by_name.setdefault(name.lower(), path)
    ordered: list[str] = []
    for name in PREFERRED:
        key = name.lower()
        found = by_name.get(key) or by_name.get(ALIASES.get(key, ""))
        if found is not None and found not in ordered:
            ordered.append(found)
    # Dask's JSON lists the rest in an order that changes from one process to the next: sorted,
    # every run opens the same 24.
    ordered += sorted(path for path in by_name.values() if path not in ordered)
    if not ordered:
        raise RuntimeError(f"no Bokeh plot in {dashboard_root}/individual-plots.json")
    return ordered


def tree_cpu(root: int, wanted: Callable[[psutil.Process], bool]) -> dict[int, float]:
    """CPU seconds of each process below ``root`` that is ``wanted``, by pid."""
    found: dict[int, float] = {}
    with contextlib.suppress(psutil.Error):
        for process in psutil.Process(root).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if wanted(process):
                    found[process.pid] = cpu_seconds(process.pid)
    return found


def is_recorder(process: psutil.Process) -> bool:
    """dashdock's recorder: the watcher process (``python -m dashdock.watcher``, history/supervision.py)."""
    return "dashdock.watcher" in " ".join(process.cmdline())


def recorder_cpu(server_pid: int) -> dict[int, float]:
    """dashdock's recorder process (and the plot server in it): a child of the Jupyter server."""
    return tree_cpu(server_pid, is_recorder)


def rss_mib(pid: int) -> float:
    """A process's RSS in MiB; NaN when it is gone."""
    try:
        return rss_bytes(pid) / MIB
    except (psutil.Error, OSError):
        return float("nan")


def recorder_rss_mib(server_pid: int) -> float:
    """The recorder's RSS in MiB (summed, should there be more than one); NaN when there is none."""
    found: list[float] = []
    with contextlib.suppress(psutil.Error):
        for process in psutil.Process(server_pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if is_recorder(process):
                    found.append(process.memory_info().rss / MIB)
    return sum(found) if found else float("nan")


def browser_cpu() -> dict[int, float]:
    """Chromium's processes (renderers, GPU, browser): below Playwright's driver, below this one."""
    return tree_cpu(os.getpid(), lambda process: "chrom" in process.name())


def spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two ``tree_cpu`` readings (a process started between counts whole)."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def take(paths: list[str], count: int) -> list[str]:
    return [paths[i % len(paths)] for i in range(count)]


# -- the Jupyter server -------------------------------------------------------------------------


def add_source(server: JupyterServer, dashboard_link: str) -> tuple[str, bool]:
    """Registers the cluster; its source id, and whether dashdock draws its state plots (the
    watcher has read the scheduler's state) within ``DRAWN_WAIT`` seconds."""
    request = urllib.request.Request(
        f"{server.url}/dashdock/api/sources",
        method="POST",
        data=json.dumps({"url": dashboard_link}).encode(),
        headers={**AUTH, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        source: dict[str, Any] = json.loads(response.read())
    # dashdock draws the key plots from its recording (draw_key_plots) once its recorder has read
    # the scheduler's state (offered by the preload, or by the plugin the watcher installs on a plain
    # scheduler): wait for that, the task stream and a state plot both, so every round measures the
    # same thing. The task stream alone would mean the state is not read.
    wanted = ("/individual-task-stream", "/individual-progress")
    began = time.monotonic()
    deadline = began + DRAWN_WAIT
    while not all(path in source.get("drawnPlots", []) for path in wanted) and time.monotonic() < deadline:
        time.sleep(0.5)
        asked = urllib.request.Request(f"{server.url}/dashdock/api/sources/{source['id']}", headers=AUTH)
        with urllib.request.urlopen(asked, timeout=60) as response:
            source = json.loads(response.read())
    drawn_plots = source.get("drawnPlots") or []
    drawn = all(path in drawn_plots for path in wanted)
    print(
        f"  drawn by dashdock from its recording ({len(drawn_plots)} plots, "
        f"after {time.monotonic() - began:.1f} s): {drawn_plots or 'none'}"
    )
    if not drawn:
        print(
            f"  WARNING: {', '.join(wanted)} not all drawn by dashdock after {DRAWN_WAIT:.0f} s: "
            "the dashdock rows measure its relay of the scheduler's own pages"
        )
    return str(source["id"]), drawn


# -- the browser --------------------------------------------------------------------------------


def launch(playwright: Any) -> Browser:
    if Path(CHROMIUM).exists():
        browser: Browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    else:  # the Chromium Playwright installed
        browser = playwright.chromium.launch(args=CHROMIUM_ARGS)
    return browser


def open_pages(browser: Browser, urls: list[str], login: str | None) -> BrowserContext:
    """A context with a page per URL, each drawn; ``login``, if given, is visited first (token cookie)."""
    context = browser.new_context(viewport={"width": 1000, "height": 700})
    context.set_default_timeout(TIMEOUT_MS)
    if login:
        page = context.new_page()
        page.goto(login)
        page.close()
    pages: list[Page] = []
    for url in urls:
        page = context.new_page()
        page.goto(url, wait_until="commit")
        pages.append(page)
    for page in pages:
        # A proxied page is a sandboxed top-level document (the redirect's target): evaluated in it.
        page.wait_for_function(DRAWN_JS, polling=100, timeout=TIMEOUT_MS)
    return context


class BrowserViewers:
    """The pages open in Chromium, each drawn."""

    def __init__(self, browser: Browser, urls: list[str], login: str | None) -> None:
        self.context = open_pages(browser, urls, login)

    def cpu(self) -> dict[int, float]:
        return browser_cpu()

    def close(self) -> None:
        self.context.close()


class RemoteViewers:
    """The pages read by ``remote_viewers.py``, in a process of its own, each with its document."""

    def __init__(self, urls: list[str], token: str | None) -> None:
        env = dict(os.environ, DASHDOCK_BENCH_TOKEN=token) if token else None
        script = str(Path(__file__).resolve().parent / "remote_viewers.py")
        self.proc = subprocess.Popen(
            [sys.executable, script, *urls], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if line.strip() != "READY":
            self.proc.kill()
            raise RuntimeError(f"the remote viewers did not start: {line!r} (exit {self.proc.wait()})")

    def cpu(self) -> dict[int, float]:
        return {self.proc.pid: cpu_seconds(self.proc.pid)}

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        received = self.proc.stdout.read().strip()
        self.proc.wait(60)
        if "closed=0" not in received:
            print(f"  (the remote viewers: {received}: a page's websocket ended during the workload)")


# -- measuring ----------------------------------------------------------------------------------


@dataclass
class Runs:
    seconds: list[float] = field(default_factory=list)
    scheduler_cpu: list[float] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)
    recorder_cpu: list[float] = field(default_factory=list)
    browser_cpu: list[float] = field(default_factory=list)
    sessions: list[int] = field(default_factory=list)
    load: list[float] = field(default_factory=list)
    status_p99: list[float] = field(default_factory=list)
    scheduler_rss: list[float] = field(default_factory=list)  # MiB, after the workload, pages open
    server_rss: list[float] = field(default_factory=list)
    recorder_rss: list[float] = field(default_factory=list)


# The poller runs in a process of its own: in this one it would share the GIL with the Client's
# thread, which handles 30,000 results during the workload, and measure that too.
POLLER_CODE = """
import json, sys, threading, time, urllib.request

url, token = sys.argv[1], sys.argv[2]
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
latencies, due = [], time.perf_counter()
while not stop.is_set():
    asked = urllib.request.Request(url, headers={"Authorization": "token " + token})
    with urllib.request.urlopen(asked, timeout=30) as response:
        response.read()
    latencies.append(time.perf_counter() - due)  # from when it was due
    due += 0.05
    stop.wait(max(0.0, due - time.perf_counter()))
print(json.dumps(latencies))
"""


class StatusPoller:
    """``GET {base}api/status`` every 50 ms on a fixed schedule (a stall counts every poll it
    delays) in a process of its own, while the workload runs: how the Jupyter server answers."""

    def __init__(self, url: str) -> None:
        self.url = f"{url}/api/status"
        self.latencies: list[float] = []

    def __enter__(self) -> StatusPoller:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", POLLER_CODE, self.url, TOKEN],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        return self

    def __exit__(self, *_: object) -> None:
        out, _ = self._proc.communicate(input="", timeout=60)
        self.latencies = json.loads(out)

    def p99_ms(self) -> float:
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else float("nan")


class Bench:
    def __init__(
        self, cluster: Cluster, server: JupyterServer, client: Client, tasks: int, remote: bool, plain: bool
    ) -> None:
        self.remote, self.plain = remote, plain
        self.cluster, self.server, self.client, self.tasks = cluster, server, client, tasks
        self.source, self.drawn = add_source(server, cluster.dashboard_link)
        self.paths = plot_paths(cluster.root)
        # Client calls go through a thread of their own, away from Playwright's loop in this one.
        self.thread = ThreadPoolExecutor(1)
        self.runs: dict[tuple[str, int], Runs] = defaultdict(Runs)
        self.round = 0

    def call(self, fn: Callable[[], T]) -> T:
        return self.thread.submit(fn).result()

    def sessions(self) -> int:
        return self.call(lambda: int(self.client.run_on_scheduler(bokeh_sessions)))

    def wait_sessions(self, at_most: int, timeout: float = 60.0) -> int:
        deadline = time.monotonic() + timeout
        while (count := self.sessions()) > at_most:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the scheduler still holds {count} Bokeh sessions (want <= {at_most})")
            time.sleep(0.2)
        return count

    def urls(self, way: str, count: int) -> list[str]:
        paths = take(self.paths, count)
        if way == "direct":
            return [f"{self.cluster.root}{path}" for path in paths]
        if way == "jsp":  # the scheduler's own pages, relayed as dask-labextension links them
            port = int(self.cluster.root.rsplit(":", 1)[1])
            return [f"{self.server.jsp(port)}{path}" for path in paths]
        return [f"{self.server.dashdock(self.source)}{path}" for path in paths]

    def workload(self) -> float:
        client, offset = self.client, self.round * self.tasks

        def run() -> float:
            begin = time.perf_counter()
            results = client.gather(client.map(inc, range(offset, offset + self.tasks), pure=False))
            elapsed = time.perf_counter() - begin
            assert len(results) == self.tasks and results[-1] == offset + self.tasks
            return elapsed

        return self.call(run)

    def viewers(self, browser: Browser, way: str, count: int) -> BrowserViewers | RemoteViewers | CpuLoad:
        if way == "load":
            return CpuLoad(self.viewer_cores(count))
        if self.remote:
            return RemoteViewers(self.urls(way, count), TOKEN if way != "direct" else None)
        login = f"{self.server.url}/api/status?token={TOKEN}" if way != "direct" else None
        return BrowserViewers(browser, self.urls(way, count), login)

    def viewer_cores(self, count: int) -> float:
        """The cores the viewers of this round's "dashdock" run with ``count`` pages kept busy."""
        runs = self.runs["dashdock", count]
        return runs.browser_cpu[-1] / runs.seconds[-1]

    def one(self, browser: Browser, way: str, count: int) -> None:
        viewers = self.viewers(browser, way, count) if count else None
        viewer_cpu = viewers.cpu if viewers is not None else browser_cpu
        try:
            sessions = self.sessions()
            scheduler0, server0 = cpu_seconds(self.cluster.pid), cpu_seconds(self.server.pid)
            recorder0, browser0 = recorder_cpu(self.server.pid), viewer_cpu()
            with StatusPoller(self.server.url) as poller:
                elapsed = self.workload()
            scheduler1, server1 = cpu_seconds(self.cluster.pid), cpu_seconds(self.server.pid)
            recorder1, browser1 = recorder_cpu(self.server.pid), viewer_cpu()
            load = os.getloadavg()[0]
            # Memory right after the workload, the pages still open.
            scheduler_rss, server_rss = rss_mib(self.cluster.pid), rss_mib(self.server.pid)
            recorder_rss = recorder_rss_mib(self.server.pid)
        finally:
            if viewers is not None:
                viewers.close()
        runs = self.runs[way, count]
        runs.seconds.append(elapsed)
        runs.scheduler_cpu.append(scheduler1 - scheduler0)
        runs.server_cpu.append(server1 - server0)
        runs.recorder_cpu.append(spent(recorder0, recorder1))
        runs.browser_cpu.append(spent(browser0, browser1))
        runs.sessions.append(sessions)
        runs.load.append(load)
        runs.status_p99.append(poller.p99_ms())
        runs.scheduler_rss.append(scheduler_rss)
        runs.server_rss.append(server_rss)
        runs.recorder_rss.append(recorder_rss)
        print(
            f"  round {self.round + 1} {way:>8} N={count:<3} {elapsed:6.2f} s, {sessions} sessions, "
            f"scheduler {scheduler1 - scheduler0:.2f} s CPU, server {server1 - server0:.2f} s CPU, "
            f"recorder {runs.recorder_cpu[-1]:.2f} s CPU, viewers {runs.browser_cpu[-1]:.2f} s CPU, "
            f"api/status p99 {poller.p99_ms():.0f} ms, load {load:.2f}, RSS MiB scheduler "
            f"{scheduler_rss:.0f} server {server_rss:.0f} recorder {recorder_rss:.0f}",
            flush=True,
        )
        self.wait_sessions(0)
        time.sleep(SETTLE)

    def report(self) -> None:
        mode = "plain scheduler (no preload)" if self.plain else "scheduler with dashdock's preload"
        drawn = "" if self.drawn else ", its state plots NOT drawn by dashdock"
        heading(f"{self.tasks:,} tasks per workload, {self.round} rounds (medians), {mode}{drawn}")
        base = median(self.runs["none", 0].seconds)
        rows = [
            [
                "way",
                "N",
                "workload s",
                "vs none",
                "scheduler CPU s",
                "server CPU s",
                "server % core",
                "recorder CPU s",
                "viewer CPU s",
                "api/status p99 ms",
                "sessions",
                "load 1m",
                "scheduler RSS MiB",
                "server RSS MiB",
                "recorder RSS MiB",
            ]
        ]
        for way, count in sorted(set(ORDER), key=lambda key: (key[1], key[0] != "direct")):
            runs = self.runs[way, count]
            if not runs.seconds:
                continue
            shares = [cpu / seconds for cpu, seconds in zip(runs.server_cpu, runs.seconds, strict=True)]
            rows.append(
                [
                    way,
                    str(count),
                    f"{median(runs.seconds):.2f}",
                    ratio(median(runs.seconds), base),
                    f"{median(runs.scheduler_cpu):.2f}",
                    f"{median(runs.server_cpu):.2f}",
                    f"{100 * median(shares):.1f}",
                    f"{median(runs.recorder_cpu):.2f}",
                    f"{median(runs.browser_cpu):.2f}",
                    f"{median(runs.status_p99):.0f}",
                    str(round(median(runs.sessions))),
                    f"{median(runs.load):.2f}",
                    f"{median(runs.scheduler_rss):.0f}",
                    f"{median(runs.server_rss):.0f}",
                    f"{median(runs.recorder_rss):.0f}",
                ]
            )
        table(rows)
        self.report_against_load()
        self.report_every_process()
        print(f"  plots opened first: {', '.join(self.paths[: COUNTS[-1]])}")
        print(f"  ({len(self.paths)} Bokeh plots listed; past that the list is taken again from the start)")

    def report_against_load(self) -> None:
        """The scheduler's CPU with 24 pages against the same CPU load with none, round by round."""
        load = self.runs["load", COUNTS[1]].scheduler_cpu
        if not load:
            return
        for way in ("direct", "dashdock"):
            pages = self.runs[way, COUNTS[1]].scheduler_cpu
            ratios = [page / alone for page, alone in zip(pages, load, strict=False)]
            print(
                f"  scheduler CPU, {way} N={COUNTS[1]} against the same viewer load with no page, "
                f"round by round: {', '.join(f'{r:.3f}x' for r in ratios)}"
            )

    def report_every_process(self) -> None:
        """What watching costs in all: the CPU of the scheduler, the Jupyter server and dashdock's
        watcher together, with N pages against none, round by round (the viewers' own CPU apart)."""
        none = self.runs["none", 0]
        base = [sum(cpu) for cpu in zip(none.scheduler_cpu, none.server_cpu, none.recorder_cpu, strict=True)]
        for way, count in ORDER:
            runs = self.runs[way, count]
            if not count or not runs.seconds:
                continue
            totals = [
                sum(cpu) for cpu in zip(runs.scheduler_cpu, runs.server_cpu, runs.recorder_cpu, strict=True)
            ]
            ratios = [total / alone for total, alone in zip(totals, base, strict=False)]
            print(
                f"  scheduler + server + watcher CPU, {way} N={count} against none, round by round: "
                f"{', '.join(f'{total:.1f} s ({r:.2f}x)' for total, r in zip(totals, ratios, strict=False))}"
            )


def main(
    tasks: int,
    rounds: int,
    remote: bool,
    plain: bool,
    refresh: float | None,
    only: int | None = None,
    no_redraw: bool = False,
) -> None:
    from distributed import Client
    from playwright.sync_api import sync_playwright

    began = time.perf_counter()
    mode = "plain scheduler, no preload" if plain else "scheduler with --preload dashdock.kernel.plot_state"
    heading(
        f"Open live plot pages vs a busy scheduler ({mode}): "
        f"{tasks:,} tasks x {rounds} rounds, N in (0, {only or '8, 24'})"
    )
    if remote:
        print("  viewers: remote_viewers.py, every message read, nothing drawn (browsers elsewhere)")
    cluster = Cluster(plain)
    try:
        extra = (f"--DashdockApp.draw_key_plots_refresh={refresh}",) if refresh is not None else ()
        if refresh is not None:
            print(f"  dashdock's drawn panes refreshed every {refresh:g} s (draw_key_plots_refresh)")
        env = {}
        if no_redraw:
            print("  dashdock's drawn pages never redraw (no_redraw/sitecustomize.py): its reads alone")
            env["PYTHONPATH"] = os.pathsep.join(
                [str(Path(__file__).resolve().parent / "no_redraw"), os.environ.get("PYTHONPATH", "")]
            )
        with JupyterServer(extra_args=extra, extra_env=env) as server:
            if not server.with_jsp:
                print("  jupyter-server-proxy is not installed: its rows are left out")
            asyncio.run(server.wait_ready())
            with Client(cluster.scheduler, timeout=60) as client:
                bench = Bench(cluster, server, client, tasks, remote, plain)
                try:
                    client.gather(client.map(inc, range(200), pure=False))  # warm the workers up
                    with sync_playwright() as playwright:
                        browser = launch(playwright)
                        try:
                            # Warm the browser's cache for both ways, outside the figures.
                            open_pages(browser, bench.urls("direct", 1), None).close()
                            login = f"{server.url}/api/status?token={TOKEN}"
                            open_pages(browser, bench.urls("dashdock", 1), login).close()
                            bench.wait_sessions(0)
                            for n in range(rounds):
                                bench.round = n
                                for way, count in ORDER:
                                    if count not in (0, only or count):
                                        continue
                                    if way != "jsp" or server.with_jsp:
                                        bench.one(browser, way, count)
                            bench.round = rounds
                        finally:
                            browser.close()
                    bench.report()
                finally:
                    bench.thread.shutdown()
            server.log_errors()
    finally:
        cluster.close()
    print(f"\n  ({time.perf_counter() - began:.0f} s in all)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="What open live dashboard panes cost a busy scheduler.")
    parser.add_argument("tasks", type=int, nargs="?", default=TASKS)
    parser.add_argument("rounds", type=int, nargs="?", default=ROUNDS)
    parser.add_argument("--remote-viewers", action="store_true", help="read the pages, draw nothing")
    parser.add_argument(
        "--refresh", type=float, default=None, help="dashdock's draw_key_plots_refresh (default: the trait's)"
    )
    parser.add_argument(
        "--plain", action="store_true", help="start the scheduler without dashdock's preload (a plain one)"
    )
    parser.add_argument(
        "--only", type=int, choices=COUNTS, default=None, help="the rows with this many pages (and none)"
    )
    parser.add_argument(
        "--no-redraw",
        action="store_true",
        help="dashdock's drawn pages never redraw: what its reads cost alone (a floor, not a way to watch)",
    )
    options = parser.parse_args()
    main(
        options.tasks,
        options.rounds,
        options.remote_viewers,
        options.plain,
        options.refresh,
        options.only,
        options.no_redraw,
    )
