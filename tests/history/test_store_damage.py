"""A damaged history store is noticed: checked when opened, set aside with its WAL, replaced, and
the user told in GET history; a read that finds damage later answers a JSON error, not a traceback."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from _support import Jupyter
from test_history_api import eventually
from test_history_store import T0, a_run, a_task

from dashdock.history.store import HistoryStore

RUNS = 66
GARBAGE = b"this is not a database, just text\n" * 100


def _check(path: Path) -> list[str]:
    """quick_check's findings, read-only (a read-write close would checkpoint the WAL away)."""
    with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
        return [row[0] for row in db.execute("PRAGMA quick_check").fetchall()]


def _fill(store: HistoryStore) -> None:
    first = time.time() - 2 * 3600  # within the retention's age
    for i in range(RUNS):
        run = a_run(f"{i:012x}", first + i * 100, first + i * 100 + 50)
        store.begin_run(run)
        tasks = [a_task(f"inc-{i}-{j}", run.start + j / 100, run.start + j / 100 + 0.005) for j in range(300)]
        store.add_tasks(run.id, tasks)


def truncated_with_wal(path: Path) -> None:
    """At ``path``: a store of 66 runs cut to half its size, with the WAL a dead writer left."""
    source = path.with_name("whole") / path.name
    store = HistoryStore.open(source)
    _fill(store)
    store.close()  # all in the file; what follows stays in the WAL while a connection is open
    store = HistoryStore.open(source)
    try:
        last = a_run("ffffffffffff", T0 + 9000)
        store.begin_run(last)
        store.add_tasks(last.id, [a_task(f"x-{j}", T0 + 9000 + j, T0 + 9000 + j + 0.5) for j in range(50)])
        whole = source.read_bytes()
        path.write_bytes(whole[: len(whole) // 2])
        shutil.copyfile(f"{source}-wal", f"{path}-wal")
    finally:
        store.close()
    shutil.rmtree(source.parent)
    # Real damage, which opening alone does not notice: the runs still list.
    with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == RUNS + 1
    assert _check(path) != ["ok"]


def garbage(path: Path) -> None:
    path.write_bytes(GARBAGE)


@pytest.fixture
def dashdock_config(request: pytest.FixtureRequest, sources_file: Path) -> dict[str, Any]:
    """The server's history store made by the test's parameter before the server starts."""
    prepare: Callable[[Path], None] | None = getattr(request, "param", None)
    if prepare is not None:
        sources_file.parent.mkdir(parents=True, exist_ok=True)
        prepare(sources_file.with_name("history.db"))
    return {}


def test_a_truncated_store_is_found_on_open_and_set_aside_with_its_wal(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    truncated_with_wal(path)
    wal = path.with_name("history.db-wal").read_bytes()
    store = HistoryStore.open(path)
    try:
        assert store.warning is not None
        asides = sorted(p.name for p in tmp_path.iterdir() if ".damaged-" in p.name)
        [aside] = [name for name in asides if not name.endswith(("-wal", "-shm"))]
        assert f"{aside}-wal" in asides and (tmp_path / f"{aside}-wal").read_bytes() == wal
        assert aside in store.warning and str(path) in store.warning
        assert store.runs() == []
        store.begin_run(a_run())
        assert [run.id for run in store.runs()] == ["0123456789ab"]
    finally:
        store.close()
    again = HistoryStore.open(path)
    assert again.warning is None and len(again.runs()) == 1
    again.close()


@pytest.mark.parametrize("dashdock_config", [truncated_with_wal], indirect=True)
async def test_get_history_tells_of_a_truncated_store_set_aside(jupyter: Jupyter, sources_file: Path) -> None:
    code, body = await jupyter.api("GET", "history")
    assert code == 200, body
    assert body["runs"] == []
    names = [p.name for p in sources_file.parent.iterdir() if ".damaged-" in p.name]
    [aside] = [name for name in names if not name.endswith(("-wal", "-shm"))]
    assert f"{aside}-wal" in names
    assert isinstance(body["problem"], str) and aside in body["problem"]
    assert "could not be read" in body["problem"]


@pytest.mark.parametrize("dashdock_config", [garbage], indirect=True)
async def test_get_history_tells_of_a_garbage_store_set_aside(jupyter: Jupyter, sources_file: Path) -> None:
    code, body = await jupyter.api("GET", "history")
    assert code == 200, body
    assert body["runs"] == []
    [aside] = [p for p in sources_file.parent.iterdir() if ".damaged-" in p.name]
    assert aside.read_bytes() == GARBAGE
    assert isinstance(body["problem"], str) and aside.name in body["problem"]
    assert "not a SQLite database" in body["problem"]


def _overwrite_second_half(path: Path) -> None:
    size = path.stat().st_size
    with open(path, "r+b") as file:
        file.seek(size // 2)
        file.write(bytes(range(256)) * ((size - size // 2) // 256))


def healthy(path: Path) -> None:
    """At ``path``: a store of 66 runs, each of 300 tasks."""
    store = HistoryStore.open(path)
    try:
        _fill(store)
    finally:
        store.close()


@pytest.mark.parametrize("dashdock_config", [healthy], indirect=True)
async def test_reads_of_a_store_damaged_after_opening_answer_a_json_error(
    jupyter: Jupyter, sources_file: Path
) -> None:
    code, body = await jupyter.api("GET", "history")
    assert code == 200, body
    assert len(body["runs"]) == RUNS and body["problem"] is None
    # Its second half overwritten while the server has it open (the disk, another program).
    path = sources_file.with_name("history.db")
    _overwrite_second_half(path)
    assert _check(path) != ["ok"]
    failed: list[tuple[int, bytes]] = []
    for run in sorted(body["runs"], key=lambda r: r["start"], reverse=True):
        for export in ("report", "tasks.parquet"):
            response = await jupyter.fetch(f"dashdock/api/history/{run['id']}/{export}")
            assert b"Unhandled error" not in response.body
            if response.code != 200:
                failed.append((response.code, response.body))
        if failed:
            break
    assert failed, "no read met the damage"
    status, text = failed[0]
    assert status == 500 and b"history store" in text and b"could not be read" in text
    assert json.loads(text)["message"]
    # Set aside and replaced; GET history says so, and names where it went.
    code, body = await jupyter.api("GET", "history")
    assert code == 200, body
    assert body["runs"] == []
    names = [p.name for p in sources_file.parent.iterdir() if p.name.startswith("history.db.damaged-")]
    [aside] = [name for name in names if not name.endswith(("-wal", "-shm"))]
    assert aside in body["problem"] and "malformed" in body["problem"]


@pytest.mark.parametrize("dashdock_config", [healthy], indirect=True)
async def test_a_store_replaced_while_recording_gets_the_recording_again(
    jupyter: Jupyter, sources_file: Path, dashboard_url: str
) -> None:
    """The recorder writes the store too: once the server replaces a damaged one, the recorder is
    started again on the new file, and the source's run goes on there (else it wrote the old one)."""
    source_id = (await jupyter.add_source(dashboard_url))["id"]

    async def live_run() -> bool:
        code, body = await jupyter.api("GET", "history")
        return code == 200 and any(run["source"] == source_id and run["live"] for run in body["runs"])

    assert await eventually(live_run, 60)
    _overwrite_second_half(sources_file.with_name("history.db"))
    for attempt in range(RUNS):  # reads until one meets the damage, which replaces the store
        code, body = await jupyter.api("GET", "history")
        assert code in (200, 500), body  # 500: this read met the damage, and says so
        runs = body.get("runs", [])
        old = sorted((run for run in runs if run["source"] != source_id), key=lambda run: run["start"])
        if not old:
            break
        # Each old run's tasks in turn, newest first: those are in the file's second half. (The
        # oldest, asked again and again, is in the first half: its reads never met the damage.)
        run = old[-1 - attempt % len(old)]
        response = await jupyter.fetch(f"dashdock/api/history/{run['id']}/tasks.parquet")
        assert b"Unhandled error" not in response.body
    _, body = await jupyter.api("GET", "history")
    assert "malformed" in (body["problem"] or ""), body
    # The fresh store gets the source's run again, recorded by a recorder on the new file.
    assert await eventually(live_run, 60), body
