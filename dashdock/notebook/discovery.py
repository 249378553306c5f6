"""Dask clients that kernels of this server reported: each becomes a source named after its notebook.

Kernels write one small file per client into a directory this server owns (see
``dashdock.kernel.hooks``). A scan every two seconds turns the files into sources:

- a kernel's newest client gets the kernel's own source id, so when a notebook replaces its
  cluster (a new LocalCluster on another port) the open panes of that source follow it;
- other clients of the same kernel on other dashboards get sources of their own;
- a dashboard that already has a source (added by URL, a managed cluster) gets no second one:
  when it is the kernel's newest client, the kernel takes that source over (it keeps its id and
  kind) and moves it to the notebook's next cluster, as it would its own;
- the kernel's own source id goes to its newest client that has no other source, so a newer
  client on another source's dashboard does not take it from an older one;
- files of kernels that are gone (shut down, killed) are removed with their sources.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dashdock.ids import derived_source_id
from dashdock.kernel.protocol import (
    CELLS_SUFFIX,
    MAX_RECORD_BYTES,
    PUBLISHED_CLIENT_ID,
    RECORD_SUFFIX,
    valid_record,
)
from dashdock.notebook.environment import private_runtime_dir
from dashdock.notebook.sessions import live_kernels, notebook_names
from dashdock.sources.model import Source
from dashdock.sources.registry import SourceRegistry
from dashdock.targets import (
    Allowlist,
    TargetError,
    parse_dashboard_url,
    parse_target_segment,
    without_userinfo,
)

KIND = "kernel"
SCAN_INTERVAL = 2.0


@dataclass(frozen=True)
class ClientRecord:
    kernel_id: str
    client_id: str
    dashboard: str  # normalised dashboard root URL
    started: float
    path: Path
    scheduler: str | None = None  # tcp:// address, when the kernel reported one
    flavour: str = "dask"  # "bokeh": the kernel's published plots (dashdock.publish)


def kernel_source_id(kernel_id: str, dashboard: str | None = None) -> str:
    key = f"kernel:{kernel_id}" + (f":{dashboard}" if dashboard else "")
    return derived_source_id(key)


class KernelClients:
    @classmethod
    def of_server(
        cls, serverapp: Any, registry: SourceRegistry, allowlist: Allowlist, log: logging.Logger
    ) -> KernelClients:
        """Clients of the server's kernels, reported into a private directory of its own."""
        directory = Path(tempfile.mkdtemp(prefix="dashdock-clients-", dir=private_runtime_dir()))
        return cls(
            directory,
            registry,
            allowlist,
            lambda: live_kernels(serverapp),
            lambda: notebook_names(serverapp),
            log,
        )

    def __init__(
        self,
        directory: Path,
        registry: SourceRegistry,
        allowlist: Allowlist,
        live_kernels: Callable[[], Iterable[str]],
        notebook_names: Callable[[], Awaitable[dict[str, str]]],
        log: logging.Logger,
    ) -> None:
        self.directory = directory
        self._registry = registry
        self._allowlist = allowlist
        self._live_kernels = live_kernels
        self._notebook_names = notebook_names
        self._log = log
        self._task: asyncio.Task[None] | None = None
        self._refused: set[str] = set()  # dashboards already logged as not allowed
        self.clients: dict[str, tuple[ClientRecord, str | None]] = {}  # client id -> record, source id
        self._taken: dict[str, str] = {}  # kernel id -> the source of another kind it took over

    def start(self) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._task = asyncio.ensure_future(self._scan_forever())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await asyncio.to_thread(shutil.rmtree, self.directory, True)

    async def _scan_forever(self) -> None:
        while True:
            try:
                await self.scan()
            except Exception:  # one bad scan must not end discovery for the server's life
                self._log.exception("dashdock: scanning kernel clients failed")
            await asyncio.sleep(SCAN_INTERVAL)

    async def scan(self) -> None:
        records, cells_files = await asyncio.to_thread(_read_directory, self.directory)
        live = set(self._live_kernels())
        gone = [record.path for record in records if record.kernel_id not in live]
        gone += [path for path in cells_files if path.name.removesuffix(CELLS_SUFFIX) not in live]
        if gone:
            await asyncio.to_thread(_remove, gone)
        records = [record for record in records if record.kernel_id in live]
        names = await self._notebook_names() if records else {}
        self._apply(records, names)

    def _apply(self, records: list[ClientRecord], names: dict[str, str]) -> None:
        by_kernel: dict[str, list[ClientRecord]] = {}
        for record in sorted(records, key=lambda r: r.started, reverse=True):
            by_kernel.setdefault(record.kernel_id, []).append(record)

        others = {s.dashboard.url: s.id for s in self._registry.list() if s.kind != KIND}
        known = {s.id for s in self._registry.list()}
        taken = {k: v for k, v in self._taken.items() if k in by_kernel and v in known}
        wanted: dict[str, tuple[str, str, str]] = {}  # source id -> (name, dashboard, flavour)
        clients: dict[str, tuple[ClientRecord, str | None]] = {}
        for kernel_id, kernel_records in by_kernel.items():
            name = names.get(kernel_id) or f"kernel {kernel_id[:8]}"
            for record in kernel_records:
                # Published plots: a source of their own, whatever clients the kernel has.
                if record.flavour == "bokeh" and self._allowed(record.dashboard):
                    published = kernel_source_id(kernel_id, PUBLISHED_CLIENT_ID)
                    wanted[published] = (f"{name} (published)", record.dashboard, "bokeh")
            kernel_records = [record for record in kernel_records if record.flavour == "dask"]
            # The kernel's main source: its own, or one of another kind it took over (its newest
            # client connected to a dashboard that already had a source), which then follows the
            # notebook's next cluster as its own would.
            main = taken.get(kernel_id) or kernel_source_id(kernel_id)
            main_used = False
            for position, record in enumerate(kernel_records):
                source_id: str | None
                if record.dashboard in others:
                    source_id = others[record.dashboard]
                    if position == 0:
                        taken[kernel_id] = source_id
                        main_used = main_used or source_id == main
                elif not self._allowed(record.dashboard):
                    source_id = None
                else:
                    first = not main_used
                    source_id = main if first else kernel_source_id(kernel_id, record.dashboard)
                    main_used = True
                    label = name if first else f"{name} ({record.dashboard.split('//', 1)[1]})"
                    if source_id not in wanted:
                        wanted[source_id] = (label, record.dashboard, "dask")
                clients[record.client_id] = (record, source_id)

        for source in self._registry.list():
            if source.kind == KIND and source.id not in wanted:
                self._registry.unregister(source.id)
        for source_id, (label, dashboard, flavour) in wanted.items():
            self._registry.point(source_id, label, KIND, dashboard, flavour)
        self.clients = clients
        self._taken = taken

    def schedulers(self) -> dict[str, str]:
        """Source id -> scheduler address, for the kernels' sources whose scheduler is known and allowed.

        A kernel's record is input: the address must be one the allowlist admits, as a dashboard's is.
        """
        found: dict[str, str] = {}
        for record, source_id in self.clients.values():
            if source_id is None or record.scheduler is None or source_id in found:
                continue
            try:
                target = parse_target_segment(record.scheduler.removeprefix("tcp://"))
            except TargetError:
                continue
            if self._allowlist.allows(target):
                found[source_id] = record.scheduler
        return found

    def _allowed(self, dashboard: str) -> bool:
        if self._allowlist.allows(parse_dashboard_url(dashboard).target):
            return True
        if dashboard not in self._refused:
            self._refused.add(dashboard)
            self._log.warning(
                "dashdock: a notebook's Dask client uses %s, which c.DashdockApp.allowed_targets "
                "does not allow; it is not shown as a source",
                dashboard,
            )
        return False

    def source_for(self, dashboard: str, kernel_id: str | None) -> Source | None:
        """The source a repr of this dashboard (shown in this kernel) should open plots from."""
        matching = [s for s in self._registry.list() if s.dashboard.url == dashboard]
        if kernel_id:
            own = {kernel_source_id(kernel_id), kernel_source_id(kernel_id, dashboard)}
            for source in matching:
                if source.id in own:
                    return source
        return matching[0] if matching else None


