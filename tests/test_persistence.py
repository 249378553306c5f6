"""User-added sources survive a server restart; a broken sources file never stops the server."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from _support import Jupyter

from dashdock.registry import SourceRegistry
from dashdock.targets import DEFAULT_ALLOWED_TARGETS, Allowlist
from dashdock.upstream import Timeouts, UpstreamClient


def _saved(sources_file: Path) -> Any:
    return json.loads(sources_file.read_text())


async def test_an_added_source_is_saved_and_found_again_after_a_restart(
    jupyter: Jupyter, dashboard_url: str, sources_file: Path
) -> None:
    code, source = await jupyter.api("POST", "sources", {"url": f"{dashboard_url}/status", "name": "Nightly"})
    assert code == 201
    saved = _saved(sources_file)
    assert saved == {"sources": [{"url": dashboard_url, "name": "Nightly"}]}

    # What a restarted server does with the same file.
    client = UpstreamClient(Timeouts(connect=5, json=10))
    registry = SourceRegistry(
        client, Allowlist(DEFAULT_ALLOWED_TARGETS), sources_file, logging.getLogger("test")
    )
    try:
        await registry.load()
        (restored,) = registry.list()
        assert (restored.id, restored.name, restored.dashboard.url) == (
            source["id"],
            "Nightly",
            dashboard_url,
        )
        plots = await registry.plots(restored.id)
        assert "Task Stream" in [plot.name for plot in plots]
    finally:
        await client.close()


async def test_a_deleted_source_is_removed_from_the_file(
    jupyter: Jupyter, dashboard_url: str, sources_file: Path
) -> None:
    source = await jupyter.add_source(dashboard_url)
    code, _ = await jupyter.api("DELETE", f"sources/{source['id']}")
    assert code == 204
    assert _saved(sources_file) == {"sources": []}


class TestAServerStartedWithSavedSources:
    @pytest.fixture
    def dashdock_config(self, sources_file: Path, dashboard_url: str) -> dict[str, Any]:
        sources_file.parent.mkdir(parents=True)
        entries = [
            {"url": dashboard_url, "name": "Saved cluster"},
            {"url": "http://10.1.2.3:8787", "name": "No longer allowed"},
        ]
        sources_file.write_text(json.dumps({"sources": entries}))
        return {}

    async def test_it_lists_the_saved_allowed_sources_and_shows_their_plots(
        self, jupyter: Jupyter, dashboard_url: str
    ) -> None:
        code, body = await jupyter.api("GET", "sources")
        assert code == 200
        assert [(source["name"], source["url"]) for source in body["sources"]] == [
            ("Saved cluster", dashboard_url)
        ]
        source_id = body["sources"][0]["id"]
        code, detail = await jupyter.api("GET", f"sources/{source_id}")
        assert (code, detail["health"]["status"]) == (200, "up")
        response = await jupyter.proxied(f"dashdock/proxy/{source_id}/individual-task-stream")
        assert response.code == 200


CORRUPT_FILES = {
    "not-json": "{not json",
    "binary": b"\xff\xfe\x00garbage",
    "a-list": "[]",
    "sources-null": '{"sources": null}',
    "entry-without-name": '{"sources": [{"url": "http://127.0.0.1:8787"}]}',
    "url-not-a-string": '{"sources": [{"url": 8787, "name": "x"}]}',
    "entry-not-an-object": '{"sources": ["http://127.0.0.1:8787"]}',
}


@pytest.mark.parametrize(
    "content",
    [pytest.param(value, id=key) for key, value in CORRUPT_FILES.items()],
)
class TestAServerStartedWithACorruptSourcesFile:
    @pytest.fixture
    def dashdock_config(self, sources_file: Path, content: str | bytes) -> dict[str, Any]:
        sources_file.parent.mkdir(parents=True)
        if isinstance(content, bytes):
            sources_file.write_bytes(content)
        else:
            sources_file.write_text(content)
        return {}

    async def test_it_starts_warns_and_saves_a_good_file_again(
        self, jupyter: Jupyter, dashboard_url: str, sources_file: Path
    ) -> None:
        warnings = jupyter.dashdock_warnings
        assert any("ignoring unreadable sources file" in message for message in warnings), warnings
        code, body = await jupyter.api("GET", "sources")
        assert (code, body) == (200, {"sources": []})

        await jupyter.add_source(dashboard_url)
        assert _saved(sources_file)["sources"][0]["url"] == dashboard_url


def test_no_sources_file_means_nothing_is_saved(tmp_path: Path) -> None:
    registry = SourceRegistry(
        UpstreamClient(Timeouts(connect=1, json=1)), Allowlist(["*"]), None, logging.getLogger("test")
    )
    assert registry.list() == []
    assert list(tmp_path.iterdir()) == []
