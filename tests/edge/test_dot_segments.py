"""Dot segments never take a proxied request out of its dashboard's root.

A path such as ``../../secret`` after a view or proxy URL, raw or percent-encoded in any spelling,
would reach the dashboard with the credentials the server holds for it, and a front that
normalises paths would serve what lies outside the dashboard's root. dashdock refuses such a path
(403, with the reason) before anything is sent upstream. Requests are sent as written, with the
test client, since a browser would resolve the raw ones itself.
"""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from _support import Jupyter, RecordingUpstream, view_root, websocket_refusal

from dashdock.targets import has_dot_segment

ROOT = "/sub/dash"  # the recording server's second dashboard, as behind another proxy

SPELLINGS = [
    "../../secret",
    "../secret",
    "a/../../../secret",
    "./../secret",
    "..",
    "%2e%2e/%2e%2e/secret",
    "%2E%2e/secret",
    "%2e%2E/secret",
    ".%2e/secret",
    "%2e./secret",
    "..%2f..%2fsecret",
    "..%2F..%2Fsecret",
    "%2e%2e%2f%2e%2e%2fsecret",
    "..\\..\\secret",
    "..%5c..%5csecret",
    "%2e%2e%5Csecret",
    "%252e%252e/secret",
    "..;/secret",
    "./secret",
]


async def _source_with_root(jupyter: Jupyter, recorder: RecordingUpstream) -> str:
    source = await jupyter.add_source(f"{recorder.url}{ROOT}")
    assert source["url"] == f"{recorder.url}{ROOT}"
    source_id: str = source["id"]
    return source_id


async def _view_prefix(jupyter: Jupyter, source_id: str) -> str:
    page = await jupyter.proxied(f"dashdock/proxy/{source_id}/page")
    assert page.code == 200, page.body[:300]
    return view_root(page)


def _outside_root(recorder: RecordingUpstream) -> list[str]:
    """Paths the dashboard received that are not plainly inside the dashboard's root."""
    return [
        seen.path
        for seen in recorder.seen
        if not seen.path.startswith(ROOT + "/") or has_dot_segment(seen.path) or "\\" in unquote(seen.path)
    ]


def _refused(code: int, body: bytes) -> None:
    assert code == 403, (code, body[:300])
    assert b"segments" in body, body[:300]


@pytest.mark.parametrize("spelling", SPELLINGS)
async def test_a_view_url_with_dot_segments_is_refused_and_nothing_leaves_the_root(
    jupyter: Jupyter, recorder: RecordingUpstream, spelling: str
) -> None:
    source_id = await _source_with_root(jupyter, recorder)
    prefix = await _view_prefix(jupyter, source_id)
    recorder.clear()

    response = await jupyter.fetch(f"{prefix}/{spelling}", auth=False, absolute=True)
    _refused(response.code, response.body)
    post = await jupyter.fetch(
        f"{prefix}/{spelling}", "POST", b"x=1", headers={"Origin": "null"}, auth=False, absolute=True
    )
    _refused(post.code, post.body)
    assert await websocket_refusal(jupyter, f"{prefix}/{spelling}", auth=False, absolute=True) == 403
    assert recorder.seen == []


@pytest.mark.parametrize("spelling", SPELLINGS)
async def test_a_proxy_link_with_dot_segments_is_refused_and_nothing_leaves_the_root(
    jupyter: Jupyter, recorder: RecordingUpstream, spelling: str
) -> None:
    source_id = await _source_with_root(jupyter, recorder)
    recorder.clear()

    for target in (source_id, recorder.netloc):
        response = await jupyter.fetch(f"dashdock/proxy/{target}/{spelling}")
        _refused(response.code, response.body)  # never a redirect to a view URL that carries them
        assert "Location" not in response.headers
        assert await websocket_refusal(jupyter, f"dashdock/proxy/{target}/{spelling}") == 403
    assert _outside_root(recorder) == []
    assert recorder.seen == []


async def test_paths_inside_the_root_still_reach_the_dashboard(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    source_id = await _source_with_root(jupyter, recorder)
    prefix = await _view_prefix(jupyter, source_id)
    recorder.clear()
    inside = [
        "status",
        "info/worker/tcp%3A%2F%2F127.0.0.1%3A4000.html",  # Dask's worker pages: encoded slashes
        "a..b/c.d",
        ".../x",
        ".hidden/..x/x..",
    ]
    for path in inside:
        response = await jupyter.fetch(f"{prefix}/{path}", auth=False, absolute=True)
        assert response.code == 200, (path, response.body[:300])
    assert [seen.path for seen in recorder.seen] == [f"{ROOT}/{path}" for path in inside]
    assert _outside_root(recorder) == []


@pytest.mark.parametrize("spelling", ["..", "a/../b", "%2e%2e", "x/%2E%2e", "..%2fsecret", "x\\..\\y"])
async def test_a_dashboard_url_with_dot_segments_cannot_be_added(
    jupyter: Jupyter, recorder: RecordingUpstream, spelling: str
) -> None:
    code, body = await jupyter.api("POST", "sources", {"url": f"{recorder.url}{ROOT}/{spelling}"})
    assert code == 400, body
    assert recorder.seen == []


@pytest.mark.parametrize("path", [f"/{spelling}" for spelling in SPELLINGS])
def test_every_spelling_is_a_dot_segment(path: str) -> None:
    assert has_dot_segment(path)
