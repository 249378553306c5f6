"""A user creates a Dask client in a notebook: dashdock's repr, the client as a source, show().

Kernels are started through the server (as Lab starts them), so they get dashdock's Dask client
preload from the server's environment with no step of the user's.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _kernels import Kernel
from _support import Jupyter

from dashdock.kernel.protocol import CLIENT_MIME_TYPE, CLIENTS_DIR_VARIABLE, PLOT_MIME_TYPE, PRELOAD_VARIABLE

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test

NEW_CLIENT = """
from distributed import Client, LocalCluster
cluster{n} = LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp",
                          host="127.0.0.1", dashboard_address="127.0.0.1:0")
client{n} = Client(cluster{n})
print("DASHBOARD", cluster{n}.scheduler.http_server.port)
"""


def dashboard_port(output: str) -> int:
    lines = [line for line in output.splitlines() if line.startswith("DASHBOARD ")]
    assert lines, output
    return int(lines[-1].split()[1])


printed_port = dashboard_port  # for tests that also take the session cluster's `dashboard_port`
CONNECT = "from distributed import Client\nother = Client({address!r})"


async def kernel_sources(jupyter: Jupyter) -> list[dict[str, Any]]:
    await jupyter.api("GET", "kernel-clients")  # scans what kernels reported
    _, body = await jupyter.api("GET", "sources")
    return [source for source in body["sources"] if source["kind"] == "kernel"]


async def wait_for_kernel_sources(jupyter: Jupyter, count: int, timeout: float = 20) -> list[dict[str, Any]]:
    for _ in range(int(timeout / 0.25)):
        sources = await kernel_sources(jupyter)
        if len(sources) == count:
            return sources
        await asyncio.sleep(0.25)
    raise AssertionError(f"expected {count} kernel sources, found {await kernel_sources(jupyter)}")


async def test_nothing_runs_in_a_kernel_that_never_imports_distributed(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    async with Kernel(jp_serverapp) as kernel:
        output = await kernel.run(
            "import os, sys\n"
            f"print('preload' if 'dashdock_preload.py' in os.environ['{PRELOAD_VARIABLE}'] else 'none')\n"
            "print(sorted(m for m in ('dashdock', 'distributed', 'dask') if m in sys.modules))"
        )
    assert output.split() == ["preload", "[]"]


async def test_connecting_a_client_prints_nothing_in_the_notebook(
    jupyter: Jupyter, jp_serverapp: Any, dask_cluster: Any
) -> None:
    """Distributed logs preloads at INFO on stderr; a notebook would show that under every cell.
    (A LocalCluster created in the kernel silences those logs itself, so connect to one outside.)"""
    async with Kernel(jp_serverapp) as kernel:
        code = f"from distributed import Client\nclient = Client({dask_cluster.scheduler_address!r})"
        output = await kernel.run(code)
        output += await kernel.later_output()
    assert output == ""


async def test_a_client_shows_dashdocks_repr_with_dasks_html_as_fallback(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    async with Kernel(jp_serverapp) as kernel:
        port = dashboard_port(await kernel.run(NEW_CLIENT.format(n=1)))
        await kernel.run("client1")
        await kernel.run("cluster1")
    client_bundle, cluster_bundle = kernel.displayed[-2:]

    data = client_bundle[CLIENT_MIME_TYPE]
    assert data["kind"] == "client"
    assert data["dashboard"] == f"http://127.0.0.1:{port}"
    assert data["dashboard_link"] == f"/dashdock/proxy/127.0.0.1:{port}/status"
    assert data["kernel_id"] == kernel.id
    assert data["client_id"].startswith("Client-")
    assert (data["workers"], data["threads"]) == (1, 2)
    assert data["memory"] > 0
    # Where dashdock's renderer is missing (classic notebook, nbconvert), Dask's own output shows.
    assert "Client-" in client_bundle["text/html"] and client_bundle["text/plain"].startswith("<Client")

    assert cluster_bundle[CLIENT_MIME_TYPE]["kind"] == "cluster"
    assert cluster_bundle[CLIENT_MIME_TYPE]["title"] == "LocalCluster"
    assert "LocalCluster" in cluster_bundle["text/html"]


async def test_a_notebooks_client_becomes_a_source_named_after_the_notebook_until_it_closes(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    async with Kernel(jp_serverapp, notebook="work/analysis.ipynb") as kernel:
        port = dashboard_port(await kernel.run(NEW_CLIENT.format(n=1)))
        (source,) = await wait_for_kernel_sources(jupyter, 1)
        assert source["name"] == "analysis.ipynb"
        assert source["url"] == f"http://127.0.0.1:{port}"

        # Its plots open through the proxy like any source's.
        code, body = await jupyter.api("GET", f"sources/{source['id']}/plots")
        assert code == 200 and any(p["path"] == "/individual-task-stream" for p in body["plots"])

        await kernel.run("client1.close()")
        await wait_for_kernel_sources(jupyter, 0)


async def test_a_shut_down_kernel_takes_its_sources_with_it(jupyter: Jupyter, jp_serverapp: Any) -> None:
    async with Kernel(jp_serverapp, notebook="a.ipynb") as kernel:
        await kernel.run(NEW_CLIENT.format(n=1))
        await wait_for_kernel_sources(jupyter, 1)
        # Killed, so the kernel cannot clean up after itself: the server notices it is gone.
        await kernel.shutdown()
        await wait_for_kernel_sources(jupyter, 0)


async def test_a_notebook_that_replaces_its_cluster_keeps_its_source(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    """Open panes follow: the source id stays, its URL moves to the new port, and `lost` tells
    the panes to reload."""
    async with Kernel(jp_serverapp, notebook="b.ipynb") as kernel:
        await kernel.run(NEW_CLIENT.format(n=1))
        (before,) = await wait_for_kernel_sources(jupyter, 1)
        new_port = dashboard_port(await kernel.run(NEW_CLIENT.format(n=2)))
        await kernel.run("client1.close(); cluster1.close()")
        (after,) = await wait_for_kernel_sources(jupyter, 1)
    assert after["id"] == before["id"]
    assert after["url"] == f"http://127.0.0.1:{new_port}"
    assert after["lost"] > before["lost"]


async def test_a_dashboard_that_already_is_a_source_gets_no_second_one(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    async with Kernel(jp_serverapp, notebook="c.ipynb") as kernel:
        port = dashboard_port(await kernel.run(NEW_CLIENT.format(n=1)))
        await wait_for_kernel_sources(jupyter, 1)
        added = await jupyter.add_source(f"http://127.0.0.1:{port}/status")
        await wait_for_kernel_sources(jupyter, 0)
        _, clients = await jupyter.api("GET", "kernel-clients")
        assert [c["source"] for c in clients["clients"]] == [added["id"]]


async def test_the_summary_gives_a_reprs_live_numbers_and_its_source(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    async with Kernel(jp_serverapp, notebook="d.ipynb") as kernel:
        port = dashboard_port(await kernel.run(NEW_CLIENT.format(n=1)))
        (source,) = await wait_for_kernel_sources(jupyter, 1)
        query = f"summary?dashboard=http://127.0.0.1:{port}&kernel={kernel.id}"
        code, body = await jupyter.api("GET", query)
        assert code == 200, body
        assert body["source"]["id"] == source["id"]
        assert body["counts"]["workers"] == 1 and body["counts"]["threads"] == 2

        await kernel.run("client1.gather(client1.map(lambda x: x + 1, range(10)))")
        _, body = await jupyter.api("GET", query)
        assert body["counts"]["tasks"] >= 0 and body["counts"]["clients"] >= 1

        await kernel.run("client1.close(); cluster1.close()")
        _, body = await jupyter.api("GET", query)
        assert body["counts"] is None
        assert "not available" in body["message"]


async def test_the_summary_cannot_reach_a_host_outside_the_allowlist(jupyter: Jupyter) -> None:
    code, body = await jupyter.api("GET", "summary?dashboard=http://10.1.2.3:8787")
    assert code == 403 and "not an allowed dashboard host" in body["message"]
    code, body = await jupyter.api("GET", "summary?dashboard=http://127.0.0.1:1/&kernel=../../etc")
    assert code == 400


async def test_a_gateway_link_with_userinfo_gives_a_source_that_never_shows_it(
    jupyter: Jupyter, jp_serverapp: Any, dashboard_port: int
) -> None:
    """dask-gateway builds a cluster's dashboard link from an address that may keep its userinfo."""
    directory = Path(os.environ[CLIENTS_DIR_VARIABLE])
    async with Kernel(jp_serverapp, notebook="g.ipynb") as kernel:
        record = {
            "kernel_id": kernel.id,
            "client_id": "Client-1",
            "dashboard": f"http://alice:pa55word@127.0.0.1:{dashboard_port}/status",
            "started": 1,
        }
        (directory / f"{kernel.id}--Client-1.json").write_text(json.dumps(record))
        (source,) = await wait_for_kernel_sources(jupyter, 1)
        assert source["url"] == f"http://127.0.0.1:{dashboard_port}"
        _, listing = await jupyter.api("GET", "sources")
        assert "pa55word" not in json.dumps(listing) and "alice:" not in json.dumps(listing)


