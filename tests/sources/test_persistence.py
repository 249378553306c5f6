"""User-added sources survive a server restart, and the sources file is a store a user can trust:
read entry by entry, nothing deleted that the user did not remove, an unreadable file moved aside
(never overwritten), failed saves told to the user, and the file private to its user.

"A restart" is a fresh ``SourceRegistry`` on the same file, as the next server would build it.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from _sources import restarted
from _support import Jupyter, RecordingUpstream

from dashdock.sources.registry import SourceRegistry
from dashdock.targets import Allowlist
from dashdock.upstream import Timeouts, UpstreamClient


def usable(listing: dict[str, Any]) -> list[dict[str, Any]]:
    return [source for source in listing["sources"] if not source.get("disabled")]


def disabled(listing: dict[str, Any]) -> list[dict[str, Any]]:
    return [source for source in listing["sources"] if source.get("disabled")]


def write_legacy(sources_file: Path, entries: list[Any]) -> bytes:
    """The JSON file earlier versions kept; dashdock imports it once."""
    sources_file.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps({"sources": entries}, indent=1).encode()
    sources_file.write_bytes(raw)
    return raw


async def test_an_added_source_is_saved_and_found_again_after_a_restart(
    jupyter: Jupyter, dashboard_url: str, sources_file: Path
) -> None:
    code, source = await jupyter.api("POST", "sources", {"url": f"{dashboard_url}/status", "name": "Nightly"})
    assert code == 201
    assert "warning" not in source

    async with restarted(sources_file) as registry:
        (restored,) = registry.list()
        assert (restored.id, restored.name, restored.dashboard.url) == (
            source["id"],
            "Nightly",
            dashboard_url,
        )
        plots = await registry.plots(restored.id)
        assert "Task Stream" in [plot.name for plot in plots]


async def test_a_configured_source_is_not_saved_as_the_users(dashboard_url: str, tmp_path: Path) -> None:
    # initial_sources come from the configuration, at every start: saved, they outlived it (the
    # demo's dashboard on a port of the day stayed, dead, in every later server's sidebar).
    sources_file = tmp_path / "sources.db"
    async with restarted(sources_file) as registry:
        await registry.add_initial([{"url": dashboard_url, "name": "Configured"}])
        assert [source.name for source in registry.list()] == ["Configured"]
    async with restarted(sources_file) as registry:
        assert registry.list() == []


async def test_a_deleted_source_is_removed_from_the_file(
    jupyter: Jupyter, dashboard_url: str, sources_file: Path
) -> None:
    source = await jupyter.add_source(dashboard_url)
    code, _ = await jupyter.api("DELETE", f"sources/{source['id']}")
    assert code == 204
    async with restarted(sources_file) as registry:
        assert registry.list() == []


async def test_the_sources_file_is_readable_by_its_user_only(
    jupyter: Jupyter, dashboard_url: str, sources_file: Path
) -> None:
    await jupyter.add_source(dashboard_url)
    assert os.stat(sources_file).st_mode & 0o777 == 0o600


class TestAServerStartedWithTheFileOfAnEarlierVersion:
    @pytest.fixture
    def dashdock_config(self, sources_file: Path, dashboard_url: str) -> dict[str, Any]:
        entries = [
            {"url": dashboard_url, "name": "Saved cluster"},
            {"url": "http://10.1.2.3:8787", "name": "No longer allowed"},
        ]
        self.raw = write_legacy(sources_file, entries)
        return {}

    async def test_it_imports_every_entry_and_keeps_the_old_file(
        self, jupyter: Jupyter, dashboard_url: str, sources_file: Path
    ) -> None:
        code, body = await jupyter.api("GET", "sources")
        assert code == 200
        assert [(source["name"], source["url"]) for source in usable(body)] == [
            ("Saved cluster", dashboard_url)
        ]
        assert [(source["name"], source["url"]) for source in disabled(body)] == [
            ("No longer allowed", "http://10.1.2.3:8787")
        ]
        source_id = usable(body)[0]["id"]
        code, detail = await jupyter.api("GET", f"sources/{source_id}")
        assert (code, detail["health"]["status"]) == (200, "up")
        response = await jupyter.proxied(f"dashdock/proxy/{source_id}/individual-task-stream")
        assert response.code == 200

        (kept,) = sources_file.parent.glob("sources.json.imported-*")
        assert kept.read_bytes() == self.raw


class TestAnUpgradeFromTheDefaultJSONFile:
    """Earlier versions kept ``sources.json`` where the database (``sources.db``) now is by default."""

    @pytest.fixture
    def dashdock_config(
        self, tmp_path: Path, dashboard_url: str, recorder: RecordingUpstream
    ) -> dict[str, Any]:
        self.database = tmp_path / "data" / "dashdock" / "sources.db"
        self.legacy = self.database.with_name("sources.json")
        self.raw = write_legacy(
            self.legacy, [{"url": dashboard_url, "name": "Kept"}, {"url": recorder.url, "name": "Removed"}]
        )
        return {"sources_file": str(self.database)}

    async def test_its_sources_are_imported_once_and_the_file_kept_aside(self, jupyter: Jupyter) -> None:
        _, body = await jupyter.api("GET", "sources")
        assert [source["name"] for source in usable(body)] == ["Kept", "Removed"]
        assert not self.legacy.exists()
        (kept,) = self.legacy.parent.glob("sources.json.imported-*")
        assert kept.read_bytes() == self.raw

        removed = usable(body)[1]
        code, _ = await jupyter.api("DELETE", f"sources/{removed['id']}")
        assert code == 204
        async with restarted(self.database) as registry:
            assert [source.name for source in registry.list()] == ["Kept"]


class TestAFileWithBadEntriesInTheMiddle:
    """Today's one bad entry used to hide every entry after it, and the next save deleted them."""

    @pytest.fixture
    def dashdock_config(
        self, sources_file: Path, dashboard_url: str, recorder: RecordingUpstream
    ) -> dict[str, Any]:
        write_legacy(
            sources_file,
            [
                {"url": dashboard_url, "name": "First"},
                {"url": 8787, "name": "Port only"},
                "http://127.0.0.1:8787",
                {"name": "No URL at all"},
                {"url": "http://", "name": "Malformed"},
                {"url": recorder.url},  # no name: it is the host and port
            ],
        )
        return {}

    async def test_every_good_entry_loads_and_the_bad_ones_are_kept_disabled(
        self, jupyter: Jupyter, recorder: RecordingUpstream, sources_file: Path
    ) -> None:
        _, body = await jupyter.api("GET", "sources")
        assert [source["name"] for source in usable(body)] == ["First", recorder.netloc]
        bad = disabled(body)
        assert len(bad) == 4
        assert all(source["disabled"] for source in bad)
        assert "Malformed" in [source["name"] for source in bad]
        bad_ids = {source["id"] for source in bad}

        # A disabled source is no dashboard: no plots, no proxy, with the reason.
        malformed = next(source for source in bad if source["name"] == "Malformed")
        code, answer = await jupyter.api("GET", f"sources/{malformed['id']}/plots")
        assert code == 409
        assert malformed["disabled"] in answer["message"]
        response = await jupyter.proxied(f"dashdock/proxy/{malformed['id']}/status")
        assert response.code >= 400

        # A later add writes its own entry; the bad ones stay in the file.
        created = await jupyter.add_source(f"{recorder.url}/sub/dash")
        assert "warning" not in created
        async with restarted(sources_file) as registry:
            assert [source.name for source in registry.list()] == ["First", recorder.netloc, recorder.netloc]
            assert {source.id for source in registry.disabled()} == bad_ids

        # The user can remove a disabled entry, and only that one goes.
        code, _ = await jupyter.api("DELETE", f"sources/{malformed['id']}")
        assert code == 204
        _, body = await jupyter.api("GET", "sources")
        assert malformed["id"] not in {source["id"] for source in body["sources"]}
        async with restarted(sources_file) as registry:
            assert {source.id for source in registry.disabled()} == bad_ids - {malformed["id"]}
            assert len(registry.list()) == 3


