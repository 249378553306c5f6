"""dashdock behind a real JupyterHub: two users, each a Lab under /user/<name>/ through
configurable-http-proxy. Panes work through the hub's proxy; neither user reaches the other's
dashdock API, proxy links or panes with their own cookie or token."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Iterator

import pytest
from helpers import (
    add_source,
    open_sidebar,
    pane,
    pane_frame,
    plot_item,
    run_in_notebook,
    wait_for_bokeh_plot,
    wait_until,
)
from hub import PASSWORD, Hub, start_hub, stop_hub
from lab import DaskCluster, screenshot, wait_for_lab
from playwright.sync_api import Browser, Page, expect

IDLE = ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']"


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    hub = start_hub(tmp_path_factory.mktemp("hub"))
    yield hub
    stop_hub(hub)


def _log_in(browser: Browser, hub: Hub, user: str) -> Page:
    """Log in as a user does: the hub's form, then the spawn, then Lab under /user/<name>/."""
    context = browser.new_context(viewport={"width": 1500, "height": 950})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{hub.url}hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", PASSWORD)
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{user}/lab**", timeout=180_000)
    wait_for_lab(page)
    return page


def _status(page: Page, url: str, token: str | None = None) -> int:
    """What the server at ``url`` answers this browser (its cookies), without following redirects."""
    headers = {"Authorization": f"token {token}"} if token else {}
    return page.request.get(url, headers=headers, max_redirects=0).status


def _run_notebook(page: Page, hub: Hub, user: str, path: str, cells: list[str]) -> None:
    """Write a notebook into the user's home, open it in a workspace of its own and run it all."""
    page.goto(f"{hub.url}user/{user}/lab/workspaces/{path.removesuffix('.ipynb')}")
    wait_for_lab(page)
    page.evaluate(
        """([path, cells]) => window.jupyterapp.serviceManager.contents.save(path, {
            type: 'notebook', format: 'json',
            content: {cells: cells.map(source => ({cell_type: 'code', source, metadata: {}, outputs: [],
                                                   execution_count: null})),
                      metadata: {kernelspec: {name: 'python3', display_name: 'Python 3', language: 'python'}},
                      nbformat: 4, nbformat_minor: 5}})""",
        [path, cells],
    )
    page.evaluate("path => window.jupyterapp.commands.execute('docmanager:open', {path})", path)
    page.wait_for_selector(IDLE, timeout=60_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def test_panes_work_through_the_hub_and_users_are_kept_apart(
    browser: Browser, hub: Hub, dask_cluster: DaskCluster
) -> None:
    alice = _log_in(browser, hub, "alice")
    sidebar = open_sidebar(alice)
    add_source(alice, dask_cluster.dashboard)
    expect(sidebar.locator(".jp-dashdock-Source-name")).to_have_count(1, timeout=30_000)
    plot_item(alice, "Task Stream").click()
    wait_for_bokeh_plot(alice, "Task Stream")  # page, scripts and websocket through the hub's proxy
    # The pane's link (through the proxy link, checked against Alice's login) and where it led.
    alice_link = (pane(alice, "Task Stream").locator("iframe[src]").get_attribute("src") or "").split("?")[0]
    alice_view = pane_frame(alice, "Task Stream").url
    assert alice_link.startswith(f"{hub.url}user/alice/dashdock/proxy/"), alice_link
    assert alice_view.startswith(f"{hub.url}user/alice/dashdock/view/"), alice_view
    screenshot(alice, "jupyterhub-alice")
    alice_api = f"{hub.url}user/alice/dashdock/api/sources"
    assert _status(alice, alice_api) == 200

    bob = _log_in(browser, hub, "bob")
    bob_token = hub.token_for("bob")
    # Bob's own server answers him; Alice's does not, whether he comes with his cookie or his token.
    assert _status(bob, f"{hub.url}user/bob/dashdock/api/sources") == 200
    for url in (alice_api, alice_link):
        assert _status(bob, url) in (302, 403), url  # sent to the hub to log in as Alice: refused there
        assert _status(bob, url, bob_token) == 403, url
    # Alice's pane, even with its capability, is refused to Bob's token.
    assert _status(bob, alice_view, bob_token) == 403
    alice.context.close()


LOCAL_NOTEBOOK = [
    "from distributed import Client, LocalCluster\n"
    "cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol='tcp',\n"
    "                       host='127.0.0.1', dashboard_address='127.0.0.1:0')\n"
    "client = Client(cluster)\n"
    "client",
    "import dashdock\ndashdock.show(client, 'progress')",
    "print(client.dashboard_link)",
]


def test_a_notebooks_repr_inline_plot_and_dashboard_link_work_through_the_hub(
    browser: Browser, hub: Hub
) -> None:
    bob = _log_in(browser, hub, "bob")
    _run_notebook(bob, hub, "bob", "local.ipynb", LOCAL_NOTEBOOK)

    # The client's repr is live: the scheduler's numbers, fetched through the hub's proxy.
    client_repr = bob.locator(".jp-dashdock-ClientRepr").first
    expect(client_repr.locator(".jp-dashdock-ClientRepr-status")).to_have_attribute(
        "data-status", "live", timeout=90_000
    )
    expect(client_repr.locator('dd[data-fact="workers"]')).to_have_text("1")
    # The plot under the second cell draws, sandboxed, from Bob's server.
    handle = bob.locator(".jp-dashdock-InlinePlot iframe").element_handle(timeout=60_000)
    inline = handle.content_frame() if handle else None
    assert inline is not None
    inline.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].roots().length > 0",
        timeout=45_000,
    )
    assert inline.url.startswith(f"{hub.url}user/bob/dashdock/view/"), inline.url
    assert inline.evaluate("() => window.origin") == "null"

    # The kernel's client.dashboard_link is a path through Bob's dashdock: it opens Dask's status page.
    printed = bob.locator(".jp-Notebook .jp-Cell").nth(2).locator(".jp-OutputArea-output")
    expect(printed).to_contain_text("/user/bob/dashdock/proxy/127.0.0.1:", timeout=60_000)
    link = printed.inner_text().strip()
    assert link.startswith("/user/bob/dashdock/proxy/127.0.0.1:") and link.endswith("/status"), link
    screenshot(bob, "jupyterhub-notebook")
    tab = bob.context.new_page()
    tab.goto(f"{hub.url.rstrip('/')}{link}")
    tab.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=45_000)
    assert tab.url.startswith(f"{hub.url}user/bob/dashdock/view/"), tab.url
    tab.close()

    # The same link is Bob's alone: Alice, logged in to the hub, is refused it.
    alice = _log_in(browser, hub, "alice")
    assert _status(alice, f"{hub.url.rstrip('/')}{link}") in (302, 403)
    assert _status(alice, f"{hub.url.rstrip('/')}{link}", hub.token_for("alice")) == 403
    alice.context.close()
    run_in_notebook(bob, "client.close(); cluster.close()")


