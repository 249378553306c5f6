"""Credentials of dashboards behind authentication: added upstream to everything, never given back."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from _support import Jupyter, RecordingUpstream

from dashdock.errors import Invalid
from dashdock.sources.credentials import parse_credential

SECRET = "Bearer s3cret-5b1d"


@pytest.fixture
def dashdock_config(tmp_path: Path) -> dict[str, Any]:
    return {"credentials_file": str(tmp_path / "kept" / "credentials.json")}


async def test_a_credential_goes_upstream_with_every_request_and_never_back(
    jupyter: Jupyter, recorder: RecordingUpstream, tmp_path: Path
) -> None:
    credential = {"kind": "header", "name": "Authorization", "value": SECRET}
    code, source = await jupyter.api("POST", "sources", {"url": recorder.url, "credentials": credential})
    assert code == 201, source
    assert source["credentials"] == {"kind": "header", "name": "Authorization"}
    assert SECRET not in json.dumps(source)

    page = await jupyter.proxied(f"dashdock/proxy/{source['id']}/page?x=1")
    assert page.code == 200
    connection = await jupyter.websocket(f"dashdock/proxy/{source['id']}/ws")
    connection.close()
    code, listing = await jupyter.api("GET", "sources?check=1")
    assert code == 200 and SECRET not in json.dumps(listing)

    seen = [
        request for request in recorder.seen if request.path in ("/individual-plots.json", "/page", "/ws")
    ]
    assert {request.path for request in seen} == {"/individual-plots.json", "/page", "/ws"}
    assert all(request.header("Authorization") == SECRET for request in seen), [r.headers for r in seen]
    assert SECRET not in page.body.decode(errors="replace")

    kept = tmp_path / "kept" / "credentials.json"
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600
    # With the user who listened on its port when it was given (sources/listeners.py).
    assert json.loads(kept.read_text()) == {recorder.url: {**credential, "owner": os.getuid()}}
    assert not [line for line in jupyter.dashdock_warnings if SECRET in line]

    # Forgotten on request: the next requests go without, and the file no longer has it.
    code, source = await jupyter.api("PATCH", f"sources/{source['id']}", {"credentials": None})
    assert code == 200 and source["credentials"] is None
    recorder.clear()
    await jupyter.proxied(f"dashdock/proxy/{source['id']}/page")
    assert [request.header("Authorization") for request in recorder.seen] == [None]
    assert json.loads(kept.read_text()) == {}


async def test_a_query_credential_replaces_one_the_page_sent(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    credential = {"kind": "query", "name": "access", "value": "k3y"}
    _, source = await jupyter.api("POST", "sources", {"url": recorder.url, "credentials": credential})
    recorder.clear()
    await jupyter.proxied(f"dashdock/proxy/{source['id']}/page?access=forged&keep=1")
    [request] = recorder.seen
    assert request.query == "keep=1&access=k3y"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"kind": "header", "name": "X-Token", "value": "a\r\nHost: evil"}, "printable text"),
        ({"kind": "header", "name": "Host", "value": "x"}, "sets the Host header itself"),
        ({"kind": "header", "name": "Cookie", "value": "x"}, "sets the Cookie header itself"),
        ({"kind": "header", "name": "bad name", "value": "x"}, "letters, digits"),
        ({"kind": "script", "name": "x", "value": "x"}, "'header', 'query' or 'cookie'"),
        ({"kind": "query", "name": "x", "value": "v" * 4097}, "1 to 4096 characters"),
        ("Bearer x", "must be an object"),
    ],
)
def test_a_bad_credential_says_what_is_wrong_without_echoing_it(given: object, message: str) -> None:
    with pytest.raises(Invalid, match=message) as refused:
        parse_credential(given)
    value = given.get("value", "") if isinstance(given, dict) else given
    assert str(value) not in refused.value.reason


def test_a_credential_never_shows_its_value_in_a_repr() -> None:
    credential = parse_credential({"kind": "cookie", "name": "session", "value": "hidden-value"})
    assert "hidden-value" not in repr(credential)
    assert credential.describe() == {"kind": "cookie", "name": "session"}


async def test_an_api_call_with_a_bad_credential_is_refused_and_nothing_is_kept(
    jupyter: Jupyter, recorder: RecordingUpstream, tmp_path: Path
) -> None:
    bad = {"kind": "header", "name": "X-Token", "value": "tok3n\nbreak"}
    code, body = await jupyter.api("POST", "sources", {"url": recorder.url, "credentials": bad})
    assert code == 400 and "tok3n" not in body["message"]
    assert recorder.seen == []
    assert not (tmp_path / "kept" / "credentials.json").exists()


async def test_held_credentials_come_back_after_a_restart_and_a_damaged_file_loses_nothing_else(
    tmp_path: Path,
) -> None:
    import logging

    from dashdock.sources.credentials import HeldCredentials

    path = tmp_path / "credentials.json"
    first: dict[str, Any] = {}
    held = HeldCredentials(first, path, logging.getLogger("test"))
    credential = parse_credential({"kind": "header", "name": "Authorization", "value": SECRET})
    assert await held.put("http://127.0.0.1:8787", credential) == ""
    restarted: dict[str, Any] = {}
    assert await HeldCredentials(restarted, path, logging.getLogger("test")).load() == [
        "http://127.0.0.1:8787"
    ]
    assert restarted == {"http://127.0.0.1:8787": credential}
    # One damaged entry is left out; the good one still loads.
    document = json.loads(path.read_text())
    document["http://127.0.0.1:9999"] = {"kind": "header", "name": "Host", "value": "x"}
    path.write_text(json.dumps(document))
    again: dict[str, Any] = {}
    assert await HeldCredentials(again, path, logging.getLogger("test")).load() == ["http://127.0.0.1:8787"]