class TestANarrowedAllowlist:
    """A run with a narrower allowlist keeps the sources it no longer allows, disabled."""

    @pytest.fixture
    def dashdock_config(
        self, sources_file: Path, dashboard_url: str, dashboard_port: int, recorder: RecordingUpstream
    ) -> dict[str, Any]:
        write_legacy(
            sources_file,
            [{"url": recorder.url, "name": "Elsewhere"}, {"url": dashboard_url, "name": "Here"}],
        )
        return {"allowed_targets": [f"127.0.0.1:{dashboard_port}"]}

    async def test_the_source_is_kept_disabled_and_comes_back_when_allowed_again(
        self, jupyter: Jupyter, dashboard_url: str, recorder: RecordingUpstream, sources_file: Path
    ) -> None:
        _, body = await jupyter.api("GET", "sources")
        assert [source["name"] for source in usable(body)] == ["Here"]
        (elsewhere,) = disabled(body)
        assert elsewhere["name"] == "Elsewhere"
        assert "allowed" in elsewhere["disabled"]

        # Unreachable through the proxy, by its id and by its address.
        recorder.clear()
        response = await jupyter.proxied(f"dashdock/proxy/{elsewhere['id']}/status")
        assert response.code >= 400
        response = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/status")
        assert response.code == 403
        assert recorder.seen == []

        # A save in this run (a rename) leaves it in the file.
        code, renamed = await jupyter.api("POST", "sources", {"url": dashboard_url, "name": "Renamed"})
        assert (code, renamed["name"]) == (200, "Renamed")

        async with restarted(sources_file) as registry:
            assert {source.name: source.id for source in registry.list()} == {
                "Elsewhere": elsewhere["id"],
                "Renamed": renamed["id"],
            }
            assert registry.disabled() == []


TRUNCATED = json.dumps(
    {
        "sources": [
            {"url": "http://127.0.0.1:8787", "name": "A"},
            {"url": "http://127.0.0.1:8788", "name": "B"},
        ]
    }
)[:50]

