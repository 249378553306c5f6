"""Closed panes' pages are freed: the plot server's one collection for many pages let go of comes
late enough for the last of them, and often enough while panes keep closing."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
import weakref
from collections.abc import Iterator

import pytest
from tornado.ioloop import IOLoop

from dashdock.live import plot_server
from dashdock.live.plot_server import COLLECT_AFTER_S, _CoalescedCollect
from dashdock.live.stale import CHECK_EVERY_MS


class _Page:
    """A page's document and its callbacks, which refer to each other: only a collection frees it."""

    def __init__(self) -> None:
        self.callbacks = [self]


def _held(page: _Page) -> None:
    """What a stopped periodic callback's last sleep holds until it wakes."""


@pytest.fixture
def only_the_plot_servers_collections() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.usefixtures("only_the_plot_servers_collections")
def test_a_page_let_go_of_while_a_collection_is_due_is_freed_too() -> None:
    async def scenario() -> bool:
        loop = IOLoop.current()
        collector = _CoalescedCollect(loop)
        collector.collect()  # a first page let go of: a collection is due
        await asyncio.sleep(COLLECT_AFTER_S / 2)
        page = _Page()
        freed = asyncio.Event()
        watch = weakref.ref(page, lambda _: freed.set())
        # Bokeh stopped the page's periodic callbacks; the last one's sleep holds it a period more.
        loop.call_later(CHECK_EVERY_MS / 1000, _held, page)
        collector.collect()  # Bokeh's Document.destroy asks for a collection
        del page
        try:
            await asyncio.wait_for(freed.wait(), 4 * COLLECT_AFTER_S + 5)
        except TimeoutError:
            return False
        return watch() is None

    assert asyncio.run(scenario()), "the page was still in memory: no collection came after it was garbage"


def test_pages_let_go_of_all_the_time_are_still_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    collections: list[float] = []
    collect = gc.collect

    def counted(*args: int) -> int:
        collections.append(time.monotonic())
        return collect(*args)

    monkeypatch.setattr(gc, "collect", counted)

    async def scenario() -> float:
        collector = _CoalescedCollect(IOLoop.current())
        until = time.monotonic() + 2 * COLLECT_AFTER_S + 1
        while time.monotonic() < until:
            collector.collect()  # a pane closed every quarter second
            await asyncio.sleep(0.25)
        return until

    churn_ended = asyncio.run(scenario())
    assert [at for at in collections if at < churn_ended], "no collection while pages kept being let go of"


def test_the_heap_is_given_back_once_more_after_the_last_page(monkeypatch: pytest.MonkeyPatch) -> None:
    given_back: list[float] = []
    settle_after = 0.5

    async def scenario() -> None:
        gave = asyncio.Event()

        def counted() -> None:
            given_back.append(time.monotonic())
            gave.set()

        async def next_give_back() -> None:
            gave.clear()
            await asyncio.wait_for(gave.wait(), COLLECT_AFTER_S + settle_after + 10)

        monkeypatch.setattr(plot_server, "give_back", counted)
        collector = _CoalescedCollect(IOLoop.current(), settle_after)
        collector.collect()
        await next_give_back()  # the collection's
        collector.collect()  # another pane closed after it, before the heap settled
        await next_give_back()  # that page's collection
        await next_give_back()  # the heap settling
        with contextlib.suppress(TimeoutError):  # none more without a page let go of
            await asyncio.wait_for(next_give_back(), 2 * settle_after)

    asyncio.run(scenario())
    assert len(given_back) == 3, f"{len(given_back)} give-backs: expected two collections' and one settling"
    assert given_back[2] - given_back[1] >= settle_after, "the heap settled before the last collection"
