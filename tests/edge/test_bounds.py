"""No input or load exhausts the server: bodies, nesting, unicode, and health checks of many sources.

Each test is named after what it stops; each failed on the code before the bounds (a 500, a hang, a
socket per source).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
from collections.abc import Iterator
from typing import Any

import pytest
from _dashboards import FakeDashboard
from _support import Jupyter

from dashdock.sources.model import Health


@pytest.fixture
def fake_dashboard() -> Iterator[FakeDashboard]:
    dashboard = FakeDashboard()
    yield dashboard
    dashboard.close()


def _registry(jp_serverapp: Any) -> Any:
    (app,) = jp_serverapp.extension_manager.extension_apps["dashdock"]
    return app.registry


async def _raw_request(jupyter: Jupyter, head: str, body: bytes = b"", read_timeout: float = 10) -> bytes:
    """Send a request by hand (a body that lies about its length, one that never ends)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", jupyter.port)
    try:
        writer.write(head.encode() + body)
        await writer.drain()
        return await asyncio.wait_for(reader.read(65536), read_timeout)
    finally:
        writer.close()


async def test_a_huge_json_body_is_refused_before_it_is_read(jupyter: Jupyter) -> None:
    # 100 MB announced, a few bytes sent: the answer comes at once, from the announcement alone.
    head = (
        f"POST {jupyter.path('dashdock/api/sources')} HTTP/1.1\r\nHost: 127.0.0.1:{jupyter.port}\r\n"
        f"Authorization: token {jupyter.token}\r\nContent-Type: application/json\r\n"
        "Content-Length: 100000000\r\n\r\n"
    )
    answer = await _raw_request(jupyter, head, b'{"url": "')
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"max_request_body" in answer
    assert (await jupyter.fetch("api/status")).code == 200


