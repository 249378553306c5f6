"""The REST API under {base_url}dashdock/api/, against a real Dask LocalCluster."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from _support import Jupyter, RecordingUpstream, closed_loopback_port

from dashdock.sources.catalog import GROUPS


async def test_a_dashboard_added_by_any_of_its_urls_is_one_source(
    jupyter: Jupyter, dashboard_url: str
) -> None:
    code, first = await jupyter.api("POST", "sources", {"url": dashboard_url})
    assert code == 201
    assert first["url"] == dashboard_url
    assert first["kind"] == "url"
    for typed in (f"{dashboard_url}/status", f"{dashboard_url}/individual-task-stream"):
        code, again = await jupyter.api("POST", "sources", {"url": typed})
        assert code == 200, again
        assert again["id"] == first["id"]

    code, listing = await jupyter.api("GET", "sources")
    assert code == 200
    assert [source["id"] for source in listing["sources"]] == [first["id"]]
    assert listing["sources"][0]["url"] == dashboard_url


async def test_a_url_without_scheme_and_a_chosen_name(jupyter: Jupyter, dashboard_port: int) -> None:
    code, source = await jupyter.api(
        "POST", "sources", {"url": f"127.0.0.1:{dashboard_port}", "name": "My run"}
    )
    assert code == 201
    assert source["name"] == "My run"
    assert source["url"] == f"http://127.0.0.1:{dashboard_port}"


async def test_a_source_reports_that_its_scheduler_is_up(jupyter: Jupyter, dashboard_url: str) -> None:
    source = await jupyter.add_source(dashboard_url)
    code, detail = await jupyter.api("GET", f"sources/{source['id']}")
    assert code == 200
    assert detail["id"] == source["id"]
    assert detail["health"]["status"] == "up"
    assert detail["health"]["checked"] > 0


async def test_a_source_lists_its_plots_named_and_grouped_for_people(
    jupyter: Jupyter, dashboard_url: str
) -> None:
    source = await jupyter.add_source(dashboard_url)
    code, body = await jupyter.api("GET", f"sources/{source['id']}/plots")
    assert code == 200
    plots: list[dict[str, Any]] = body["plots"]
    assert len(plots) >= 20
    prefix = jupyter.base_url + f"dashdock/proxy/{source['id']}/"
    task_stream = {"name": "Task Stream", "group": "tasks", "path": "/individual-task-stream"}
    assert task_stream in [{key: plot[key] for key in ("name", "group", "path")} for plot in plots]
    for plot in plots:
        assert set(plot) == {"name", "group", "path", "description", "url"}
        assert plot["url"].startswith(prefix), plot
        assert plot["url"] == prefix + plot["path"].lstrip("/")
        assert not plot["name"].startswith("Individual"), plot
        assert plot["group"] in GROUPS
    assert {"tasks", "memory", "workers"} <= {plot["group"] for plot in plots}


async def test_the_url_of_a_plot_opens_that_plot(jupyter: Jupyter, dashboard_url: str) -> None:
    source = await jupyter.add_source(dashboard_url)
    _, body = await jupyter.api("GET", f"sources/{source['id']}/plots")
    (progress,) = [plot for plot in body["plots"] if plot["name"] == "Progress"]
    response = await jupyter.proxied(progress["url"], absolute=True)
    assert response.code == 200
    assert b"bokeh" in response.body


@pytest.mark.parametrize(
    "payload",
    [{"url": 8787}, {"url": None}, {}, {"url": ["http://127.0.0.1:8787"]}],
    ids=["number", "null", "missing", "list"],
)
async def test_a_url_that_is_not_a_string_is_a_bad_request(jupyter: Jupyter, payload: dict[str, Any]) -> None:
    code, body = await jupyter.api("POST", "sources", payload)
    assert code == 400
    assert "url" in body["message"]


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1:8787",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "http://user:pw@127.0.0.1:8787",
        "",
    ],
)
async def test_a_url_that_is_not_a_dashboard_url_is_a_bad_request(jupyter: Jupyter, url: str) -> None:
    code, body = await jupyter.api("POST", "sources", {"url": url})
    assert code == 400
    assert isinstance(body["message"], str) and body["message"]


async def test_a_name_that_is_not_a_string_is_a_bad_request(jupyter: Jupyter, dashboard_url: str) -> None:
    code, body = await jupyter.api("POST", "sources", {"url": dashboard_url, "name": 42})
    assert code == 400
    assert "name" in body["message"]


async def test_a_port_where_nothing_listens_is_a_bad_gateway(jupyter: Jupyter) -> None:
    with closed_loopback_port() as sock:
        port = sock.getsockname()[1]
        code, body = await jupyter.api("POST", "sources", {"url": f"http://127.0.0.1:{port}"})
    assert code == 502
    assert f"127.0.0.1:{port}" in body["message"]


async def test_a_web_server_that_is_not_a_dashboard_is_unprocessable(jupyter: Jupyter) -> None:
    code, body = await jupyter.api("POST", "sources", {"url": jupyter.origin + "/"})
    assert code == 422
    assert "neither as a Dask dashboard nor as a Bokeh server" in body["message"]
    _, listing = await jupyter.api("GET", "sources")
    assert listing["sources"] == []


@pytest.mark.parametrize(
    "url", ["http://10.1.2.3:8787", "http://dask-scheduler:8787", "http://[fe80::1]:8787"]
)
async def test_a_host_outside_the_allowlist_is_forbidden(jupyter: Jupyter, url: str) -> None:
    code, body = await jupyter.api("POST", "sources", {"url": url})
    assert code == 403
    assert "allowed_targets" in body["message"]


@pytest.mark.parametrize("path", ["sources/0123456789ab", "sources/0123456789ab/plots", "sources/nope"])
async def test_an_unknown_source_is_not_found(jupyter: Jupyter, path: str) -> None:
    code, body = await jupyter.api("GET", path)
    assert code == 404
    assert body["message"]


async def test_a_deleted_source_is_gone(jupyter: Jupyter, dashboard_url: str) -> None:
    source = await jupyter.add_source(dashboard_url)
    code, _ = await jupyter.api("DELETE", f"sources/{source['id']}")
    assert code == 204
    code, body = await jupyter.api("GET", f"sources/{source['id']}")
    assert code == 404
    assert body["message"]
    _, listing = await jupyter.api("GET", "sources")
    assert listing["sources"] == []
    code, _ = await jupyter.api("DELETE", f"sources/{source['id']}")
    assert code == 404


@pytest.mark.parametrize("raw", ["{not json", "[1, 2]", '"http://127.0.0.1:8787"'])
async def test_a_body_that_is_not_a_json_object_is_a_bad_request(jupyter: Jupyter, raw: str) -> None:
    code, body = await jupyter.api("POST", "sources", raw=raw)
    assert code == 400
    assert "JSON" in body["message"]


async def test_a_client_without_credentials_cannot_use_the_api(jupyter: Jupyter, dashboard_url: str) -> None:
    code, _ = await jupyter.api("POST", "sources", {"url": dashboard_url}, auth=False)
    assert code == 403
    code, _ = await jupyter.api("GET", "sources", auth=False)
    assert code == 403
    _, listing = await jupyter.api("GET", "sources")
    assert listing["sources"] == []


async def test_a_cookie_logged_in_post_without_xsrf_is_refused(jupyter: Jupyter, dashboard_url: str) -> None:
    cookie = await jupyter.login_cookie()
    response = await jupyter.fetch(
        "dashdock/api/sources",
        method="POST",
        body=json.dumps({"url": dashboard_url}),
        headers={"Cookie": cookie},
        auth=False,
    )
    assert response.code == 403
    # The same cookie does read: the refusal is about XSRF, not about the login.
    response = await jupyter.fetch("dashdock/api/sources", headers={"Cookie": cookie}, auth=False)
    assert response.code == 200
    assert json.loads(response.body)["sources"] == []


async def test_a_source_whose_dashboard_stopped_reports_down(jupyter: Jupyter) -> None:
    upstream = RecordingUpstream().start()
    try:
        source = await jupyter.add_source(upstream.url)
        code, detail = await jupyter.api("GET", f"sources/{source['id']}")
        assert (code, detail["health"]["status"]) == (200, "up")
    finally:
        upstream.stop()

    code, detail = await jupyter.api("GET", f"sources/{source['id']}")
    assert code == 200
    assert detail["health"]["status"] == "down"
    assert detail["health"]["message"]
    code, body = await jupyter.api("GET", f"sources/{source['id']}/plots")
    assert code == 502
    assert "not available" in body["message"]
    # The source stays listed: a restarted scheduler on the same address comes back by itself.
    _, listing = await jupyter.api("GET", "sources")
    assert [item["id"] for item in listing["sources"]] == [source["id"]]


async def test_a_name_longer_than_200_characters_is_a_bad_request(
    jupyter: Jupyter, dashboard_url: str
) -> None:
    code, body = await jupyter.api("POST", "sources", {"url": dashboard_url, "name": "n" * 201})
    assert code == 400
    assert "200" in body["message"]


async def test_adding_the_same_dashboard_twice_at_once_makes_one_source(
    jupyter: Jupyter, dashboard_url: str
) -> None:
    # A double click on "Add": both requests race through the dashboard lookup.
    results = await asyncio.gather(
        jupyter.api("POST", "sources", {"url": dashboard_url}),
        jupyter.api("POST", "sources", {"url": f"{dashboard_url}/status"}),
    )
    assert sorted(code for code, _ in results) == [200, 201]
    assert results[0][1]["id"] == results[1][1]["id"]
    _, listing = await jupyter.api("GET", "sources")
    assert len(listing["sources"]) == 1


async def test_adding_a_known_dashboard_with_a_name_renames_it(jupyter: Jupyter, dashboard_url: str) -> None:
    first = await jupyter.add_source(dashboard_url)
    code, renamed = await jupyter.api("POST", "sources", {"url": dashboard_url, "name": "Renamed"})
    assert (code, renamed["id"], renamed["name"]) == (200, first["id"], "Renamed")
    code, again = await jupyter.api("POST", "sources", {"url": dashboard_url})
    assert (code, again["name"]) == (200, "Renamed")
