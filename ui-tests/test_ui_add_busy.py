"""Adding a dashboard whose host accepts the connection and never answers: the check shows as busy.

A real listening socket that takes connections and sends nothing (as a hung scheduler or a
firewall that holds connections does): the user sees the check going on, cannot send it twice,
and then reads why it failed.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from helpers import add_source, open_sidebar
from lab import screenshot
from playwright.sync_api import Page, expect


@pytest.fixture
def silent_host() -> Iterator[int]:
    """A port on loopback whose connections are accepted and never answered."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


def test_a_dashboard_that_never_answers_shows_the_check_as_busy(page: Page, silent_host: int) -> None:
    sidebar = open_sidebar(page)
    add_source(page, f"http://127.0.0.1:{silent_host}/status")
    button = sidebar.locator(".jp-dashdock-AddSource-button")
    expect(button).to_have_text("Checking…")
    expect(button).to_have_attribute("aria-disabled", "true")
    screenshot(page, "add-source-busy")
    # A second Enter while it checks sends nothing more: still one check, then one error.
    page.press(".jp-dashdock-AddSource-url", "Enter")
    error = sidebar.locator(".jp-dashdock-AddSource-error")
    expect(error).not_to_be_empty(timeout=90_000)
    expect(button).to_have_text("Add")
    expect(button).to_have_attribute("aria-disabled", "false")
    expect(sidebar.locator(".jp-dashdock-Source")).to_have_count(0)