async def test_a_chunked_body_past_the_limit_is_cut_off(jupyter: Jupyter) -> None:
    head = (
        f"POST {jupyter.path('dashdock/api/sources')} HTTP/1.1\r\nHost: 127.0.0.1:{jupyter.port}\r\n"
        f"Authorization: token {jupyter.token}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"x" * 65536
    body = (f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n") * 40  # 2.5 MiB, past the 1 MiB limit
    answer = await _raw_request(jupyter, head, body)
    assert answer == b"" or answer.startswith((b"HTTP/1.1 400", b"HTTP/1.1 413")), answer[:200]
    assert (await jupyter.fetch("api/status")).code == 200


@pytest.mark.parametrize(
    "payload",
    [
        "[" * 200_000 + "]" * 200_000,  # nested too deep for the parser
        '{"url": ' + "[" * 50_000 + "]" * 50_000 + "}",
        '{"url": "http://127.0.0.1:8787/\\ud800"}',  # a lone surrogate: valid JSON, not text
        '{"url": "127.0.0.1:8787", "name": "\\udfff"}',
        '{"url": "http://127.0.0.1:8787", "name": 1e999}',
        '{"url": 12345678901234567890123456789}',
        '{"url": "http://[::1:8787"}',
        '{"url": "http://127.0.0.1:99999999999999999999"}',
        '"just a string"',
        "\xff\xfe",
    ],
)
async def test_malformed_input_to_the_sources_api_gets_a_4xx_with_a_message(
    jupyter: Jupyter, payload: str
) -> None:
    code, body = await jupyter.api("POST", "sources", raw=payload)
    assert 400 <= code < 500, (code, body)
    assert body["message"]


async def test_a_lone_surrogate_in_a_proxy_path_is_not_a_500(
    jupyter: Jupyter, fake_dashboard: FakeDashboard
) -> None:
    response = await jupyter.proxied(f"dashdock/proxy/127.0.0.1:{fake_dashboard.port}/%ED%A0%80")
    assert response.code < 500 or response.code in (502, 504), response.code


async def test_a_plot_list_nested_too_deep_or_too_large_is_a_clear_502(
    jupyter: Jupyter, fake_dashboard: FakeDashboard
) -> None:
    source = await jupyter.add_source(fake_dashboard.url)
    # The dashboard turns hostile after it was added: its plot list is refused with the reason.
    fake_dashboard.plots_document = "[" * 200_000 + "]" * 200_000
    code, body = await jupyter.api("GET", f"sources/{source['id']}/plots")
    assert code == 502
    assert "nested too deeply" in body["message"]
    fake_dashboard.plots_document = json.dumps(
        {f"Individual Plot {i}": f"/individual-{i}" for i in range(150_000)}
    )
    code, body = await jupyter.api("GET", f"sources/{source['id']}/plots")
    assert code == 502
    assert "larger than 4 MiB" in body["message"]
    # And when it is added that way.
    await jupyter.api("DELETE", f"sources/{source['id']}")
    fake_dashboard.plots_document = "[" * 200_000 + "]" * 200_000
    code, body = await jupyter.api("POST", "sources", {"url": fake_dashboard.url})
    assert code == 502
    assert "nested too deeply" in body["message"]


class TestManySources:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"health_checks_per_poll": 500}

    async def test_health_checks_of_2000_sources_under_a_low_fd_limit(
        self, jupyter: Jupyter, jp_serverapp: Any, fake_dashboard: FakeDashboard
    ) -> None:
        registry = _registry(jp_serverapp)
        for i in range(2000):
            source = registry.point(f"many{i:08d}", f"many {i}", "cluster", f"{fake_dashboard.url}/s{i}")
            source.health = Health()  # not checked yet: only a check can make it "up"
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        # Room for what is open now and a little more: a socket per source would not fit.
        limit = len(os.listdir("/proc/self/fd")) + 150
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
        statuses: list[int] = []
        try:
            polling = True

            async def poll_status() -> None:
                while polling:
                    statuses.append((await jupyter.fetch("api/status")).code)
                    await asyncio.sleep(0.02)

            watcher = asyncio.ensure_future(poll_status())
            for _ in range(8):  # the sidebar polls; each poll checks at most 500 sources
                code, body = await jupyter.api("GET", "sources?check=1")
                assert code == 200
                if all(
                    item["health"]["status"] == "up"
                    for item in body["sources"]
                    if item["id"].startswith("many")
                ):
                    break
            polling = False
            await watcher
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        many = [item for item in body["sources"] if item["id"].startswith("many")]
        assert len(many) == 2000
        assert [item["name"] for item in many if item["health"]["status"] != "up"] == []
        assert statuses and set(statuses) == {200}

    async def test_a_poll_checks_at_most_its_budget_however_many_sources(
        self, jupyter: Jupyter, jp_serverapp: Any, fake_dashboard: FakeDashboard
    ) -> None:
        registry = _registry(jp_serverapp)
        for i in range(1200):
            registry.point(f"many{i:08d}", f"many {i}", "cluster", f"{fake_dashboard.url}/s{i}")
        await jupyter.api("GET", "sources?check=1")
        assert fake_dashboard.health_requests == 500
        await jupyter.api("GET", "sources?check=1")
        await jupyter.api("GET", "sources?check=1")
        # Three polls reached every source once: the least recently checked go first.
        assert fake_dashboard.health_requests == 1200 + 300
        _, body = await jupyter.api("GET", "sources")
        assert all(item["health"]["status"] == "up" for item in body["sources"])


HOSTILE_VALUES = [
    None,
    True,
    -1,
    1.5,
    1e308,
    10**30,
    "",
    "x" * 5000,
    "\ud800",
    "<script>alert(1)</script>",
    [],
    {"nested": {"deeper": [1, 2, 3]}},
]


class TestMalformedValues:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"max_clusters": 0}  # a well-formed request is refused at the limit, and starts nothing

    @pytest.mark.parametrize("value", HOSTILE_VALUES, ids=repr)
    async def test_no_endpoint_answers_500_to_malformed_values(self, jupyter: Jupyter, value: Any) -> None:
        calls = [
            ("POST", "sources", {"url": value}),
            ("POST", "sources", {"url": "127.0.0.1:1", "name": value}),
            ("PATCH", "panes/pane-1", {"paused": value}),
            ("PATCH", "panes/pane-1", {"interval": value}),
            ("PATCH", "panes/pane-1", {"paused": False, "interval": 0, "other": value}),
            ("POST", "clusters", {"workers": value}),
            ("POST", "clusters", {"name": value}),
            ("POST", "clusters", {"adapt": value}),
            ("POST", "clusters", {"adapt": {"minimum": value, "maximum": 2}}),
        ]
        for method, path, body in calls:
            code, answer = await jupyter.api(method, path, body)
            # 502: a well-formed URL of a dashboard that is not there, which is the right answer.
            assert code < 500 or code == 502, (method, path, body, code, answer)
        for query in (f"dashboard={value}", f"dashboard=http://127.0.0.1:1&kernel={value}"):
            response = await jupyter.fetch(f"dashdock/api/summary?{query}".replace("\ud800", "%ED%A0%80"))
            assert response.code < 500 or response.code in (502, 504), (query, response.code)


async def test_a_poll_since_its_last_version_gets_only_what_changed(
    jupyter: Jupyter, jp_serverapp: Any, fake_dashboard: FakeDashboard
) -> None:
    registry = _registry(jp_serverapp)
    for i in range(300):
        registry.point(f"few{i:08d}", f"few {i}", "cluster", f"{fake_dashboard.url}/s{i}")
    _, whole = await jupyter.api("GET", "sources")
    assert len(whole["sources"]) == 300 and "ids" not in whole
    _, quiet = await jupyter.api("GET", f"sources?since={whole['version']}")
    assert quiet["sources"] == [] and len(quiet["ids"]) == 300
    # A check that finds what the last one found changes nothing people see; a rename does.
    await jupyter.api("GET", "sources?check=1")
    registry.point("few00000007", "renamed", "cluster", f"{fake_dashboard.url}/s7")
    registry.unregister("few00000009")
    _, delta = await jupyter.api("GET", f"sources?check=1&since={quiet['version']}")
    assert [source["name"] for source in delta["sources"]] == ["renamed"]
    assert len(delta["ids"]) == 299 and "few00000009" not in delta["ids"]
    # A version from another server (or before a restart) gets everything.
    _, again = await jupyter.api("GET", "sources?since=feedbeef.1")
    assert len(again["sources"]) == 299 and "ids" not in again