# daskhub's chart sets the gateway's public address to a path (for the browser's own host), so a
# cluster's dashboard link has no host: "/services/dask-gateway/clusters/<name>/status".
PUBLIC_ADDRESS_A_PATH = (
    "import dask\ndask.config.set({'gateway.public-address': '/services/dask-gateway/'})\n"
)
LINK_IS_A_PATH = "assert cluster.dashboard_link.startswith('/services/dask-gateway/clusters/')"

GATEWAY_NOTEBOOK = [
    "from dask_gateway import Gateway\n"
    "gateway = Gateway()  # DaskHub's settings: the gateway through the hub, the hub's auth\n"
    "cluster = gateway.new_cluster()\n"
    "cluster.scale(1)\n"
    "client = cluster.get_client()\n"
    "import time\nprint(f'client made at {time.time():.3f}', flush=True)  # for the figure below\n"
    "client.wait_for_workers(1, timeout=120)\n"
    "total = client.submit(sum, range(10)).result()",
]


@pytest.mark.parametrize("public_address", ["absolute", "a path"])
def test_a_dask_gateway_cluster_from_a_notebook_is_a_source_with_live_panes(
    browser: Browser, hub: Hub, public_address: str
) -> None:
    alice = _log_in(browser, hub, "alice")
    cells, notebook = GATEWAY_NOTEBOOK, "gateway.ipynb"
    if public_address == "a path":
        cells, notebook = [PUBLIC_ADDRESS_A_PATH + cells[0] + "\n" + LINK_IS_A_PATH], "gateway-path.ipynb"
    # A workspace of its own: the panes of the first test stay in Alice's default one.
    _run_notebook(alice, hub, "alice", notebook, cells)

    try:
        # The client's dashboard is a path under the gateway's proxy, not a host:port: still a source.
        sidebar = open_sidebar(alice)
        row = sidebar.locator(".jp-dashdock-Source-name", has_text=notebook)
        expect(row).to_have_count(1, timeout=180_000)
        seen = time.time()
        source = _kernel_source(alice)
        assert source and "/services/dask-gateway/clusters/" in source["url"], source
        made = alice.locator(".jp-OutputArea-output", has_text="client made at").first.inner_text()
        # A figure for the note (never asserted): from the client to its row in the sidebar.
        waited = seen - float(made.split()[-1])
        print(f"gateway client ({public_address}) listed as a source after {waited:.1f} s")
        row.click()
        plot_item(alice, "Task Stream").click()
        wait_for_bokeh_plot(alice, "Task Stream")
        plot_item(alice, "Progress").click()
        wait_for_bokeh_plot(alice, "Progress")
        screenshot(alice, "jupyterhub-gateway")

        # The notebook replaces its cluster: its source moves to the new one (between the two, for
        # a moment, it has no client), and the panes follow.
        run_in_notebook(alice, REPLACE_CLUSTER)
        moved = wait_until(
            lambda: (s := _kernel_source(alice)) and s["url"] != source["url"] and s, timeout=180
        )
        assert "/services/dask-gateway/clusters/" in moved["url"], moved
        for name in ("Task Stream", "Progress"):
            pane_id = pane(alice, name).get_attribute("id")
            alice.evaluate("id => window.jupyterapp.shell.activateById(id)", pane_id)
            expect(pane(alice, name)).to_have_attribute("data-status", "live", timeout=60_000)
            wait_for_bokeh_plot(alice, name)
    finally:
        _end_notebook(alice, hub, "alice")
        alice.context.close()


