"""Per-cell accounting in a kernel: each cell's Dask work, counted exactly and shown under it.

Once the kernel has a Dask client, every cell runs inside ``dask.annotate(dashdock_cell=<id>)``
(and a Dask span named after the cell, for Dask's own plots), opened and closed by IPython's
``pre_run_cell``/``post_run_cell`` hooks. The scheduler's ``CellLedger`` (``ledger.py``) counts
the tasks so tagged. A thread here asks it, at most twice a second while a cell has work under
way, and shows the answer under the cell as a display output that it updates.

Why the output needs the server too: JupyterLab takes display updates only while the cell that
made the output is executing. A cell whose futures finish after it ended is followed by the
Lab's strip itself, which reads this kernel's latest reports from a file the server serves
(``<clients dir>/<kernel id>.cells``). nbconvert takes updates by display id from whichever cell
runs, so an update sent while a later cell runs reaches it too.

Limits, on purpose: annotations are a context variable, so tasks submitted from a thread the
cell started are not the cell's; the cell that creates the first client is not counted (the
hooks exist from the next cell on); an asynchronous client's cell shows only work seen before
the cell ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import json
import logging
import os
import threading
import time
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any

from . import cellstrip, fine_metrics, ledger, plot_state, quiet_annotations
from .files import write_atomically
from .protocol import CELL_STRIPS_VARIABLE, cells_file_name

logger = logging.getLogger("dashdock")

UPDATE_SECONDS = 0.5  # at most two updates a second per cell, whatever the number of tasks
ANSWER_TIMEOUT = 2.0  # a scheduler that does not answer within this is asked again later
SCHEDULER_TIMEOUT = 10.0  # for any call dashdock makes on a scheduler (installing the ledger)
END_WAIT = 2.0  # how long a cell's end waits for the scheduler to take in what it submitted
KEPT_CELLS = 50  # reports kept in the file the Lab reads


class _Cell:
    __slots__ = ("context", "id", "label", "messages", "report", "running", "sent", "shown")

    def __init__(self, label: str) -> None:
        self.id = uuid.uuid4().hex
        self.label = label
        self.context: contextvars.Context | None = None  # the cell's own, for output while it runs
        self.running = True
        self.shown = False
        self.report: dict[str, Any] | None = None
        self.sent = 0.0  # monotonic time of the last output sent
        self.messages = 0  # messages the clients had sent to their schedulers when the cell began

    @property
    def settled(self) -> bool:
        return self.report is not None and bool(self.report["settled"])


class CellAccounting:
    """One per kernel; ``install`` registers it with IPython and with each new client."""

    def __init__(self, shell: Any, kernel_id: str | None, directory: Path | None) -> None:
        self._shell = shell
        self._meta_base = {"kernel_id": kernel_id}
        self._file = directory / cells_file_name(kernel_id) if directory and kernel_id else None
        self.enabled = os.environ.get(CELL_STRIPS_VARIABLE, "1") != "0"
        self._lock = threading.Lock()
        self._publishing = threading.Lock()  # the cell's end and the thread: one output per cell
        self._clients: dict[str, Any] = {}  # client id -> client whose scheduler has the ledger
        self._dashboards: dict[str, str] = {}  # client id -> its dashboard, for the Lab's buttons
        self._ledger_streams: dict[str, Any] = {}  # client id -> the stream its ledger was installed over
        self._cells: OrderedDict[str, _Cell] = OrderedDict()  # followed: running or unsettled
        self._kept: OrderedDict[str, dict[str, Any]] = OrderedDict()  # what the file holds
        self._current: _Cell | None = None
        self._scope: contextlib.ExitStack | None = None
        self._questions = itertools.count()
        self._questions_sent = 0
        self._answers: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        shell.events.register("pre_run_cell", self.pre_run_cell)
        shell.events.register("post_run_cell", self.post_run_cell)

    # -- clients (called by the preload on the client's event loop) ------------------------------

    async def add_client(self, client: Any, dashboard: str | None) -> None:
        if not await self._install_ledger(client):
            return
        client.subscribe_topic(ledger.ANSWER_TOPIC, self._on_answer)
        with self._lock:
            self._clients[client.id] = client
            if dashboard:
                self._dashboards[client.id] = dashboard

    async def _install_ledger(self, client: Any, again: bool = False) -> bool:
        """The ledger on the client's scheduler; idempotent, so kernels sharing one share it.

        ``again``: the client reconnected, to a scheduler that may be a new one (restarted on the
        same address), which also gets its task stream started, as the preload does for a new
        client, so the history has this scheduler's first tasks. Every call on the scheduler is
        bounded by ``SCHEDULER_TIMEOUT``: a scheduler that accepts but never answers costs a cell
        that long, once."""
        import cloudpickle

        # The scheduler need not have dashdock: the ledger and what it uses travel by value.
        cloudpickle.register_pickle_by_value(ledger)
        cloudpickle.register_pickle_by_value(fine_metrics)
        cloudpickle.register_pickle_by_value(plot_state)
        stream = client.scheduler_comm
        try:
            await asyncio.wait_for(
                client.scheduler.register_scheduler_plugin(
                    plugin=cloudpickle.dumps(ledger.CellLedger()), name=ledger.PLUGIN_NAME, idempotent=True
                ),
                SCHEDULER_TIMEOUT,
            )
        except Exception as exc:  # e.g. a scheduler that refuses pickled plugins, or a gone one
            logger.info("dashdock: no per-cell accounting with %s: %r", client.scheduler.address, exc)
            return False
        if again:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.scheduler.get_task_stream_index(), SCHEDULER_TIMEOUT)
        self._ledger_streams[client.id] = stream
        return True

    def _ledger_ready(self, client: Any, timeout: float = ANSWER_TIMEOUT, reconnecting: bool = False) -> bool:
        """Whether the scheduler at the other end of the client's stream has the ledger.

        A question on a stream whose scheduler lacks the ledger's handler would make Dask close
        the client's connection, so a client that reconnected (a restarted scheduler) gets the
        ledger installed again before it is asked anything; and before a cell starts (see
        ``pre_run_cell``), so the new scheduler counts the cell's tasks from its first graph.
        Waits at most ``timeout``; with ``reconnecting``, up to ``ANSWER_TIMEOUT`` of it for a
        reconnecting client to be connected (at a cell's start: else its graph gets there first)."""

        def installed() -> bool:
            stream = client.scheduler_comm
            return stream is not None and stream is self._ledger_streams.get(client.id)

        if installed():
            return True
        deadline = time.monotonic() + timeout
        connected_by = time.monotonic() + min(timeout, ANSWER_TIMEOUT)  # a scheduler that is down
        while client.status == "connecting" and reconnecting and time.monotonic() < connected_by:
            time.sleep(0.05)  # a cell that starts while the client reconnects: its graph waits too
        if client.status != "running" or client.scheduler_comm is None:
            return False  # reconnecting (or closed): nothing to install on yet
        timeout = max(0.1, deadline - time.monotonic())
        try:
            installing = self._install_ledger(client, again=True)
            asyncio.run_coroutine_threadsafe(installing, client.loop.asyncio_loop).result(timeout)
        except Exception:
            return False
        return installed()

    def remove_client(self, client: Any) -> None:
        with self._lock:
            self._clients.pop(client.id, None)
            self._dashboards.pop(client.id, None)

    # -- IPython's hooks (main thread) ---------------------------------------------------------------

    def pre_run_cell(self, info: Any = None) -> None:
        if not self.enabled or not self._clients or self._current is not None:
            return
        import dask
        from distributed import span

        # A client that reconnected since the last cell (a scheduler restarted on its address)
        # gets the ledger on its new scheduler before this cell can submit anything to it.
        for client in list(self._clients.values()):
            if not client.asynchronous:
                self._ledger_ready(client, SCHEDULER_TIMEOUT, reconnecting=True)  # once per reconnect
        cell = _Cell(f"[{_execution_count(self._shell, info)}]")
        scope = contextlib.ExitStack()
        if quiet_annotations.warning_armed() is not False:  # it would name the tag (quiet_annotations.py)
            scope.callback(quiet_annotations.rearm_warning)
        scope.enter_context(dask.annotate(**{ledger.ANNOTATION: cell.id}))
        scope.enter_context(span(f"cell {cell.label}"))
        cell.context = contextvars.copy_context()
        cell.messages = self._messages_sent()
        self._current, self._scope = cell, scope
        with self._lock:
            self._cells[cell.id] = cell
        self._ensure_thread()
        self._wake.set()  # the thread takes its first look UPDATE_SECONDS from now

    def post_run_cell(self, result: Any = None) -> None:
        cell, scope = self._current, self._scope
        self._current = self._scope = None
        if cell is None or scope is None:
            return
        with contextlib.suppress(Exception):
            scope.close()
        count = getattr(result, "execution_count", None)
        if isinstance(count, int):
            cell.label = f"[{count}]"
        cell.running = False
        if cell.shown or self._messages_sent(settle=True) != cell.messages:
            # The cell's last submissions may still be on their way: ask behind them, and wait.
            answer = self._ask([cell.id], END_WAIT, synchronous=True)
            self._take(cell, answer.get(cell.id), in_cell=True)
        if cell.shown:
            self._write_file()  # before the Lab's strip first asks the server about this cell
        else:
            with self._lock:
                self._cells.pop(cell.id, None)

    # -- asking the schedulers -------------------------------------------------------------------

    def _messages_sent(self, settle: bool = False) -> int:
        """How many messages the clients have sent their schedulers, besides our questions (a
        cell that sent none submitted nothing, and its end costs no question)."""
        total = -self._questions_sent
        for client in list(self._clients.values()):
            if settle and not client.asynchronous:
                # Submissions reach the stream by callbacks on the client's loop: let those queued
                # so far run (the loop runs callbacks in order), a thread hop rather than a sync.
                landed = threading.Event()
                with contextlib.suppress(Exception):
                    client.loop.add_callback(landed.set)
                    landed.wait(END_WAIT)
            total += getattr(getattr(client, "scheduler_comm", None), "message_count", 1)
        return total

    def _ask(self, ids: list[str], timeout: float, synchronous: bool = False) -> dict[str, dict[str, Any]]:
        """The best report of each cell from every scheduler that answers within ``timeout``."""
        clients = [c for c in list(self._clients.values()) if not (synchronous and c.asynchronous)]
        clients = [c for c in clients if self._ledger_ready(c)]
        pending = []
        for client in clients:
            question = next(self._questions)
            waiter: tuple[threading.Event, list[dict[str, Any]]] = (threading.Event(), [])
            self._answers[question] = waiter
            try:
                client._send_to_scheduler({"op": ledger.ASK_OP, "ids": ids, "question": question})
                with self._lock:
                    self._questions_sent += 1
            except Exception:  # a closed client: it is removed by its teardown
                self._answers.pop(question, None)
                continue
            pending.append((question, waiter))
        deadline = time.monotonic() + timeout
        reports: dict[str, dict[str, Any]] = {}
        for question, (event, answer) in pending:
            event.wait(max(0.0, deadline - time.monotonic()))
            self._answers.pop(question, None)
            for cell_id, report in (answer[0].get("cells", {}) if answer else {}).items():
                if cell_id not in reports or report["tasks"] > reports[cell_id]["tasks"]:
                    reports[cell_id] = report
        return reports

    def _on_answer(self, event: Any) -> None:
        """On a client's loop: an answer to one of our questions."""
        with contextlib.suppress(Exception):
            _, payload = event
            waiter = self._answers.get(payload["question"])
            if waiter is not None:
                waiter[1].append(payload)
                waiter[0].set()

    # -- following cells (the accounting thread) ---------------------------------------------------

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._follow, name="dashdock-cells", daemon=True)
            self._thread.start()

    def _follow(self) -> None:
        while True:
            if not self._cells:
                self._wake.wait()
                self._wake.clear()
            # The first look comes this long into a cell, so a short cell costs no question.
            time.sleep(UPDATE_SECONDS)
            with self._lock:
                cells = list(self._cells.values())
            if not cells:
                continue
            try:
                reports = self._ask([cell.id for cell in cells], ANSWER_TIMEOUT)
                for cell in cells:
                    self._take(cell, reports.get(cell.id), in_cell=False)
                self._write_file()
            except Exception:  # one bad answer must not end the accounting for the kernel's life
                logger.exception("dashdock: following cells failed")

    def _take(self, cell: _Cell, report: dict[str, Any] | None, in_cell: bool) -> None:
        if report is None or report["tasks"] == 0:
            return
        with self._publishing:
            self._take_locked(cell, report, in_cell)

    def _take_locked(self, cell: _Cell, report: dict[str, Any], in_cell: bool) -> None:
        first = not cell.shown
        finished = report["settled"] and not cell.settled
        cell.report = report
        if first and not (cell.running or in_cell):
            return  # too late for an output of its own: the cell has ended
        if first or finished or time.monotonic() - cell.sent >= UPDATE_SECONDS:
            output = cellstrip.bundle(self._meta(cell), report)
            if in_cell or not cell.running or cell.context is None:
                # In the cell's thread; or after its end, as part of whatever runs now (see above).
                self._publish(cell, output, update=not first)
            else:
                cell.context.run(self._publish, cell, output, not first)
        with self._lock:
            self._kept[cell.id] = {"label": cell.label, "report": report}
            self._kept.move_to_end(cell.id)
            while len(self._kept) > KEPT_CELLS:
                self._kept.popitem(last=False)
            if cell.settled and not cell.running:
                self._cells.pop(cell.id, None)

    def _publish(self, cell: _Cell, output: dict[str, Any], update: bool) -> None:
        from IPython.display import display

        display(output, raw=True, display_id=cell.id, update=update)
        cell.shown = True
        cell.sent = time.monotonic()

    def _meta(self, cell: _Cell) -> dict[str, Any]:
        dashboards = list(self._dashboards.values())
        return {
            **self._meta_base,
            "cell_id": cell.id,
            "label": cell.label,
            "span": f"cell {cell.label}",
            "dashboard": dashboards[0] if dashboards else None,
        }

    def _write_file(self) -> None:
        if self._file is None:
            return
        with self._lock:
            document = {"kernel_id": self._meta_base["kernel_id"], "cells": dict(self._kept)}
        with contextlib.suppress(OSError):
            write_atomically(self._file, json.dumps(document).encode())

    def forget_file(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.unlink()


def _execution_count(shell: Any, info: Any) -> int:
    """The cell's In [n] as ``pre_run_cell`` sees it: IPython 9 counts the cell before the hook,
    older IPythons after it (``post_run_cell`` gets the exact number either way)."""
    import IPython

    counted_before = IPython.version_info >= (9,) and getattr(info, "store_history", True)
    return int(shell.execution_count) - (1 if counted_before else 0)


_accounting: CellAccounting | None = None


def accounting(shell: Any, kernel_id: str | None, directory: Path | None) -> CellAccounting:
    """This kernel's accounting, made on its first client."""
    global _accounting
    if _accounting is None:
        quiet_annotations.ignore_dashdock_annotation_warning()
        _accounting = CellAccounting(shell, kernel_id, directory)
    return _accounting


def current() -> CellAccounting | None:
    return _accounting


def cell_strips(enabled: bool = True) -> None:
    """Show (or stop showing) what each cell computed with Dask, under the cell, in this kernel.

    The server's ``DashdockApp.cell_strips`` setting decides for every kernel it starts; this
    decides for the notebook it runs in, from the next cell on.
    """
    os.environ[CELL_STRIPS_VARIABLE] = "1" if enabled else "0"  # for an accounting made later
    if _accounting is not None:
        _accounting.enabled = bool(enabled)