def _read_directory(directory: Path) -> tuple[list[ClientRecord], list[Path]]:
    """Well-formed client records, and the kernels' cells files (read by ``notebook/cells.py``);
    anything else in the directory is ignored (and never followed)."""
    records: list[ClientRecord] = []
    cells_files: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return [], []
    for entry in entries:
        if entry.name.endswith(CELLS_SUFFIX) and entry.is_file(follow_symlinks=False):
            cells_files.append(Path(entry.path))
        if not entry.name.endswith(RECORD_SUFFIX) or not entry.is_file(follow_symlinks=False):
            continue
        try:
            with open(entry.path, "rb") as file:
                document = json.loads(file.read(MAX_RECORD_BYTES + 1)[:MAX_RECORD_BYTES])
            record = valid_record(document)
            if record is None:
                continue
            # A gateway's link may carry the user's name and password: the source never does.
            dashboard = parse_dashboard_url(without_userinfo(record["dashboard"])).url
        except (OSError, ValueError, TargetError):
            continue
        kernel_id, client_id, started = record["kernel_id"], record["client_id"], record["started"]
        records.append(
            ClientRecord(
                kernel_id,
                client_id,
                dashboard,
                started,
                Path(entry.path),
                record["scheduler"],
                record["flavour"],
            )
        )
    return records, cells_files


def _remove(paths: list[Path]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            path.unlink()