SECOND_CLIENT_NOTEBOOK = [
    "from distributed import Client, LocalCluster\n"
    "local = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol='tcp',\n"
    "                     host='127.0.0.1', dashboard_address='127.0.0.1:0')\n"
    "first = Client(local)",
    PUBLIC_ADDRESS_A_PATH + "from dask_gateway import Gateway\n"
    "gateway = Gateway()\n"
    "cluster = gateway.new_cluster()\n"
    "cluster.scale(1)\n"
    "client = cluster.get_client()\n"
    "client.wait_for_workers(1, timeout=120)\n" + LINK_IS_A_PATH,
]


def test_a_notebooks_second_client_on_a_gateway_cluster_is_a_source_too(browser: Browser, hub: Hub) -> None:
    bob = _log_in(browser, hub, "bob")
    _run_notebook(bob, hub, "bob", "two-clients.ipynb", SECOND_CLIENT_NOTEBOOK)
    try:
        both = wait_until(lambda: len(urls := _kernel_source_urls(bob)) == 2 and urls, timeout=180)
        assert any("/services/dask-gateway/clusters/" in url for url in both), both
        assert any("127.0.0.1:" in url and "/services/" not in url for url in both), both
    finally:
        _end_notebook(bob, hub, "bob")
        bob.context.close()


def _end_notebook(page: Page, hub: Hub, user: str) -> None:
    """Shut the notebook's kernel down (its clients go with it), then stop every gateway cluster
    of the user through the gateway's REST API, so the next test starts with none. Nothing here
    waits on a Dask client: a call through the gateway's proxy has hung, and a test that failed
    may have left a cell running."""
    page.evaluate(
        """async () => {
            const notebook = [...window.jupyterapp.shell.widgets('main')].find(w => w.sessionContext);
            await Promise.race([
                notebook.sessionContext.shutdown(),
                new Promise(resolve => setTimeout(resolve, 30000))
            ]);
        }"""
    )
    api = f"{hub.url}services/dask-gateway/api/v1/clusters/"
    headers = {"Authorization": f"jupyterhub {hub.token_for(user)}"}  # dask-gateway's scheme
    with urllib.request.urlopen(urllib.request.Request(api, headers=headers), timeout=30) as response:
        clusters = json.loads(response.read())
    for name in clusters:
        stop = urllib.request.Request(api + name, headers=headers, method="DELETE")
        urllib.request.urlopen(stop, timeout=30).close()


def _kernel_source_urls(page: Page) -> list[str]:
    return [source["url"] for source in _kernel_sources(page)]


# No wait for a worker: the source and its panes follow the new client, workers or not. (Waiting
# once hung in Dask's identity call, which has no timeout, through the gateway's proxy.)
REPLACE_CLUSTER = """
cluster.close()
cluster = gateway.new_cluster()
client = cluster.get_client()
"""


def _kernel_source(page: Page) -> dict | None:
    """The notebook's source, as the user's dashdock API lists it; None while it has none."""
    sources = _kernel_sources(page)
    assert len(sources) <= 1, sources
    return sources[0] if sources else None