async def test_a_forged_record_cannot_make_the_proxy_reach_a_host_outside_the_allowlist(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    """Records are input: a dashboard outside the allowlist, junk, symlinks and huge files are ignored."""
    directory = Path(os.environ[CLIENTS_DIR_VARIABLE])
    async with Kernel(jp_serverapp, notebook="e.ipynb") as kernel:
        forged = {
            "kernel_id": kernel.id,
            "client_id": "Client-1",
            "dashboard": "http://10.9.9.9:80",
            "started": 1,
        }
        (directory / f"{kernel.id}--Client-1.json").write_text(json.dumps(forged))
        (directory / f"{kernel.id}--junk.json").write_text("{not json")
        (directory / f"{kernel.id}--huge.json").write_text(" " * 100_000)
        (directory / f"{kernel.id}--link.json").symlink_to("/etc/passwd")
        assert await kernel_sources(jupyter) == []
        assert any("10.9.9.9:80" in line and "allowed_targets" in line for line in jupyter.dashdock_warnings)


async def test_show_puts_a_live_plot_under_the_cell(jupyter: Jupyter, jp_serverapp: Any) -> None:
    async with Kernel(jp_serverapp) as kernel:
        port = dashboard_port(await kernel.run(NEW_CLIENT.format(n=1)))
        output = await kernel.run("import dashdock; dashdock.show(client1, 'task stream')")
        assert output == ""
        bundle = kernel.displayed[-1]
        failure = await kernel.run("dashdock.show(client1, '../status')")
        data = bundle[PLOT_MIME_TYPE]
        assert data["dashboard"] == f"http://127.0.0.1:{port}"
        assert data["path"] == "/individual-task-stream"
        link = f"/dashdock/proxy/127.0.0.1:{port}/individual-task-stream"
        assert f'src="{link}"' in bundle["text/html"]
        page = await jupyter.proxied(link, absolute=True)
        assert page.code == 200 and b"bokeh" in page.body.lower()
    assert "ValueError" in failure and "is not a plot name" in failure


def _client_in_a_subprocess(prelude: str) -> subprocess.CompletedProcess[str]:
    preload = Path(__file__).resolve().parents[2] / "dashdock" / "_preload" / "dashdock_preload.py"
    code = prelude + (
        "\nfrom distributed import Client\n"
        "with Client(processes=False, dashboard_address=':0', n_workers=1) as c:\n"
        "    print('SUM', c.submit(sum, [1, 2]).result())\n"
    )
    env = {**os.environ, PRELOAD_VARIABLE: repr([str(preload)])}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_a_client_works_where_dashdock_cannot_be_imported() -> None:
    """A kernel of another environment inherits the preload; its clients must keep working."""
    result = _client_in_a_subprocess("import sys; sys.modules['dashdock'] = None")
    assert "SUM 3" in result.stdout, result.stderr
    assert "Traceback" not in result.stderr


def test_a_client_works_where_the_kernel_integration_cannot_run_and_it_is_logged() -> None:
    blocked = "import sys; sys.modules['dashdock'] = None; sys.modules['_dashdock_kernel'] = None"
    result = _client_in_a_subprocess(blocked)
    assert "SUM 3" in result.stdout, result.stderr
    assert "dashdock: the kernel integration cannot run here" in result.stderr
    assert "Traceback" not in result.stderr


async def test_outside_lab_a_notebook_shows_dasks_own_html(jupyter: Jupyter, jp_serverapp: Any) -> None:
    """nbconvert (and the classic notebook) know no dashdock MIME type: they pick Dask's HTML."""
    import nbformat
    from nbconvert import HTMLExporter

    async with Kernel(jp_serverapp) as kernel:
        await kernel.run(NEW_CLIENT.format(n=1))
        await kernel.run("client1")
    bundle = kernel.displayed[-1]
    assert CLIENT_MIME_TYPE in bundle
    output = nbformat.v4.new_output("execute_result", data=bundle, execution_count=1)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("client1", outputs=[output])])
    html, _ = HTMLExporter().from_notebook_node(notebook)
    assert bundle["text/html"].split("\n", 1)[0].strip() in html
    assert CLIENT_MIME_TYPE not in html and "Client-" in html


