"""A user creates a cluster in a notebook and follows client.dashboard_link from the browser.

Kernels started by this server inherit a ``distributed.dashboard.link`` that points at dashdock's
proxy under the server's base URL, so the link works wherever the browser is (JupyterHub included).
"""

from __future__ import annotations

from typing import Any

import pytest
from _kernels import Kernel, run_in_new_kernel
from _support import Jupyter

from dashdock.notebook.environment import offer_proxied_dashboard_link

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test

VARIABLE = "DASK_DISTRIBUTED__DASHBOARD__LINK"

MAKE_CLUSTER = """
from distributed import LocalCluster
cluster = LocalCluster(n_workers=1, processes=False, protocol="tcp", host="127.0.0.1",
                       dashboard_address="127.0.0.1:0")
print(cluster.dashboard_link)
"""
PRINT_LINK_SETTING = "import distributed, dask; print(dask.config.get('distributed.dashboard.link'))"


@pytest.fixture
def jp_base_url() -> str:
    return "/user/alice/"


async def test_dashboard_link_of_a_notebook_cluster_opens_through_the_proxy(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    async with Kernel(jp_serverapp) as kernel:
        output = await kernel.run(MAKE_CLUSTER)
        link = output.strip().splitlines()[-1]
        assert link.startswith("/user/alice/dashdock/proxy/127.0.0.1:"), output
        assert link.endswith("/status")

        page = await jupyter.proxied(link, absolute=True)
        assert page.code == 200, page.body
        assert b"bokeh" in page.body.lower()


async def test_a_users_own_link_setting_wins(
    monkeypatch: pytest.MonkeyPatch, jp_server_config: Any, jp_serverapp: Any
) -> None:
    monkeypatch.setenv(VARIABLE, "https://dashboards.example/{port}/status")
    # The server under test was set up before this line: let its extension decide again.
    (app,) = jp_serverapp.extension_manager.extension_apps["dashdock"]
    offer_proxied_dashboard_link(jp_serverapp.base_url, app.log)
    output = await run_in_new_kernel(jp_serverapp, PRINT_LINK_SETTING)
    assert output.strip() == "https://dashboards.example/{port}/status"


class TestTurnedOff:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"kernel_dashboard_link": False}

    async def test_kernels_keep_dasks_default_link(self, jp_serverapp: Any) -> None:
        output = await run_in_new_kernel(jp_serverapp, PRINT_LINK_SETTING)
        assert output.strip() == "{scheme}://{host}:{port}/status"