def _kernel_sources(page: Page) -> list[dict]:
    """The notebooks' sources, as the user's dashdock API lists them."""
    listing = page.evaluate(
        """async () => {
            const xsrf = document.cookie.match(/_xsrf=([^;]+)/)?.[1] || '';
            const url = window.jupyterapp.serviceManager.serverSettings.baseUrl + 'dashdock/api/sources';
            const response = await fetch(url, {headers: {'X-XSRFToken': decodeURIComponent(xsrf)}});
            return {status: response.status, ...(await response.json())};
        }"""
    )
    assert "sources" in listing, listing
    return [s for s in listing["sources"] if s["kind"] == "kernel"]


# The workers a Dask plot shows: the distinct values of its data sources' `worker` column.
_WORKERS_SHOWN = """() => {
    const workers = new Set();
    for (const model of Bokeh.documents[0].all_models) {
        if (!model.data) continue;
        const data = model.data instanceof Map ? Object.fromEntries(model.data) : model.data;
        for (const worker of data.worker || []) workers.add(String(worker));
    }
    return workers.size;
}"""


def test_gateway_clusters_are_made_scaled_and_stopped_from_the_sidebar(browser: Browser, hub: Hub) -> None:
    alice = _log_in(browser, hub, "alice")
    alice.goto(f"{hub.url}user/alice/lab/workspaces/gateway-sidebar")
    wait_for_lab(alice)
    sidebar = open_sidebar(alice)

    # The form: where it runs, then the gateway's own options (its Worker cores field, max 2).
    sidebar.get_by_role("button", name="New cluster with options").click()
    dialog = alice.locator(".jp-Dialog")
    expect(dialog.locator('select[name="provider"]')).to_have_value("gateway")
    cores = dialog.get_by_label("Worker cores")
    expect(cores).to_have_value("1", timeout=30_000)
    expect(cores).to_have_attribute("max", "2")
    cores.fill("2")
    dialog.get_by_label("Workers", exact=True).fill("1")
    screenshot(alice, "gateway-new-cluster-form")
    dialog.get_by_role("button", name="Start").click()

    card = sidebar.locator(".jp-dashdock-ClusterCard", has=alice.locator(".jp-dashdock-ClusterCard-provider"))
    expect(card).to_have_count(1, timeout=60_000)
    expect(card.locator(".jp-dashdock-ClusterCard-provider")).to_have_text("Gateway")
    expect(card.locator(".jp-dashdock-ClusterCard-status")).to_have_text("running", timeout=180_000)
    expect(card.locator('button[data-action="restart"]')).to_be_hidden()
    # Its dashboard is a source; its plots dock as panes and draw live through the hub's proxy.
    # Named "Gateway <id>"; a notebook's source ("gateway.ipynb ...") must not match.
    source = sidebar.locator(".jp-dashdock-Source-name", has_text=re.compile(r"^Gateway [0-9a-f]+$"))
    expect(source).to_have_count(1, timeout=60_000)
    source.click()
    plot_item(alice, "Task Stream").click()
    wait_for_bokeh_plot(alice, "Task Stream")
    plot_item(alice, "Workers Memory").click()
    wait_for_bokeh_plot(alice, "Workers Memory")
    memory = pane_frame(alice, "Workers Memory")
    wait_until(lambda: memory.evaluate(_WORKERS_SHOWN) == 1)

    # Scale to 2 from the card: the pane shows two workers, the card two workers of 2 threads each.
    card.get_by_label("Workers", exact=True).fill("2")
    card.locator('button[data-action="scale"]').click()
    wait_until(lambda: memory.evaluate(_WORKERS_SHOWN) == 2)
    expect(card.locator("dd").nth(1)).to_have_text("2", timeout=60_000)
    expect(card.locator("dd").nth(2)).to_have_text("4")
    # Over the gateway's limit (2 workers a cluster): it stays at 2, and the card says why.
    card.get_by_label("Workers", exact=True).fill("3")
    card.locator('button[data-action="scale"]').click()
    expect(card.locator(".jp-dashdock-ClusterCard-error")).to_contain_text(
        "limit of 2 workers", timeout=60_000
    )
    expect(card.locator("dd").nth(1)).to_have_text("2")
    screenshot(alice, "gateway-sidebar-scaled")

    # Shut down (the gateway cannot count running tasks, so it asks): card and source go.
    card.locator('button[data-action="stop"]').click()
    alice.locator(".jp-Dialog").get_by_role("button", name="Shut down").click()
    expect(card).to_have_count(0, timeout=60_000)
    expect(source).to_have_count(0, timeout=30_000)