async def test_a_notebooks_source_cannot_be_removed_while_its_client_runs(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    """It would come back at the next scan; the user is told what removes it."""
    async with Kernel(jp_serverapp, notebook="f.ipynb") as kernel:
        await kernel.run(NEW_CLIENT.format(n=1))
        (source,) = await wait_for_kernel_sources(jupyter, 1)
        code, body = await jupyter.api("DELETE", f"sources/{source['id']}")
        assert code == 409 and "goes when the client or its kernel closes" in body["message"]
        assert len(await kernel_sources(jupyter)) == 1


def _urls(sources: list[dict[str, Any]]) -> set[str]:
    return {source["url"] for source in sources}


async def test_two_local_clusters_in_one_kernel_are_two_sources(jupyter: Jupyter, jp_serverapp: Any) -> None:
    async with Kernel(jp_serverapp, notebook="two.ipynb") as kernel:
        first = dashboard_port(await kernel.run(NEW_CLIENT.format(n=1)))
        second = dashboard_port(await kernel.run(NEW_CLIENT.format(n=2)))
        sources = await wait_for_kernel_sources(jupyter, 2)
    assert _urls(sources) == {f"http://127.0.0.1:{first}", f"http://127.0.0.1:{second}"}


async def test_a_second_client_on_another_scheduler_is_a_source_of_its_own(
    jupyter: Jupyter, jp_serverapp: Any, dask_cluster: Any, dashboard_port: int
) -> None:
    async with Kernel(jp_serverapp, notebook="other.ipynb") as kernel:
        first = printed_port(await kernel.run(NEW_CLIENT.format(n=1)))
        await kernel.run(CONNECT.format(address=dask_cluster.scheduler_address))
        sources = await wait_for_kernel_sources(jupyter, 2)
    assert _urls(sources) == {f"http://127.0.0.1:{first}", f"http://127.0.0.1:{dashboard_port}"}


async def test_a_closed_clients_source_goes_and_the_next_ones_comes(
    jupyter: Jupyter, jp_serverapp: Any, dask_cluster: Any, dashboard_port: int
) -> None:
    async with Kernel(jp_serverapp, notebook="next.ipynb") as kernel:
        await kernel.run(CONNECT.format(address=dask_cluster.scheduler_address))
        first = printed_port(await kernel.run(NEW_CLIENT.format(n=1)))
        await wait_for_kernel_sources(jupyter, 2)
        await kernel.run("client1.close()")
        (left,) = await wait_for_kernel_sources(jupyter, 1)
        assert left["url"] == f"http://127.0.0.1:{dashboard_port}"
        second = printed_port(await kernel.run(NEW_CLIENT.format(n=2)))
        sources = await wait_for_kernel_sources(jupyter, 2)
    assert _urls(sources) == {f"http://127.0.0.1:{dashboard_port}", f"http://127.0.0.1:{second}"}
    assert f"http://127.0.0.1:{first}" not in _urls(sources)


async def test_a_notebook_takes_over_the_source_of_the_dashboard_it_connects_to(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    """The source keeps its id (its open panes) and follows the notebook's next cluster."""
    async with Kernel(jp_serverapp, notebook="over.ipynb") as kernel:
        port = dashboard_port(await kernel.run(NEW_CLIENT.format(n=1)))
        await wait_for_kernel_sources(jupyter, 1)
        added = await jupyter.add_source(f"http://127.0.0.1:{port}/status")
        await wait_for_kernel_sources(jupyter, 0)
        new_port = dashboard_port(await kernel.run(NEW_CLIENT.format(n=2)))
        await kernel.run("client1.close(); cluster1.close()")
        for _ in range(80):
            _, body = await jupyter.api("GET", "sources")
            (taken,) = [s for s in body["sources"] if s["id"] == added["id"]]
            if taken["url"] == f"http://127.0.0.1:{new_port}":
                break
            await asyncio.sleep(0.25)
        assert taken["url"] == f"http://127.0.0.1:{new_port}"
        assert await kernel_sources(jupyter) == []  # no second source for the new cluster
        _, clients = await jupyter.api("GET", "kernel-clients")
        assert [c["source"] for c in clients["clients"]] == [added["id"]]
