"""The API and the proxy under a base URL, as under JupyterHub (/user/alice/) or an escaped one."""

from __future__ import annotations

from http.cookies import SimpleCookie

import pytest
from _bokeh import receive, send_pull_doc_request, session_token
from _support import Jupyter, RecordingUpstream, view_root, websocket_refusal


@pytest.fixture(params=["/user/alice/", "/a%40b/"])
def jp_base_url(request: pytest.FixtureRequest) -> str:
    return request.param


async def test_the_server_runs_under_the_base_url(jupyter: Jupyter, jp_base_url: str) -> None:
    assert jupyter.base_url == jp_base_url
    response = await jupyter.fetch("/dashdock/api/sources", absolute=True)
    assert response.code == 404  # nothing is served outside the base URL


async def test_plots_are_listed_with_urls_under_the_base_url_and_open(
    jupyter: Jupyter, dashboard_url: str, jp_base_url: str
) -> None:
    code, source = await jupyter.api("POST", "sources", {"url": f"{dashboard_url}/status"})
    assert code == 201
    code, listing = await jupyter.api("GET", "sources")
    assert [item["id"] for item in listing["sources"]] == [source["id"]]
    code, detail = await jupyter.api("GET", f"sources/{source['id']}")
    assert detail["health"]["status"] == "up"

    code, body = await jupyter.api("GET", f"sources/{source['id']}/plots")
    assert code == 200
    assert len(body["plots"]) >= 20
    for plot in body["plots"]:
        assert plot["url"].startswith(f"{jp_base_url}dashdock/proxy/{source['id']}/")
    (task_stream,) = [plot for plot in body["plots"] if plot["path"] == "/individual-task-stream"]
    link = await jupyter.fetch(task_stream["url"], absolute=True)
    assert link.code == 302
    page = await jupyter.fetch(link.headers["Location"], absolute=True, auth=False)
    assert page.code == 200
    assert view_root(page).startswith(f"{jp_base_url}dashdock/view/{source['id']}/")
    assert "frame-ancestors 'self'" in page.headers["Content-Security-Policy"]

    connection = await jupyter.websocket(
        view_root(page) + "/individual-task-stream/ws",
        headers={"Origin": "null"},
        subprotocols=["bokeh", session_token(page.body.decode())],
        auth=False,
        absolute=True,
    )
    try:
        assert (await receive(connection)).msgtype == "ACK"
        await send_pull_doc_request(connection)
        assert (await receive(connection)).content["doc"]["roots"]
    finally:
        connection.close()


async def test_api_errors_under_the_base_url(jupyter: Jupyter) -> None:
    assert (await jupyter.api("POST", "sources", {"url": "http://10.1.2.3:8787"}))[0] == 403
    assert (await jupyter.api("POST", "sources", {"url": 1}))[0] == 400
    assert (await jupyter.api("GET", "sources/0123456789ab"))[0] == 404
    assert (await jupyter.api("POST", "sources", raw="{"))[0] == 400
    assert (await jupyter.api("GET", "sources", auth=False))[0] == 403


async def test_the_dashboard_redirect_stays_under_the_base_url(
    jupyter: Jupyter, dashboard_url: str, jp_base_url: str
) -> None:
    source = await jupyter.add_source(dashboard_url)
    response = await jupyter.proxied(f"dashdock/proxy/{source['id']}/")
    assert response.code in (301, 302)
    assert view_root(response).startswith(f"{jp_base_url}dashdock/view/{source['id']}/")
    assert response.headers["Location"] == view_root(response) + "/status"


async def test_dashboard_cookies_stay_under_the_base_url(
    jupyter: Jupyter, recorder: RecordingUpstream, jp_base_url: str
) -> None:
    response = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/set-cookie")
    paths = set()
    for raw in response.headers.get_list("Set-Cookie"):
        cookie = SimpleCookie()
        cookie.load(raw)
        paths |= {morsel["path"] for name, morsel in cookie.items() if not name.startswith("username-")}
    assert view_root(response).startswith(f"{jp_base_url}dashdock/view/{recorder.netloc}/")
    assert paths == {view_root(response) + "/", view_root(response) + "/sub"}


async def test_anonymous_requests_are_refused_under_the_base_url(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    response = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/page", auth=False)
    assert response.code in (302, 403)
    assert await websocket_refusal(jupyter, f"dashdock/proxy/{recorder.netloc}/ws", auth=False) == 403
    assert recorder.seen == []
