"""The scheduler's side of custom metrics: a plugin that samples each metric and serves it as a plot.

``dashdock.metric(client, ...)`` (metrics.py) registers ``MetricBoard`` on the client's scheduler,
pickled by value so the scheduler needs no dashdock, and hands it the metric's function. The board
samples on the scheduler's event loop, so a metric outlives the notebook that made it. Each metric
is a Bokeh application of its own, added beside Dask's plots on the scheduler's dashboard
(``/dashdock-metric-<slug>``), so a pane shows it live over a websocket like any Dask plot;
``/dashdock-metrics.json`` lists them the way ``/individual-plots.json`` lists Dask's.

A function's failure is kept and shown in its plot; it never reaches the scheduler's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import re
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin
from tornado import web
from tornado.ioloop import IOLoop, PeriodicCallback

PLUGIN_NAME = "dashdock-metrics-1"  # the number changes when the board's interface does
LISTING_PATH = "/dashdock-metrics.json"
PATH_PREFIX = "/dashdock-metric-"
MAX_ERROR_CHARS = 2000
WORKER_TIMEOUT = 10.0  # seconds a sample of all workers may take before it counts as failed
# The message dashdock's history recorder reads samples with, and the most points one answer holds.
SAMPLES_OP = "dashdock_metric_samples"
# Where the board says it is there, in the scheduler's metadata: asked for with a default, so a
# scheduler without a board answers "no" instead of logging an unknown message.
METADATA_KEY = "dashdock-metric-board"
MAX_SAMPLES_REPLY = 20_000

logger = logging.getLogger(__name__)


class _Metric:
    """One metric: what to call, how often, and its recent samples, one series per line."""

    def __init__(self, spec: dict[str, Any], slug: str) -> None:
        self.name: str = spec["name"]
        self.fn: Callable[..., Any] = spec["fn"]
        self.every: float = spec["every"]
        self.where: str = spec["where"]
        self.client: str | None = spec["client"] if spec["lifetime"] == "client" else None
        self.max_points: int = spec["max_points"]
        self.max_lines: int = spec["max_lines"]
        self.slug = slug
        self.lines: dict[str, deque[tuple[int, float, float]]] = {}  # line -> (sequence, ms, value)
        self.sequence = 0
        self.error = ""
        self.dropped_lines = 0
        self.sampling = False
        self.callback: PeriodicCallback | None = None

    @property
    def path(self) -> str:
        return PATH_PREFIX + self.slug

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "every": self.every,
            "where": self.where,
            "lifetime": "client" if self.client else "cluster",
            "error": self.error,
            "lines": sorted(self.lines),
        }

    def record(self, values: dict[str, float]) -> None:
        now = time.time() * 1000
        self.sequence += 1
        for line, value in values.items():
            series = self.lines.get(line)
            if series is None:
                if len(self.lines) >= self.max_lines:
                    self.dropped_lines += 1
                    continue
                series = self.lines[line] = deque(maxlen=self.max_points)
            series.append((self.sequence, now, value))

    def since(self, line: str, sequence: int) -> tuple[list[float], list[float]]:
        """The points of ``line`` recorded after ``sequence``, oldest first."""
        times: list[float] = []
        values: list[float] = []
        for seq, ms, value in reversed(self.lines.get(line, ())):
            if seq <= sequence:
                break
            times.append(ms)
            values.append(value)
        times.reverse()
        values.reverse()
        return times, values


def _numbers(result: Any, label: str) -> dict[str, float]:
    """A metric function's answer as lines: a number is the line ``label``, a dict one line per key
    (``"{label} {key}"``, or the key alone when there is no label)."""
    if isinstance(result, dict):
        named: dict[str, float] = {}
        for key, value in result.items():
            named.update(_numbers(value, f"{label} {key}" if label else str(key)))
        return named
    if result is None:
        return {}
    if isinstance(result, bool) or not isinstance(result, int | float):
        raise TypeError(f"it returned {type(result).__name__}, not a number or a dict of numbers")
    value = float(result)
    return {} if math.isnan(value) else {label: value}


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]


class MetricBoard(SchedulerPlugin):
    """Metrics by slug, sampled on the scheduler and each served as a Bokeh application."""

    name = PLUGIN_NAME
    idempotent = True  # a second notebook on the cluster must not replace the board and its metrics

    def __init__(self, build: Callable[[MetricBoard, str, Any], None]) -> None:
        self.build = build  # metric_plot.build: handed over so that it travels by value too
        self.metrics: dict[str, _Metric] = {}
        self._apps: dict[str, Any] = {}  # slug -> its Bokeh application (a tornado application)
        self.scheduler: Any = None
        self.prefix = "/"

    async def start(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        dask_app = next((app for app in _applications(scheduler) if hasattr(app, "app_paths")), None)
        self.prefix = "/" + (getattr(dask_app, "prefix", "") or "").strip("/")
        listing = self.prefix.rstrip("/") + LISTING_PATH
        scheduler.http_application.add_handlers(r".*", [(re.escape(listing), _Listing, {"board": self})])
        scheduler.handlers[SAMPLES_OP] = self.samples
        scheduler.set_metadata(keys=[METADATA_KEY], value=SAMPLES_OP)

    async def close(self) -> None:
        for slug in list(self.metrics):
            self.remove(slug)
        if self.scheduler is not None:
            self.scheduler.handlers.pop(SAMPLES_OP, None)
            self.scheduler.set_metadata(keys=[METADATA_KEY], value=None)

    def samples(self, comm: Any = None, since: Any = None) -> dict[str, Any]:
        """The points each metric sampled after ``since`` ({name: sequence}), for the history
        recorder, which reads them with plain msgpack: names, numbers and lists only."""
        after = since if isinstance(since, dict) else {}
        budget = MAX_SAMPLES_REPLY
        answer = []
        for metric in self.metrics.values():
            last = after.get(metric.name, 0)
            last = last if isinstance(last, int) and last <= metric.sequence else 0  # a new board
            points = (
                [
                    [line, ms, value]
                    for line, series in metric.lines.items()
                    for sequence, ms, value in series
                    if sequence > last
                ][-budget:]
                if budget > 0
                else []
            )
            budget -= len(points)
            answer.append({"name": metric.name, "sequence": metric.sequence, "points": points})
        return {"metrics": answer}

    def remove_client(self, scheduler: Any, client: str) -> None:
        for slug, metric in list(self.metrics.items()):
            if metric.client == client:
                self.remove(slug)

    def add(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Add a metric, or replace the one of the same name (a cell run again), keeping its plot."""
        slug = next((s for s, m in self.metrics.items() if m.name == spec["name"]), None)
        if slug is None:
            if len(self.metrics) >= spec["max_metrics"]:
                raise ValueError(
                    f"This scheduler has {len(self.metrics)} metrics, the most it keeps; remove one first."
                )
            slug = self._free_slug(spec["name"])
        else:
            self._stop(self.metrics[slug])
        metric = self.metrics[slug] = _Metric(spec, slug)
        if slug not in self._apps:
            self._serve(slug)
        metric.callback = PeriodicCallback(lambda: self._sample(metric), metric.every * 1000)
        metric.callback.start()
        self._sample(metric)
        return metric.describe()

    def remove(self, slug: str) -> bool:
        metric = self.metrics.pop(slug, None)
        if metric is None:
            return False
        self._stop(metric)
        app = self._apps.pop(slug, None)
        if app is not None:
            with contextlib.suppress(ValueError):
                _applications(self.scheduler).remove(app)
            app.stop()
        return True

    def describe(self) -> list[dict[str, Any]]:
        return [metric.describe() for metric in self.metrics.values()]

    def listing(self) -> dict[str, str]:
        return {metric.name: metric.path for metric in self.metrics.values()}

    def _free_slug(self, name: str) -> str:
        base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "metric"
        slug, number = base, 1
        while slug in self.metrics or slug in self._apps:
            number += 1
            slug = f"{base}-{number}"
        return slug

    def _stop(self, metric: _Metric) -> None:
        if metric.callback is not None:
            metric.callback.stop()

    def _serve(self, slug: str) -> None:
        """Add the metric's Bokeh application to the scheduler's dashboard, as Dask adds its own."""
        from distributed.dashboard.core import BokehApplication

        def document(scheduler: Any, extra: dict[str, Any], doc: Any) -> None:
            self.build(self, slug, doc)

        app = BokehApplication({PATH_PREFIX + slug: document}, self.scheduler, prefix=self.prefix)
        _applications(self.scheduler).append(app)
        app.initialize(IOLoop.current())
        app.start()
        self._apps[slug] = app

    def _sample(self, metric: _Metric) -> None:
        if self.metrics.get(metric.slug) is not metric or metric.sampling:
            return  # replaced, removed, or the last round of workers has not answered yet
        if metric.where == "workers":
            metric.sampling = True
            task = asyncio.ensure_future(self._sample_workers(metric))
            task.add_done_callback(lambda _: setattr(metric, "sampling", False))
            return
        try:
            result = metric.fn(self.scheduler)
            metric.record(_numbers(result, metric.name if not isinstance(result, dict) else ""))
            metric.error = ""
        except Exception as exc:
            metric.error = _error_text(exc)

    async def _sample_workers(self, metric: _Metric) -> None:
        from distributed.protocol import pickle

        fn = metric.fn

        def on_worker(dask_worker: Any) -> tuple[str, Any]:  # Dask passes the worker by this name
            # Failures come back as answers: raised, each would be logged by the worker every tick.
            try:
                return "OK", fn(dask_worker)
            except Exception as exc:
                return "error", f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]

        message = {"op": "run", "function": pickle.dumps(on_worker), "args": pickle.dumps(()), "wait": True}
        try:
            answers = await asyncio.wait_for(
                self.scheduler.broadcast(msg=message, on_error="return"), WORKER_TIMEOUT
            )
        except Exception as exc:
            metric.error = _error_text(exc)
            return
        values: dict[str, float] = {}
        errors: list[str] = []
        for address, answer in sorted(answers.items()):
            worker = self.scheduler.workers.get(address)
            name = worker.name if worker is not None else address
            label = f"Worker {name}" if isinstance(name, int) else str(name)  # LocalCluster's are 0, 1, ...
            try:
                if isinstance(answer, BaseException):
                    raise answer
                if answer.get("status") != "OK":
                    raise RuntimeError(str(answer.get("exception_text") or "the worker failed"))
                status, result = _plain(answer["result"])
                if status != "OK":
                    errors.append(f"{label}: {result}")
                    continue
                values.update(_numbers(result, label))
            except Exception as exc:
                errors.append(f"{label}: {_error_text(exc)}")
        metric.record(values)
        metric.error = "\n".join(errors)[:MAX_ERROR_CHARS]


class _Listing(web.RequestHandler):
    def initialize(self, board: MetricBoard) -> None:
        self.board = board

    def get(self) -> None:
        self.set_header("Content-Type", "application/json")
        self.write(json.dumps(self.board.listing()))


def _plain(result: Any) -> Any:
    """A worker's answer as sent: the scheduler relays results serialized, without reading them."""
    from distributed.protocol import Serialized, deserialize

    return deserialize(result.header, result.frames) if isinstance(result, Serialized) else result


def _applications(scheduler: Any) -> list[Any]:
    return scheduler.http_application.applications


# What a kernel runs on the scheduler (``client.run_on_scheduler``): the board by name.
def add_metric(dask_scheduler: Any, spec: dict[str, Any]) -> dict[str, Any]:
    return dask_scheduler.plugins[PLUGIN_NAME].add(spec)


def remove_metric(dask_scheduler: Any, slug: str) -> bool:
    return dask_scheduler.plugins[PLUGIN_NAME].remove(slug)


def list_metrics(dask_scheduler: Any) -> list[dict[str, Any]]:
    board = dask_scheduler.plugins.get(PLUGIN_NAME)
    return board.describe() if board is not None else []