UNREADABLE_FILES = {
    "truncated-json": TRUNCATED.encode(),
    "not-json": b"{not json",
    "binary": b"\xff\xfe\x00garbage",
    "a-list": b"[]",
    "sources-null": b'{"sources": null}',
    "damaged-database": b"SQLite format 3\x00" + b"\x07" * 4000,
}


@pytest.mark.parametrize(
    "content",
    [pytest.param(value, id=key) for key, value in UNREADABLE_FILES.items()],
)
class TestAServerStartedWithAnUnreadableSourcesFile:
    @pytest.fixture
    def dashdock_config(self, sources_file: Path, content: bytes) -> dict[str, Any]:
        sources_file.parent.mkdir(parents=True)
        sources_file.write_bytes(content)
        return {}

    async def test_it_moves_the_file_aside_tells_the_user_and_keeps_new_sources(
        self, jupyter: Jupyter, dashboard_url: str, sources_file: Path, content: bytes
    ) -> None:
        (aside,) = sources_file.parent.glob("sources.json.bad-*")
        assert aside.read_bytes() == content
        code, body = await jupyter.api("GET", "sources")
        assert (code, body["sources"]) == (200, [])
        assert any(aside.name in warning for warning in body["warnings"]), body["warnings"]

        source = await jupyter.add_source(dashboard_url)
        assert "warning" not in source
        assert aside.read_bytes() == content
        async with restarted(sources_file) as registry:
            assert [restored.id for restored in registry.list()] == [source["id"]]
            assert registry.warnings == []


UNUSABLE_PATHS = {
    "a-directory": lambda path: path.mkdir(parents=True),
    "below-a-file": lambda path: path.parent.write_text("a file, not a directory"),
}


@pytest.mark.parametrize("make_unusable", [pytest.param(v, id=k) for k, v in UNUSABLE_PATHS.items()])
class TestASourcesFileThatCannotBeWritten:
    @pytest.fixture
    def dashdock_config(self, tmp_path: Path, make_unusable: Any) -> dict[str, Any]:
        self.path = tmp_path / "unusable" / "sources.db"
        self.path.parent.parent.mkdir(exist_ok=True)
        make_unusable(self.path)
        return {"sources_file": str(self.path)}

    async def test_a_source_is_added_with_a_warning_that_it_was_not_saved(
        self, jupyter: Jupyter, dashboard_url: str
    ) -> None:
        code, source = await jupyter.api("POST", "sources", {"url": dashboard_url})
        assert code == 201
        assert "not saved" in source["warning"]
        _, body = await jupyter.api("GET", "sources")
        assert body["sources"][0]["warning"] == source["warning"]
        assert body["warnings"]


async def test_a_save_that_fails_later_is_told_to_the_user(
    jupyter: Jupyter, dashboard_url: str, recorder: RecordingUpstream, sources_file: Path
) -> None:
    first = await jupyter.add_source(dashboard_url)
    # The file's place becomes a directory while the server runs.
    os.unlink(sources_file)
    os.mkdir(sources_file)

    code, second = await jupyter.api("POST", "sources", {"url": recorder.url})
    assert code == 201
    assert "not saved" in second["warning"]
    code, answer = await jupyter.api("DELETE", f"sources/{first['id']}")
    assert code == 200
    assert "come back after a server restart" in answer["warning"]


class TestASymlinkPlantedWhereTheFileIsWritten:
    """Names written next to the file (the fixed ``sources.tmp`` of earlier versions, SQLite's
    journal) may already be symlinks, planted by someone who could write in the directory: nothing
    is written through them."""

    @pytest.fixture(params=["sources.tmp", "sources.json-journal"])
    def planted(self, request: pytest.FixtureRequest) -> str:
        return request.param

    @pytest.fixture
    def dashdock_config(self, sources_file: Path, tmp_path: Path, planted: str) -> dict[str, Any]:
        sources_file.parent.mkdir(parents=True)
        self.victim = tmp_path / "victim"
        self.victim.write_text("precious\n")
        os.symlink(self.victim, sources_file.parent / planted)
        return {}

    async def test_nothing_is_written_through_it(
        self, jupyter: Jupyter, dashboard_url: str, recorder: RecordingUpstream, sources_file: Path
    ) -> None:
        added = [await jupyter.add_source(dashboard_url), await jupyter.add_source(recorder.url)]
        assert self.victim.read_text() == "precious\n"
        # Saved, or the user was told it was not (SQLite refuses to open a symlinked journal).
        async with restarted(sources_file) as registry:
            restored = {source.id for source in registry.list()}
        for source in added:
            assert source["id"] in restored or "not saved" in source["warning"]
        assert self.victim.read_text() == "precious\n"


def test_no_sources_file_means_nothing_is_saved(tmp_path: Path) -> None:
    registry = SourceRegistry(
        UpstreamClient(Timeouts(connect=1, json=1)), Allowlist(["*"]), None, logging.getLogger("test")
    )
    assert registry.list() == []
    assert list(tmp_path.iterdir()) == []
