"""``{base_url}dashdock/api/history``: recorded runs, their exports, and recording on or off per source."""

from __future__ import annotations

import math
import re
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from typing import IO

from jupyter_server.auth.decorator import authorized
from tornado import web

from dashdock.errors import Invalid
from dashdock.history.model import Run
from dashdock.history.parquet import metrics_parquet, tasks_parquet
from dashdock.history.report import html_report
from dashdock.history.service import HistoryService
from dashdock.history.store import HistoryStore
from dashdock.history.trace import chrome_trace
from dashdock.http import DEFAULT_MAX_BODY, SOURCE_ID_ARG, ApiHandler

# The report is our own page, but it shows task keys and exception texts that any code could
# have chosen: it gets the sandbox proxied pages get, so nothing in it can act as the user.
REPORT_POLICY = "sandbox allow-scripts; frame-ancestors 'self'"
_UNSAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")
# A run's id, or a source's id for its newest run (what a live run is known by).
RUN_ID_ARG = r"(?P<run_id>[^/]{1,100})"
CHUNK = 64 * 1024
# A Parquet file is written whole before it is sent (its footer comes last): in memory up to this,
# on disk beyond.
_SPOOL_IN_MEMORY = 8 * 1024 * 1024
# Writes one Parquet export of a run's window into a file.
ParquetWriter = Callable[[HistoryStore, str, float | None, float | None, IO[bytes]], None]


def _parquet_chunks(
    store: HistoryStore,
    run_id: str,
    start: float | None,
    end: float | None,
    write: ParquetWriter = tasks_parquet,
) -> Iterator[bytes]:
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY) as spool:
        write(store, run_id, start, end, spool)
        spool.seek(0)
        while chunk := spool.read(CHUNK):
            yield chunk


class HistoryAPIHandler(ApiHandler):
    def initialize(self, history: HistoryService, max_body: int = DEFAULT_MAX_BODY) -> None:
        super().initialize(max_body)
        self.history = history

    def window(self) -> tuple[float | None, float | None]:
        """The ``start`` and ``end`` query arguments (Unix seconds), either may be left out."""
        bounds: list[float | None] = []
        for name in ("start", "end"):
            text = self.get_query_argument(name, "")
            if not text:
                bounds.append(None)
                continue
            try:
                value = float(text)
            except ValueError:
                raise Invalid(f"'{name}' must be a time in Unix seconds.") from None
            if not math.isfinite(value):
                raise Invalid(f"'{name}' must be a time in Unix seconds.")
            bounds.append(value)
        start, end = bounds
        if start is not None and end is not None and end < start:
            raise Invalid("'end' must not be before 'start'.")
        return start, end

    def described(self, run: Run, newest: bool) -> dict[str, object]:
        """A run as the API shows it; the newest run of a source says what went wrong recording it."""
        problem = (self.history.problem_of(run.source) if newest else None) or self.history.problem_of_run(
            run.id
        )
        return {**run.to_json(), "problem": problem} if problem else run.to_json()

    def attachment(self, run: Run, suffix: str) -> None:
        name = _UNSAFE_FILENAME.sub("-", run.name).strip("-") or "run"
        self.set_header("Content-Disposition", f'attachment; filename="dashdock-{name}-{suffix}"')

    async def send_chunks(self, chunks: AsyncIterator[bytes]) -> None:
        async for chunk in chunks:
            self.write(chunk)
            await self.flush()
        self.finish()


