"""The proxy's non-optional rules: authentication first, allowed targets only, no credential leaks,
no redirect off the dashboard, confined cookies, no reflected input in error pages."""

from __future__ import annotations

import json
from http.cookies import SimpleCookie
from typing import Any

import pytest
from _bokeh import session_token
from _support import Jupyter, RecordingUpstream, view_root, websocket_refusal
from bokeh.util.token import get_token_payload

from dashdock.proxy.session_tokens import session_payload

XSRF = "xsrfSECRETvalue123"


async def test_an_anonymous_request_to_the_proxy_never_reaches_the_dashboard(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    source = await jupyter.add_source(recorder.url)
    for segment in (source["id"], recorder.netloc):
        response = await jupyter.proxied(f"dashdock/proxy/{segment}/individual-task-stream", auth=False)
        assert response.code in (302, 403), response.code
        if response.code == 302:
            assert "/login" in response.headers["Location"]
        post = await jupyter.proxied(f"dashdock/proxy/{segment}/x", method="POST", body=b"a=1", auth=False)
        assert post.code == 403
    wrong_token = await jupyter.proxied(
        f"dashdock/proxy/{recorder.netloc}/", headers={"Authorization": "token not-the-token"}, auth=False
    )
    assert wrong_token.code in (302, 403)
    # Only what adding the source asked: its plot list, and its scheduler (for the history).
    assert [seen.path for seen in recorder.seen] == ["/individual-plots.json", "/info/main/workers.html"]


async def test_an_anonymous_websocket_upgrade_is_forbidden_before_any_upstream_connection(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    assert await websocket_refusal(jupyter, f"dashdock/proxy/{recorder.netloc}/ws", auth=False) == 403
    assert (
        await websocket_refusal(
            jupyter,
            f"dashdock/proxy/{recorder.netloc}/ws",
            headers={"Authorization": "token not-the-token"},
            auth=False,
        )
        == 403
    )
    assert recorder.seen == []


async def test_a_cookie_websocket_from_a_foreign_origin_is_refused(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    cookie = await jupyter.login_cookie()
    status = await websocket_refusal(
        jupyter,
        f"dashdock/proxy/{recorder.netloc}/ws",
        headers={"Cookie": cookie, "Origin": "http://evil.example"},
        auth=False,
    )
    assert status == 403
    assert recorder.seen == []

    connection = await jupyter.websocket(
        f"dashdock/proxy/{recorder.netloc}/ws",
        headers={"Cookie": cookie, "Origin": jupyter.origin},
        auth=False,
    )
    try:
        await connection.write_message("same origin")
        assert await connection.read_message() == "same origin"
    finally:
        connection.close()


async def test_a_cookie_post_through_the_proxy_without_xsrf_is_refused(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    cookie = await jupyter.login_cookie()
    response = await jupyter.fetch(
        f"dashdock/proxy/{recorder.netloc}/x",
        method="POST",
        body=b"a=1",
        headers={"Cookie": cookie, "Origin": "http://evil.example"},
        auth=False,
    )
    assert response.code in (403, 404, 405)
    assert recorder.seen == []


async def test_a_post_to_a_view_url_from_a_foreign_site_is_refused(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    # Even a site that learnt a view URL cannot post through it; the sandboxed page itself can.
    link = await jupyter.fetch(f"dashdock/proxy/{recorder.netloc}/x")
    view = link.headers["Location"]
    foreign = await jupyter.fetch(
        view, "POST", b"a=1", headers={"Origin": "http://evil.example"}, auth=False, absolute=True
    )
    assert foreign.code == 403
    assert recorder.seen == []
    sandboxed = await jupyter.fetch(
        view, "POST", b"a=1", headers={"Origin": "null"}, auth=False, absolute=True
    )
    assert sandboxed.code == 200
    assert [seen.method for seen in recorder.seen] == ["POST"]


class TestOnlyAllowedTargets:
    """An administrator allows one dashboard; another loopback server is out of reach."""

    @pytest.fixture
    def dashdock_config(self, recorder: RecordingUpstream) -> dict[str, Any]:
        return {"allowed_targets": [recorder.netloc]}

    async def test_the_allowed_dashboard_is_reachable(
        self, jupyter: Jupyter, recorder: RecordingUpstream
    ) -> None:
        response = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/page")
        assert response.code == 200
        assert [seen.path for seen in recorder.seen] == ["/page"]

    @pytest.mark.parametrize(
        "segment",
        [
            "127.0.0.1:{port}",
            "localhost:{port}",
            "[::ffff:127.0.0.1]:{port}",
            "127.1:{port}",
            "2130706433:{port}",
            "0x7f000001:{port}",
            "{allowed}@127.0.0.1:{port}",
            "{allowed}%40127.0.0.1:{port}",
            "127.0.0.1:{port}%2F..%2F{allowed}",
        ],
    )
    async def test_another_target_is_refused_without_contacting_it(
        self, jupyter: Jupyter, recorder: RecordingUpstream, outsider: RecordingUpstream, segment: str
    ) -> None:
        path = segment.format(port=outsider.port, allowed=recorder.netloc)
        response = await jupyter.proxied(f"dashdock/proxy/{path}/")
        assert response.code in (400, 403), response.code
        assert await websocket_refusal(jupyter, f"dashdock/proxy/{path}/ws") in (400, 403)
        assert outsider.seen == []

    async def test_the_other_server_cannot_be_added_as_a_source(
        self, jupyter: Jupyter, outsider: RecordingUpstream
    ) -> None:
        code, body = await jupyter.api("POST", "sources", {"url": outsider.url})
        assert code == 403
        assert outsider.netloc in body["message"]
        assert outsider.seen == []


async def test_jupyter_credentials_never_reach_the_dashboard(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    cookie = await jupyter.login_cookie()
    login_value = cookie.split("=", 1)[1]
    headers = {
        "Cookie": f"{cookie}; _xsrf={XSRF}",
        "X-XSRFToken": XSRF,
        "Referer": jupyter.url(f"lab?token={jupyter.token}"),
        "Accept": "text/html",
    }
    query = f"?token={jupyter.token}&_xsrf={XSRF}&keep=1"
    get = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/page{query}", headers=headers)
    post = await jupyter.proxied(
        f"dashdock/proxy/{recorder.netloc}/form{query}", method="POST", body=b"field=value", headers=headers
    )
    connection = await jupyter.websocket(f"dashdock/proxy/{recorder.netloc}/ws{query}", headers=headers)
    connection.close()
    assert (get.code, post.code) == (200, 200)

    seen = recorder.seen
    assert [(request.method, request.path) for request in seen] == [
        ("GET", "/page"),
        ("POST", "/form"),
        ("GET", "/ws"),
    ]
    for request in seen:
        everything = request.everything()
        for secret in (jupyter.token, login_value, XSRF):
            assert secret not in everything, (secret, everything)
        assert request.header("Cookie") is None
        assert request.header("Authorization") is None
        assert request.header("Referer") is None
        assert request.query == "keep=1"
    assert seen[0].header("Accept") == "text/html"
    assert seen[1].body == b"field=value"


# The dashboard's own Bokeh server: with drawn plots on, the page would wait for the recorder's.
@pytest.mark.parametrize("dashdock_config", [{"draw_key_plots": False}])
async def test_a_bokeh_session_through_the_proxy_carries_no_jupyter_credentials(
    jupyter: Jupyter, dashboard_url: str, jp_serverapp: Any
) -> None:
    # Bokeh copies the request's headers, cookies and arguments into the session token it puts in the page.
    source = await jupyter.add_source(dashboard_url)
    cookie = await jupyter.login_cookie()
    login_value = cookie.split("=", 1)[1]
    response = await jupyter.proxied(
        f"dashdock/proxy/{source['id']}/individual-task-stream?token={jupyter.token}&_xsrf={XSRF}",
        headers={"Cookie": f"{cookie}; _xsrf={XSRF}", "X-XSRFToken": XSRF},
    )
    assert response.code == 200
    # The page holds a stand-in (proxy/session_tokens.py); the dashboard's own token, which its
    # websocket gets back, is the one Bokeh packed the request into.
    shown = session_token(response.body.decode())
    assert set(session_payload(shown) or {}) == {"session_id", "session_expiry"}
    (app,) = jp_serverapp.extension_manager.extension_apps["dashdock"]
    payload = get_token_payload(app.session_tokens.original(shown, dashboard_url))
    assert "headers" in payload  # the check below looks where credentials would be
    decoded = repr(payload)
    for secret in (jupyter.token, login_value, XSRF):
        assert secret not in decoded
        assert secret.encode() not in response.body
    assert "cookies" not in payload or not payload["cookies"]


async def test_dashboard_cookies_are_confined_to_the_proxy_path(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    response = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/set-cookie")
    assert response.code == 200
    prefix = view_root(response)
    cookies = {}
    for raw in response.headers.get_list("Set-Cookie"):
        if raw.startswith("username-"):
            continue  # Jupyter's own login cookie (this request was token-authenticated)
        assert "domain" not in raw.lower(), raw
        parsed = SimpleCookie()
        parsed.load(raw)
        cookies.update({name: morsel for name, morsel in parsed.items()})
    assert set(cookies) == {"dash", "other"}
    assert cookies["dash"].value == "1"
    assert cookies["dash"]["path"] == prefix + "/"
    assert cookies["other"]["path"] == prefix + "/sub"
    assert cookies["other"]["httponly"]


@pytest.mark.parametrize(
    "location",
    [
        "http://10.9.9.9/x",
        "//10.9.9.9/x",
        "http://{allowed}@10.9.9.9/x",
        "http://{outsider}/x",
        "https://{allowed}/x",
    ],
)
async def test_a_redirect_off_the_dashboard_is_not_followed_nor_passed_on(
    jupyter: Jupyter, recorder: RecordingUpstream, outsider: RecordingUpstream, location: str
) -> None:
    to = location.format(allowed=recorder.netloc, outsider=outsider.netloc)
    response = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/redirect?to={to}")
    assert response.code == 502
    assert "Location" not in response.headers
    assert b"redirected to another host" in response.body
    assert outsider.seen == []
    assert [seen.path for seen in recorder.seen] == ["/redirect"]


async def test_a_redirect_within_the_dashboard_is_mapped_onto_the_proxy(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    response = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/redirect?to=/status%3Fa%3D1")
    assert response.code == 302
    assert response.headers["Location"] == view_root(response) + "/status?a=1"


@pytest.mark.parametrize(
    "path",
    [
        "%3Cscript%3Ealert(1)%3C/script%3E:1/",
        "%3Cscript%3Ealert(1)%3C%2Fscript%3E:1/",
        "<script>alert(1)</script>:1/",
        "127.0.0.1:1/%3Cscript%3Ealert(1)%3C/script%3E",
        "0123456789ab/%3Cscript%3Ealert(1)%3C/script%3E",
    ],
)
async def test_an_error_page_never_echoes_a_hostile_path(jupyter: Jupyter, path: str) -> None:
    response = await jupyter.proxied(f"dashdock/proxy/{path}")
    assert response.code >= 400
    body = response.body.decode()
    assert response.headers["Content-Type"].startswith("text/html")
    assert "<script" not in body.lower()
    assert "alert(1)" not in body or "&lt;script&gt;alert(1)" in body
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]


async def test_an_api_error_does_not_reflect_markup_as_html(jupyter: Jupyter) -> None:
    code, body = await jupyter.api("POST", "sources", {"url": "http://<script>alert(1)</script>:1"})
    assert code == 400
    assert "<script" not in json.dumps(body)
