"""Proxied content never runs with the user's Jupyter session (the server's half; ui-tests has the browser's).

Pages are served only under view URLs, in an opaque origin, authenticated by a capability scoped to
one target, one user and a lifetime; proxy links only redirect there. Each test is named after the
attack it stops.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from _support import (
    HOSTILE_HEADERS,
    SANDBOX_POLICY,
    Jupyter,
    RecordingUpstream,
    sandbox_policies,
    view_root,
    websocket_refusal,
)

from dashdock.proxy.capabilities import Capabilities, Verdict


async def _view_url(
    jupyter: Jupyter, path: str, headers: dict[str, str] | None = None, auth: bool = True
) -> str:
    """Where the proxy link ``path`` sends a browser."""
    link = await jupyter.fetch(path, headers=headers, auth=auth)
    assert link.code == 302, link.body[:300]
    return link.headers["Location"]


async def test_a_proxy_link_never_serves_the_dashboards_content_in_the_labs_origin(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    link = await jupyter.fetch(f"dashdock/proxy/{recorder.netloc}/evil.html?token={jupyter.token}&a=1")
    assert link.code == 302
    assert link.body == b""
    location = link.headers["Location"]
    assert re.fullmatch(
        rf"{jupyter.path('dashdock/view/')}{re.escape(recorder.netloc)}/[0-9a-z]+\.[\w-]{{11}}\.[\w-]{{11}}\.[\w-]{{22}}/evil\.html\?a=1",
        location,
    ), location
    assert "no-store" in link.headers["Cache-Control"]
    assert recorder.seen == []  # nothing was asked of the dashboard for a link


async def test_every_proxied_response_runs_in_an_opaque_origin(
    jupyter: Jupyter, recorder: RecordingUpstream, dashboard_url: str
) -> None:
    page = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/page")
    assert page.headers.get_list("Content-Security-Policy")[0] == SANDBOX_POLICY
    assert page.headers["Referrer-Policy"] == "no-referrer"
    # Error pages and BokehJS served from the local bokeh too.
    missing = await jupyter.proxied("dashdock/proxy/127.0.0.1:1/x")
    assert missing.code == 502
    assert missing.headers["Content-Security-Policy"].startswith("sandbox;")
    scheduler = dashboard_url.removeprefix("http://")
    plot = await jupyter.proxied(f"dashdock/proxy/{scheduler}/individual-task-stream")
    (script,) = re.findall(r'src="(static/js/bokeh\.min\.js[^"]*)"', plot.body.decode())
    js = await jupyter.fetch(f"{view_root(plot)}/{script}", absolute=True, auth=False)
    assert js.code == 200
    sandbox, confinement = js.headers.get_list("Content-Security-Policy")
    assert sandbox == SANDBOX_POLICY
    assert confinement.startswith(f"default-src http://127.0.0.1:{jupyter.port}{view_root(plot)}/ ")


async def test_a_dashboards_response_headers_pass_only_by_allowlist(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    response = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/hostile-headers")
    assert response.code == 200
    names = {name.lower() for name in response.headers}
    dropped = {
        "access-control-allow-origin",
        "access-control-allow-credentials",
        "strict-transport-security",
        "service-worker-allowed",
        "x-evil",
        "www-authenticate",
        "refresh",
        "link",
        "content-security-policy-report-only",
    }
    assert names & dropped == set()
    assert response.headers.get("X-Frame-Options") is None
    assert response.headers["Cache-Control"] == HOSTILE_HEADERS["Cache-Control"]
    assert response.headers["Etag"] == HOSTILE_HEADERS["ETag"]
    # The dashboard's own policy is kept under dashdock's sandbox; only framing and reporting go.
    assert sandbox_policies(response) == [SANDBOX_POLICY, "script-src 'self'"]


async def test_a_picture_may_be_read_by_its_sandboxed_page_without_credentials(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    # Bokeh loads Task Groups' logos in CORS mode from the page's opaque origin: any origin may
    # read a picture, but never with credentials, whatever the dashboard says.
    view = await _view_url(jupyter, f"dashdock/proxy/{recorder.netloc}/statics/images/numpy.png")
    picture = await jupyter.fetch(view, headers={"Origin": "null"}, auth=False, absolute=True)
    assert picture.code == 200
    assert picture.body.startswith(b"\x89PNG")
    assert picture.headers.get_list("Access-Control-Allow-Origin") == ["*"]
    assert "Access-Control-Allow-Credentials" not in picture.headers
    # A page is no picture: it stays unreadable across origins.
    page = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/hostile-headers")
    assert "Access-Control-Allow-Origin" not in page.headers


async def test_a_service_worker_script_is_never_served(jupyter: Jupyter, recorder: RecordingUpstream) -> None:
    view = await _view_url(jupyter, f"dashdock/proxy/{recorder.netloc}/sw.js")
    asked = await jupyter.fetch(view, headers={"Service-Worker": "script"}, auth=False, absolute=True)
    assert asked.code == 403
    link = await jupyter.fetch(
        f"dashdock/proxy/{recorder.netloc}/sw.js", headers={"Service-Worker": "script"}
    )
    assert link.code == 403
    assert recorder.seen == []


async def test_a_capability_for_one_target_does_not_open_another(
    jupyter: Jupyter, recorder: RecordingUpstream, outsider: RecordingUpstream
) -> None:
    view = await _view_url(jupyter, f"dashdock/proxy/{recorder.netloc}/page")
    elsewhere = view.replace(recorder.netloc, outsider.netloc)
    response = await jupyter.fetch(elsewhere, auth=False, absolute=True)
    assert response.code == 403
    assert "not a valid view link" in response.body.decode()
    assert outsider.seen == []
    source = await jupyter.add_source(recorder.url)
    by_id = view.replace(f"/view/{recorder.netloc}/", f"/view/{source['id']}/")
    assert (await jupyter.fetch(by_id, auth=False, absolute=True)).code == 403
    recorder.clear()
    upgrade = await websocket_refusal(
        jupyter, elsewhere.replace("/page", "/ws"), auth=False, absolute=True, headers={"Origin": "null"}
    )
    assert upgrade == 403
    assert outsider.seen == [] and recorder.seen == []


@pytest.mark.parametrize(
    "capability",
    [
        "",
        "x",
        "zzzzzzzzzz.AAAAAAAAAAA.AAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",  # the right shape, guessed
        "{expiry}.{tag}.{nonce}.{mac_flipped}",  # one character of the MAC changed
        "zzzzzz.{tag}.{nonce}.{mac}",  # a later expiry under the old MAC
        "{expiry}.AAAAAAAAAAA.{nonce}.{mac}",  # another user's tag
        "{expiry}.{tag}.AAAAAAAAAAA.{mac}",  # another page load's nonce
        "{expiry}.{tag}.{mac}",  # the old shape, without a nonce
        "{expiry}.{tag}.{nonce}.{mac}x",
        "../{expiry}.{tag}.{nonce}.{mac}",
    ],
)
async def test_a_forged_or_guessed_capability_is_refused(
    jupyter: Jupyter, recorder: RecordingUpstream, capability: str
) -> None:
    view = await _view_url(jupyter, f"dashdock/proxy/{recorder.netloc}/page")
    prefix, genuine, rest = re.match(r"^(.*/view/[^/]+/)([^/]+)(/.*)$", view).groups()  # type: ignore[union-attr]
    expiry, tag, nonce, mac = genuine.split(".")
    flipped = ("B" if mac[0] == "A" else "A") + mac[1:]
    forged = capability.format(expiry=expiry, tag=tag, nonce=nonce, mac=mac, mac_flipped=flipped)
    response = await jupyter.fetch(prefix + forged + rest, auth=False, absolute=True)
    assert response.code in (403, 404)
    assert recorder.seen == []
    # The genuine one works, so the refusals above are about the capability.
    assert (await jupyter.fetch(view, auth=False, absolute=True)).code == 200


async def test_a_capability_of_another_browser_session_is_refused(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    # Each token login is its own (anonymous) user: two browsers of two people, say.
    alice, mallory = await jupyter.login_cookie(), await jupyter.login_cookie()
    view = await _view_url(jupyter, f"dashdock/proxy/{recorder.netloc}/page", {"Cookie": alice}, auth=False)
    assert (await jupyter.fetch(view, headers={"Cookie": alice}, auth=False, absolute=True)).code == 200
    recorder.clear()
    stolen = await jupyter.fetch(view, headers={"Cookie": mallory}, auth=False, absolute=True)
    assert stolen.code == 403
    assert "another user" in stolen.body.decode()
    assert recorder.seen == []


async def test_a_websocket_from_a_foreign_site_is_refused_on_a_view_url(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    view = await _view_url(jupyter, f"dashdock/proxy/{recorder.netloc}/ws")
    foreign = await websocket_refusal(
        jupyter, view, auth=False, absolute=True, headers={"Origin": "http://evil.example"}
    )
    assert foreign == 403
    assert recorder.seen == []
    # The sandboxed page's own websocket (origin "null") is relayed.
    connection = await jupyter.websocket(view, headers={"Origin": "null"}, auth=False, absolute=True)
    await connection.write_message("hello")
    assert await connection.read_message() == "hello"
    connection.close()


async def test_a_view_url_stolen_from_its_connected_page_opens_nothing_for_anyone_else(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    """Issue 40's attack: a task key rendered as markup by one of Dask's pages runs once the page
    has its document, over its websocket, and sends the page's URL to a listener. That URL, replayed
    from another machine (no cookie, no token), must open neither a page nor a websocket."""
    cookie = await jupyter.login_cookie()
    view = await _view_url(jupyter, f"dashdock/proxy/{recorder.netloc}/page", {"Cookie": cookie}, auth=False)
    root = view.rsplit("/", 1)[0]
    # The pane loads its page and connects, as a page in an opaque origin does.
    assert (await jupyter.fetch(view, auth=False, absolute=True)).code == 200
    page = await jupyter.websocket(root + "/ws", headers={"Origin": "null"}, auth=False, absolute=True)
    recorder.clear()

    # What the script sent: replayed for the page, another plot, the data and a websocket.
    for stolen in (view, root + "/other-plot", root + "/json/counts.json"):
        replay = await jupyter.fetch(stolen, auth=False, absolute=True)
        assert replay.code == 403, stolen
        assert "used by its page already" in replay.body.decode()
        navigation = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-Site": "none"}
        assert (await jupyter.fetch(stolen, headers=navigation, auth=False, absolute=True)).code == 403
    upgrade = await websocket_refusal(
        jupyter, root + "/ws", auth=False, absolute=True, headers={"Origin": "null"}
    )
    assert upgrade == 403
    assert recorder.seen == []

    # The page itself goes on: its websocket stays relayed, its public scripts still load.
    await page.write_message("still here")
    assert await page.read_message() == "still here"
    assert (await jupyter.fetch(root + "/static/js/bokeh.min.js", auth=False, absolute=True)).code != 403
    page.close()
    # The user's own browser clicking a link in the page (its opaque origin makes the navigation
    # "cross-site") or reloading it gets a page load of its own.
    own = {
        "Cookie": cookie,
        "Sec-Fetch-Mode": "navigate",
        "Sec-Fetch-Dest": "iframe",
        "Sec-Fetch-Site": "cross-site",
    }
    renewed = await jupyter.fetch(root + "/other-plot", headers=own, auth=False, absolute=True)
    assert renewed.code == 302
    assert renewed.headers["Location"].endswith("/other-plot") and root not in renewed.headers["Location"]
    assert (await jupyter.fetch(renewed.headers["Location"], auth=False, absolute=True)).code == 200


def test_a_capability_connects_once_and_is_remembered_until_it_expires() -> None:
    now = [1_000_000.0]
    capabilities = Capabilities(60, clock=lambda: now[0])
    first, second = capabilities.mint("t", "alice"), capabilities.mint("t", "alice")
    assert first != second  # each link is a page load of its own
    check = capabilities.check(first, "t")
    assert not capabilities.spent(check)
    assert capabilities.spend(check)
    assert capabilities.spent(check) and not capabilities.spend(check)
    assert not capabilities.spent(capabilities.check(second, "t"))
    now[0] += 61  # expired: refused by its expiry, and no longer kept
    assert capabilities.check(first, "t").verdict is Verdict.EXPIRED
    assert not capabilities.spend(capabilities.check(first, "t"))
    fresh = capabilities.check(capabilities.mint("t", "alice"), "t")
    assert capabilities.spend(fresh)
    assert len(capabilities._spent) == 1


class TestExpiry:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"view_link_lifetime": 1.0}

    async def test_a_capability_cannot_be_used_after_it_expires(
        self, jupyter: Jupyter, recorder: RecordingUpstream
    ) -> None:
        cookie = await jupyter.login_cookie()
        view = await _view_url(
            jupyter, f"dashdock/proxy/{recorder.netloc}/page", {"Cookie": cookie}, auth=False
        )
        assert (await jupyter.fetch(view, auth=False, absolute=True)).code == 200
        await asyncio.sleep(2.5)
        recorder.clear()
        expired = await jupyter.fetch(view, auth=False, absolute=True)
        assert expired.code == 403
        assert "expired" in expired.body.decode()
        upgrade = await websocket_refusal(
            jupyter, view.replace("/page", "/ws"), auth=False, absolute=True, headers={"Origin": "null"}
        )
        assert upgrade == 403
        # A page's own request, even with the user's cookie, is not renewed...
        fetched = await jupyter.fetch(
            view, headers={"Cookie": cookie, "Sec-Fetch-Mode": "cors"}, auth=False, absolute=True
        )
        assert fetched.code == 403
        assert recorder.seen == []
        # ...but the signed-in user navigating to it (a tab left open, reloaded) gets a fresh link.
        navigation = {"Cookie": cookie, "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
        renewed = await jupyter.fetch(view, headers=navigation, auth=False, absolute=True)
        assert renewed.code == 302
        assert renewed.headers["Location"] != view
        assert (await jupyter.fetch(renewed.headers["Location"], auth=False, absolute=True)).code == 200
        # Without the session, a navigation is refused like any other request.
        anonymous = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
        assert (await jupyter.fetch(view, headers=anonymous, auth=False, absolute=True)).code == 403


def test_capabilities_are_bound_to_target_user_expiry_and_key() -> None:
    now = [1_000_000.0]
    capabilities = Capabilities(60, clock=lambda: now[0])
    capability = capabilities.mint("127.0.0.1:8787", "alice")
    assert capabilities.check(capability, "127.0.0.1:8787").verdict is Verdict.VALID
    assert capabilities.check(capability, "127.0.0.1:8787").user_tag == capabilities.user_tag("alice")
    assert capabilities.user_tag("alice") != capabilities.user_tag("bob")
    assert capabilities.check(capability, "127.0.0.1:8788").verdict is Verdict.INVALID
    # Another server (or this one restarted) has another key.
    assert (
        Capabilities(60, clock=lambda: now[0]).check(capability, "127.0.0.1:8787").verdict is Verdict.INVALID
    )
    now[0] += 61
    assert capabilities.check(capability, "127.0.0.1:8787").verdict is Verdict.EXPIRED


async def test_every_plot_of_the_catalog_opens_sandboxed_through_its_link(
    jupyter: Jupyter, dashboard_url: str
) -> None:
    source = await jupyter.add_source(dashboard_url)
    code, body = await jupyter.api("GET", f"sources/{source['id']}/plots")
    assert code == 200
    for plot in body["plots"]:
        page = await jupyter.proxied(plot["url"], absolute=True)
        assert page.code == 200, (plot["name"], page.body[:300])
        assert page.headers.get_list("Content-Security-Policy")[0] == SANDBOX_POLICY, plot["name"]
        assert b"<script" in page.body, plot["name"]
