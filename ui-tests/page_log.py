"""What a page's frames said, were refused and navigated to, kept for a failing test's message.

A pane that stays blank on a loaded CI machine leaves only its failure message behind: this log
says whether its page loaded, which requests were refused, whether its websocket opened or closed,
and what its scripts reported.
"""

from __future__ import annotations

import time
from collections import deque
from weakref import WeakKeyDictionary

from playwright.sync_api import ConsoleMessage, Frame, Page, Response, WebSocket

MAX_ENTRIES = 80

_logs: WeakKeyDictionary[Page, deque[str]] = WeakKeyDictionary()


def keep_page_log(page: Page) -> None:
    """Start keeping the last ``MAX_ENTRIES`` events of ``page`` and its frames."""
    log: deque[str] = deque(maxlen=MAX_ENTRIES)
    _logs[page] = log
    started = time.monotonic()

    def note(text: str) -> None:
        log.append(f"{time.monotonic() - started:7.2f}s {text[:300]}")

    def on_console(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            note(f"console.{message.type} {message.location.get('url', '')[-80:]}: {message.text}")

    def on_response(response: Response) -> None:
        if response.status >= 400:
            note(f"{response.status} {response.request.method} {response.url}")

    def on_websocket(socket: WebSocket) -> None:
        note(f"websocket open {socket.url}")
        socket.on("close", lambda _: note(f"websocket closed {socket.url}"))
        socket.on("socketerror", lambda error: note(f"websocket error {socket.url}: {error}"))

    def on_navigated(frame: Frame) -> None:
        if "/dashdock/" in frame.url:
            note(f"frame at {frame.url}")

    def on_detached(frame: Frame) -> None:
        if "/dashdock/" in frame.url:
            note(f"frame detached {frame.url}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: note(f"page error: {error}"))
    page.on("response", on_response)
    page.on("requestfailed", lambda request: note(f"failed {request.url}: {request.failure}"))
    page.on("websocket", on_websocket)
    page.on("framenavigated", on_navigated)
    page.on("framedetached", on_detached)


def page_log(page: Page) -> str:
    """The kept events of ``page``, oldest first, one per line."""
    entries = _logs.get(page)
    return "\n".join(entries) if entries else "(no page log kept)"


# What each of a page's Bokeh documents holds: a frame can construct more than one (a reconnect
# pulls a replacement), so the first is not always the one shown.
_DOCUMENTS = """() => window.Bokeh
    ? Bokeh.documents.map(doc => doc.roots().map(root => root.type).join('+') || 'no roots').join(', ')
    : 'no Bokeh'"""


def frames_state(page: Page) -> str:
    """Each dashdock frame of ``page`` now: its URL and what its Bokeh documents hold."""
    lines = []
    for frame in page.frames:
        if "/dashdock/" not in frame.url:
            continue
        try:
            held = frame.evaluate(_DOCUMENTS)
        except Exception as error:  # a frame detached or navigating meanwhile
            held = f"unreadable: {str(error)[:80]}"
        lines.append(f"{frame.url[-90:]}: {held}")
    return "\n".join(lines) or "(no dashdock frames)"
