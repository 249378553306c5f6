"""A credential given for a dashboard never reaches a browser, whatever the dashboard sends back.

A real LocalCluster behind a real authenticating front that forwards each request unchanged
(_auth_front.py), for each kind of credential: the Bokeh server packs the request, credential
included, into the session token it writes into every page; the front redirects keeping its query
and prints requests back. Every page of the catalog, every answer, header, redirect and log line
is searched for the secret, the page's tokens decoded (zlib part included).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
from _auth_front import AuthFront, Credential
from _support import Jupyter
from tornado.httpclient import HTTPResponse

from dashdock.proxy.session_tokens import session_payload

SECRET = "s3cret-9f27c1d4e8"
CREDENTIALS = {
    "header": Credential("header", "Authorization", f"Bearer {SECRET}"),
    "cookie": Credential("cookie", "dashkey", SECRET),
    "query": Credential("query", "access", SECRET),
}
# Bokeh writes query arguments into its token as base64 ({"bytes": ...}).
SPELLINGS = (SECRET, base64.b64encode(SECRET.encode()).decode().rstrip("="))
_ACCESS_RE = re.compile(r"^[0-9]{3} [A-Z]+ (/\S*)")
_TOKEN_RE = re.compile(r"eyJ[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)?")


@pytest.fixture
def dashdock_config() -> dict[str, Any]:
    # Every page from the dashboard itself, where the credential goes. With drawn plots on, the
    # recorder (which never sees the credential) would take over the Task Stream when its recording
    # began, part-way through a test: the page the websocket check opens would not be the front's.
    return {"draw_key_plots": False}


@pytest.fixture(params=sorted(CREDENTIALS))
def front(
    request: pytest.FixtureRequest, dashboard_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> Iterator[AuthFront]:
    guard = AuthFront(CREDENTIALS[request.param], dashboard_port)
    jp_asyncio_loop.run_until_complete(guard.start())
    yield guard
    jp_asyncio_loop.run_until_complete(guard.close())


def _everything(response: HTTPResponse) -> str:
    headers = "\n".join(f"{name}: {value}" for name, value in response.headers.get_all())
    return headers + "\n" + response.body.decode("utf-8", errors="replace")


def _assert_clean(response: HTTPResponse, where: str) -> None:
    assert not _spells(_everything(response)), where
    for token in _TOKEN_RE.findall(response.body.decode("utf-8", errors="replace")):
        payload = session_payload(token)
        assert payload is None or not _spells(json.dumps(payload)), (where, payload)


def _server_log(caplog: pytest.LogCaptureFixture) -> str:
    """What the Jupyter server logged. The session's LocalCluster runs in this process, so tornado's
    access log also has the dashboard's own requests (paths outside Jupyter's), which are left out."""
    lines = []
    for record in caplog.records:
        message = record.getMessage()
        access = _ACCESS_RE.match(message)
        if access is None or access[1].startswith(("/dashdock/", "/api/")):
            lines.append(message)
    return "\n".join(lines)


def _spells(text: str) -> bool:
    return any(spelling in text for spelling in SPELLINGS)


async def _source(jupyter: Jupyter, front: AuthFront) -> dict[str, Any]:
    code, source = await jupyter.api(
        "POST", "sources", {"url": front.url + "/status", "credentials": front.credential.api()}
    )
    assert code == 201, source
    return source


async def test_no_page_of_the_catalog_carries_the_credential_in_its_bokeh_token(
    jupyter: Jupyter, front: AuthFront, jp_serverapp: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    source = await _source(jupyter, front)
    code, listing = await jupyter.api("GET", f"sources/{source['id']}/plots")
    assert code == 200 and len(listing["plots"]) > 20, listing
    (app,) = jp_serverapp.extension_manager.extension_apps["dashdock"]
    dashboard = front.url
    stand_ins = 0
    for plot in listing["plots"]:
        page = await jupyter.proxied(plot["url"], absolute=True)
        assert page.code == 200, (plot["path"], page.code)
        _assert_clean(page, plot["path"])
        for token in _TOKEN_RE.findall(page.body.decode()):
            # The page holds a stand-in; the dashboard's own token (the one its websocket gets
            # back) is where Bokeh packed the credential: what the test would find without dashdock.
            original = app.session_tokens.original(token, dashboard)
            if original != token:
                stand_ins += 1
                assert _spells(json.dumps(session_payload(original))), plot["path"]
    assert stand_ins >= len(listing["plots"]) - 2  # the GPU plots have no GPU here

    # The plot still works: its websocket reaches Bokeh with the dashboard's own token.
    page = await jupyter.proxied(f"dashdock/proxy/{source['id']}/individual-task-stream")
    (token,) = {t for t in _TOKEN_RE.findall(page.body.decode()) if session_payload(t) is not None}
    view = page.effective_url.removeprefix(jupyter.origin).split("?", 1)[0]
    front.seen.clear()
    connection = await jupyter.websocket(
        f"{view}/ws", subprotocols=["bokeh", token], auth=False, absolute=True
    )
    message = await connection.read_message()
    connection.close()
    assert message is not None  # Bokeh accepted the session and spoke first
    (upgrade,) = [head for head in front.seen if " /individual-task-stream/ws" in head]
    assert token not in upgrade and app.session_tokens.original(token, dashboard) in upgrade

    for answer in ("sources", f"sources/{source['id']}", f"sources/{source['id']}/workers"):
        code, body = await jupyter.api("GET", answer)
        assert not _spells(json.dumps(body)), answer
    assert not _spells(_server_log(caplog))


async def test_a_redirect_that_keeps_its_query_and_a_page_that_prints_its_request_carry_no_credential(
    jupyter: Jupyter, front: AuthFront
) -> None:
    source = await _source(jupyter, front)
    front.seen.clear()
    link = await jupyter.fetch(f"dashdock/proxy/{source['id']}/front/redirect?x=1")
    redirect = await jupyter.fetch(link.headers["Location"], auth=False, absolute=True)
    assert redirect.code == 302
    location = redirect.headers["Location"]
    assert "/front/landing?x=1" in location and SECRET not in location, location
    assert any(" /front/redirect" in head for head in front.seen)  # the front did redirect

    echo = await jupyter.proxied(f"dashdock/proxy/{source['id']}/front/echo?x=1")
    assert echo.code == 200 and "GET /front/echo" in echo.body.decode()
    assert any(SECRET in head for head in front.seen if " /front/echo" in head)  # it was sent...
    _assert_clean(echo, "echo")  # ...and cut out of the page, its cookie and its headers
    assert "X-Seen" not in echo.headers and not echo.headers.get_list("Set-Cookie")
