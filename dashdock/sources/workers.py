"""The workers of a dashboard source and the pages of their own dashboards.

The scheduler's ``/json/identity.json`` fails (HTTP 500) once a cluster has run tasks, so the list
comes from its worker table, ``/info/main/workers.html``, which every scheduler with the default
HTTP routes serves and which links each worker's dashboard as ``../../proxy/{port}/{host}/status``.

A worker's dashboard is reached through the same proxy as ``{host}:{port}``, and only when the
allowlist admits that host: what a scheduler reports cannot widen what the proxy may reach.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from dashdock.errors import host_not_allowed
from dashdock.targets import Allowlist, Target, TargetError, parse_target_segment

# The pages a worker's own dashboard serves (distributed.dashboard.worker), in menu order.
WORKER_PAGES = (
    ("Status", "/status"),
    ("System", "/system"),
    ("Profile", "/profile"),
    ("Profile Server", "/profile-server"),
    ("Counters", "/counters"),
)
_DASHBOARD_LINK = re.compile(r"^\.\./\.\./proxy/(\d{1,5})/([^/\s]{1,255})/status$")
_MAX_WORKERS = 5000


@dataclass
class Worker:
    address: str
    name: str = ""
    threads: int | None = None
    memory_limit: int | None = None
    dashboard: Target | None = None
    reachable: bool = False
    reason: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "address": self.address,
            "name": self.name,
            "threads": self.threads,
            "memory_limit": self.memory_limit,
            "dashboard": self.dashboard.netloc if self.dashboard else None,
            "reachable": self.reachable,
            "reason": self.reason,
        }


def judge(workers: list[Worker], allowlist: Allowlist) -> list[Worker]:
    """Mark which workers' dashboards the proxy may reach, and say why not for the others."""
    for worker in workers:
        if worker.dashboard is None:
            worker.reason = "This worker runs no dashboard (start workers with one to see their pages)."
        elif not allowlist.allows(worker.dashboard):
            worker.reason = host_not_allowed(worker.dashboard.host).reason
        else:
            worker.reachable = True
    return workers


def parse_worker_table(page: str) -> list[Worker]:
    """The workers in a scheduler's ``workers.html``; rows that do not look like workers are skipped."""
    parser = _WorkerTableParser()
    parser.feed(page)
    parser.close()
    return parser.workers[:_MAX_WORKERS]


class _WorkerTableParser(HTMLParser):
    """Reads the rows of the worker table: cells in order, the data-sort of the memory cell, links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.workers: list[Worker] = []
        self._row: list[dict[str, str]] | None = None
        self._cell: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {key: value or "" for key, value in attrs}
        if tag == "tr":
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = {"text": "", "sort": values.get("data-sort", ""), "links": ""}
            self._row.append(self._cell)
        elif tag == "a" and self._cell is not None:
            self._cell["links"] += values.get("href", "") + "\n"

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell["text"] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._cell = None
        elif tag == "tr" and self._row is not None:
            worker = _worker_from_row(self._row)
            if worker is not None:
                self.workers.append(worker)
            self._row = None


def _worker_from_row(cells: list[dict[str, str]]) -> Worker | None:
    if len(cells) < 4 or not cells[0]["links"].startswith("../worker/"):
        return None
    worker = Worker(address=cells[0]["text"].strip()[:300], name=cells[1]["text"].strip()[:300])
    threads, memory = cells[2]["text"].strip(), cells[3]["sort"].strip()
    worker.threads = int(threads) if threads.isdigit() else None
    worker.memory_limit = int(memory) if memory.isdigit() else None
    for cell in cells[4:]:
        for link in cell["links"].split():
            if match := _DASHBOARD_LINK.match(link):
                port, host = match.groups()
                try:
                    worker.dashboard = parse_target_segment(_segment(host, port))
                except TargetError:
                    worker.dashboard = None
    return worker


def _segment(host: str, port: str) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