class RunsHandler(HistoryAPIHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        runs = sorted(await self.history.runs(), key=lambda r: r.start)
        newest = {run.source: run.id for run in runs}  # a source's problem is shown on its newest run
        self.finish_json(
            {
                "runs": [self.described(run, newest[run.source] == run.id) for run in runs],
                "problem": self.history.problem,  # e.g. a recorder that kept dying; None when well
            }
        )


class RunHandler(HistoryAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        run = await self.history.find(run_id)
        self.finish_json({**self.described(run, True), "recording": self.history.is_recording(run.source)})

    @web.authenticated
    @authorized
    async def delete(self, run_id: str) -> None:
        await self.history.delete(run_id)
        self.set_status(204)
        self.finish()


class RecordingHandler(HistoryAPIHandler):
    """``PUT .../history/{source id}/recording`` ``{"enabled": bool}``: the sidebar's switch."""

    @web.authenticated
    @authorized
    async def put(self, source_id: str) -> None:
        enabled = self.read_json_body().get("enabled")
        if not isinstance(enabled, bool):
            raise Invalid("'enabled' must be true or false.")
        await self.history.set_recording(source_id, enabled)
        self.finish_json({"source": source_id, "recording": self.history.is_recording(source_id)})


class TraceHandler(HistoryAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        run = await self.history.find(run_id)
        start, end = self.window()
        self.set_header("Content-Type", "application/json")
        self.attachment(run, "trace.json")
        await self.send_chunks(self.history.stream(lambda store: chrome_trace(store, run.id, start, end)))


class ParquetHandler(HistoryAPIHandler):
    """A table of the run's window as Parquet: its tasks, or its custom metric samples."""

    def initialize(
        self,
        history: HistoryService,
        max_body: int = DEFAULT_MAX_BODY,
        write: ParquetWriter = tasks_parquet,
        name: str = "tasks.parquet",
    ) -> None:
        super().initialize(history, max_body)
        self._write, self._name = write, name

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        run = await self.history.find(run_id)
        start, end = self.window()
        write = self._write
        self.set_header("Content-Type", "application/vnd.apache.parquet")
        self.attachment(run, self._name)
        await self.send_chunks(
            self.history.stream(lambda store: _parquet_chunks(store, run.id, start, end, write))
        )


# HTML put first in a report (the app hands in the diagnosis's findings; history cannot import it).
ReportPreface = Callable[[HistoryStore, Run, float | None, float | None], str]


class ReportHandler(HistoryAPIHandler):
    def initialize(  # type: ignore[override]
        self, history: HistoryService, max_body: int, preface: ReportPreface | None = None
    ) -> None:
        super().initialize(history, max_body)
        self.preface = preface

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        run = await self.history.find(run_id)
        start, end = self.window()
        preface = self.preface
        # Encoded in the worker thread too, and sent in chunks: a report of a big run is megabytes,
        # which finished whole would be encoded, hashed for an ETag and written on the event loop
        # (40-50 ms for 6 MB).
        page = await self.history.read(
            lambda store: html_report(
                store, run.id, start, end, preface=preface(store, run, start, end) if preface else ""
            ).encode()
        )
        self.set_header("Content-Security-Policy", REPORT_POLICY)
        # Jupyter's APIHandler would call any finished body JSON.
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        if self.get_query_argument("download", ""):
            self.attachment(run, "report.html")
        for offset in range(0, len(page), CHUNK):
            self.write(page[offset : offset + CHUNK])
            await self.flush()
        self.finish(set_content_type="text/html; charset=UTF-8")


def routes(
    history: HistoryService, max_body: int, report_preface: ReportPreface | None = None
) -> list[tuple[str, type[ApiHandler], dict[str, object]]]:
    services = {"history": history, "max_body": max_body}
    run = rf"/dashdock/api/history/{RUN_ID_ARG}"
    return [
        (r"/dashdock/api/history", RunsHandler, services),
        (run, RunHandler, services),
        (rf"/dashdock/api/history/{SOURCE_ID_ARG}/recording", RecordingHandler, services),
        (run + "/trace", TraceHandler, services),
        (
            run + "/tasks.parquet",
            ParquetHandler,
            {**services, "write": tasks_parquet, "name": "tasks.parquet"},
        ),
        (
            run + "/metrics.parquet",
            ParquetHandler,
            {**services, "write": metrics_parquet, "name": "metrics.parquet"},
        ),
        (run + "/report", ReportHandler, {**services, "preface": report_preface}),
    ]
