"""The jupyter-server extension: its configuration traits, and the wiring of the parts they configure.
One unit: every configuration trait is declared here, on the class whose name configures it.

Each concern lives in its own subpackage (sources, panes, clusters, notebook, proxy; see
docs/architecture.md); this module only builds them from the traits, registers their handlers,
and starts and stops them with the server.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from jupyter_core.paths import jupyter_data_dir
from jupyter_server.extension.application import ExtensionApp
from traitlets import Bool, Dict, Float, Int, List, Unicode, Union, default

from dashdock.alerts import handlers as alert_api
from dashdock.clusters import handlers as cluster_api
from dashdock.clusters.config import configured_initial_clusters
from dashdock.clusters.limits import usable_cores
from dashdock.clusters.setup import clusters_of
from dashdock.diagnosis import handlers as diagnosis_api
from dashdock.diagnosis.report import findings_section
from dashdock.history import handlers as history_api
from dashdock.history import views as history_views
from dashdock.history.recordable import recordable_schedulers
from dashdock.history.service import HistoryService
from dashdock.history.settings import DEFAULT_PLOTS_WAIT, DEFAULT_RECORDER_MAX_MEMORY, history_settings
from dashdock.notebook import handlers as notebook_api
from dashdock.notebook.discovery import KernelClients
from dashdock.notebook.environment import offer_to_kernels
from dashdock.notebook.summary import ClusterSummaries
from dashdock.panes import handlers as pane_api
from dashdock.panes.state import PaneRegistry
from dashdock.proxy.bokehjs.serve import LocalBokehJS
from dashdock.proxy.capabilities import Capabilities
from dashdock.proxy.page.deferral import defer_scripts
from dashdock.proxy.page.script import page_script
from dashdock.proxy.routes import routes as proxy_routes
from dashdock.proxy.services import ProxyServices, ProxySettings
from dashdock.proxy.session_tokens import SessionTokens
from dashdock.proxy.websocket.relay import WebSocketRelay
from dashdock.sources import handlers as source_api
from dashdock.sources.registry import SourceRegistry
from dashdock.targets import DEFAULT_ALLOWED_TARGETS, Allowlist
from dashdock.upstream import Timeouts, UpstreamClient


class DashdockApp(ExtensionApp):
    """Docks the plots of Dask dashboards into JupyterLab through an authenticated proxy."""

    name = "dashdock"

    allowed_targets = List(
        Unicode(),
        default_value=list(DEFAULT_ALLOWED_TARGETS),
        config=True,
        help=(
            "Hosts the proxy may reach besides registered sources, and where users may add sources: "
            "IP networks ('10.0.0.0/8'), host names ('scheduler.internal'), 'host:port' or '*'. "
            "Default: loopback only (127.0.0.0/8, ::1, localhost)."
        ),
    )
    initial_sources = List(
        Union([Unicode(), Dict(per_key_traits={"url": Unicode(), "name": Unicode()})]),
        default_value=[],
        config=True,
        help="Dashboards registered as sources when the server starts: URLs, or "
        '{"url": ..., "name": ...} to name them (default: none). Not saved in sources_file: the '
        "configuration adds them at each start, and a dashboard removed from it is gone.",
    )
    sources_file = Unicode(
        config=True,
        help=(
            "SQLite file where user-added sources are kept across server restarts, in a directory other "
            "users cannot write to; servers may share it. '' disables saving. A sources.json of an "
            "earlier version (this file, or beside it) is imported once and kept, renamed. "
            "Default: <jupyter data dir>/dashdock/sources.db."
        ),
    )
    credentials_file = Unicode(
        config=True,
        help=(
            "JSON file (mode 0600) where the credentials users give for dashboards behind authentication "
            "are kept; they are added to every request to that dashboard's server and never sent to "
            "the browser. '' keeps them only while the server runs. "
            "Default: <jupyter data dir>/dashdock/credentials.json."
        ),
    )
    connect_timeout = Float(5.0, config=True, help="Seconds to wait for a dashboard connection (default 5).")
    read_timeout = Float(
        60.0, config=True, help="Seconds a proxied response may stall between two chunks (default 60)."
    )
    json_timeout = Float(
        10.0, config=True, help="Seconds to wait for a health check or a plot list (default 10)."
    )
    cache_dir = Unicode(
        config=True,
        help=(
            "Where BokehJS compressed harder than per request (zopfli, brotli) is kept, once per "
            "bokeh version; '' turns that off (gzip -9 is served). Default: $XDG_CACHE_HOME/dashdock "
            "or ~/.cache/dashdock."
        ),
    )
    max_concurrent_probes = Int(
        16,
        config=True,
        help=(
            "Requests the server makes of dashboards at once for itself (health checks, plot lists, "
            "worker tables); more wait their turn. Default: 16."
        ),
    )
    health_checks_per_poll = Int(
        64,
        config=True,
        help=(
            "Sources whose health one poll of the sidebar checks at most (down ones and the least "
            "recently checked first), so a poll costs the same with ten or ten thousand sources. Default: 64."
        ),
    )
    max_request_body = Int(
        1024 * 1024,
        config=True,
        help="Largest JSON body dashdock's API accepts, in bytes; larger ones get 413 (default 1 MiB).",
    )
    websocket_max_message_size = Int(
        1024**3,
        config=True,
        help="Largest websocket message the proxy relays from the browser, in bytes (default 1 GiB).",
    )
    view_link_lifetime = Float(
        3600.0,
        config=True,
        help=(
            "Seconds a view link (the capability URL a proxied page is served under) stays valid; "
            "a signed-in user's navigation renews an expired one. Default: 3600."
        ),
    )

    kernel_dashboard_link = Bool(
        True,
        config=True,
        help=(
            "Give kernels started by this server a distributed.dashboard.link through dashdock's proxy, "
            "so client.dashboard_link opens from the browser under any base URL (JupyterHub included). "
            "A user's own setting of the link wins. Default: True."
        ),
    )
    kernel_integration = Bool(
        True,
        config=True,
        help=(
            "Give Dask clients in Python kernels started by this server dashdock's live repr, and "
            "show each client as a source named after its notebook (a Dask client preload that "
            "does nothing until a Client is created). Default: True."
        ),
    )
    cell_strips = Bool(
        True,
        config=True,
        help=(
            "Under each notebook cell that computes with Dask, show what it computed: its tasks by "
            "group, time, bytes, errors (needs kernel_integration). A notebook can turn them off with "
            "dashdock.cell_strips(False). Default: True."
        ),
    )

    cluster_class = Unicode(
        None,
        allow_none=True,
        config=True,
        help=(
            "Dotted path of the class 'New cluster' creates, e.g. 'dask_jobqueue.SLURMCluster'. "
            "Default: labextension.factory from Dask's config if set, else 'distributed.LocalCluster'."
        ),
    )
    cluster_args: List[object] = List(
        default_value=None, allow_none=True, config=True, help="Positional arguments of the cluster class."
    )
    cluster_kwargs = Dict(
        default_value=None,
        allow_none=True,
        config=True,
        help="Keyword arguments of the cluster class (default: labextension.factory.kwargs, else none).",
    )
    default_workers = Int(
        None,
        allow_none=True,
        config=True,
        help="Workers of a new cluster (default: the class's own default).",
    )
    default_adapt = Dict(
        default_value=None,
        allow_none=True,
        config=True,
        help="Adaptive bounds of a new cluster, {'minimum': a, 'maximum': b} (default: fixed size).",
    )
    initial_clusters = List(
        Dict(),
        default_value=None,
        allow_none=True,
        config=True,
        help=(
            "Clusters started with the server, [{'name': ..., 'workers': n}] "
            "(default: labextension.initial from Dask's config, else none)."
        ),
    )
    cluster_start_timeout = Float(
        120.0, config=True, help="Seconds a new cluster may take to start (default 120)."
    )
    max_workers = Int(
        min=0,
        config=True,
        help=(
            "Most workers one managed cluster may have, its adaptive maximum included. A request for "
            "more is refused (400); a configured size over it (default_workers, default_adapt, "
            "initial_clusters, Dask's labextension section) is clamped to it with a warning. "
            "Default: 4 per core this server may run on."
        ),
    )
    max_clusters = Int(
        8,
        min=0,
        config=True,
        help=(
            "Most managed clusters at a time, counting those starting or shutting down; a request for "
            "another is refused (409), an initial cluster beyond it is not started. Default: 8."
        ),
    )

    gateway_address = Unicode(
        None,
        allow_none=True,
        config=True,
        help=(
            "Address of a dask-gateway whose clusters the sidebar lists, creates, scales and stops "
            "with this server's credentials. Default: gateway.address from Dask's config "
            "(DASK_GATEWAY__ADDRESS), as dask-gateway reads it; unset, no gateway."
        ),
    )
    gateway_proxy_address = Unicode(
        None, allow_none=True, config=True, help="The gateway's scheduler proxy (default: Dask's config)."
    )
    gateway_public_address = Unicode(
        None,
        allow_none=True,
        config=True,
        help="The gateway address dashboard links use (default: Dask's config, else gateway_address).",
    )
    gateway_auth = Unicode(
        None,
        allow_none=True,
        config=True,
        help=(
            "How to authenticate to the gateway: 'jupyterhub' (this server's JupyterHub token), "
            "'kerberos', 'basic' or a dotted path to a dask_gateway.auth.GatewayAuth class. "
            "Default: gateway.auth.type from Dask's config (DASK_GATEWAY__AUTH__TYPE)."
        ),
    )
    gateway_timeout = Float(30.0, config=True, help="Seconds a request to the gateway may take (default 30).")

    history = Bool(
        True,
        config=True,
        help=(
            "Record every computation of the sources whose scheduler dashdock knows (managed clusters, "
            "notebooks' clients): tasks, memory, workers, exceptions, kept after the cluster is gone and "
            "exported as a Chrome trace, Parquet or an HTML report. Default: on."
        ),
    )
    history_file = Unicode(
        config=True,
        help="The history store (SQLite). Default: <Jupyter data dir>/dashdock/history.db.",
    )
    history_max_bytes = Int(
        1024**3,
        min=1024**2,
        config=True,
        help="Most bytes the history store may take; the oldest ended runs go beyond it. Default: 1 GiB.",
    )
    history_max_age = Float(
        30 * 24 * 3600.0,
        min=60.0,
        config=True,
        help="Seconds an ended run is kept; older runs are deleted. Default: 30 days.",
    )
    history_max_recorded = Int(
        16,
        min=1,
        config=True,
        help="Most sources recorded at the same time; more are not recorded (logged). Default: 16.",
    )

    history_recorder_max_memory = Int(
        DEFAULT_RECORDER_MAX_MEMORY,
        min=0,
        config=True,
        help="Bytes of address space the history recorder process may use (RLIMIT_AS): a scheduler "
        "that sends it huge replies exhausts only the recorder, which is started again. 0: no cap. "
        "Default: 1 GiB.",
    )

    draw_key_plots = Bool(
        True,
        config=True,
        help="Serve Dask's key plots of recorded sources (Task Stream, Progress, the worker plots, "
        "Task Groups, ...) from the history recorder, drawn by Dask's own code from the recorder's "
        "one connection, instead of opening a Bokeh session on the scheduler for each pane. False: "
        "every pane is a session of the dashboard's own.",
    )

    install_on_url_schedulers = Bool(
        True,
        config=True,
        help="Add dashdock's plot-state plugin (pickled by value; the scheduler needs no dashdock) "
        "to a recorded scheduler that does not offer its state, such as one a dashboard URL names, "
        "through the recorder's connection, as a notebook's client adds its own. Its key plots are "
        "then drawn by dashdock with no Bokeh session on it, and diagnosis can name a saturated "
        "scheduler. Default: True. False: such a scheduler's panes other than the Task Stream are "
        "its own pages (Dask's), and say so.",
    )

    draw_key_plots_refresh = Float(
        0.08,
        min=0.05,
        config=True,
        help="Seconds between the watcher's reads of a scheduler while a drawn pane of it is open "
        "(its task stream; its state every other read), so drawn plots keep up with Dask's own pages "
        "(about 10 changes a second). Each open pane's browser redraws that often: where the browser "
        "shares a small machine's cores with the scheduler, 0.5 or 1.0 costs less. Default: 0.08.",
    )

    draw_key_plots_wait = Float(
        DEFAULT_PLOTS_WAIT,
        min=0.0,
        config=True,
        help="Seconds a pane opened while its source's recording is still beginning waits for the "
        "recorder to draw its plot; after that it opens the dashboard's own page. Default: 10.",
    )

    alerts_max_per_run = Int(
        500,
        min=1,
        config=True,
        help="Most distinct alerts one recorded run keeps (each is updated in place when it happens "
        "again; later new ones are dropped). Alerts are deleted with their run. Default: 500.",
    )

    @default("history_file")
    def _default_history_file(self) -> str:
        return str(Path(jupyter_data_dir()) / "dashdock" / "history.db")

    @default("max_workers")
    def _default_max_workers(self) -> int:
        # Four per core: room for oversubscribed or mostly idle workers, and far from a number
        # (tens of thousands of processes) that would take the machine down.
        return 4 * usable_cores()

    @default("cache_dir")
    def _default_cache_dir(self) -> str:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return str(Path(base) / "dashdock")

    @default("sources_file")
    def _default_sources_file(self) -> str:
        return str(Path(jupyter_data_dir()) / "dashdock" / "sources.db")

    @default("credentials_file")
    def _default_credentials_file(self) -> str:
        return str(Path(jupyter_data_dir()) / "dashdock" / "credentials.json")

    def initialize_settings(self) -> None:
        self.client = UpstreamClient(
            Timeouts(connect=self.connect_timeout, json=self.json_timeout),
            max_probes=self.max_concurrent_probes,
        )
        self.allowlist = Allowlist(self.allowed_targets)
        self.registry = SourceRegistry(
            self.client,
            self.allowlist,
            Path(self.sources_file) if self.sources_file else None,
            self.log,
            checks_per_poll=self.health_checks_per_poll,
            credentials_file=Path(self.credentials_file) if self.credentials_file else None,
        )
        self.panes = PaneRegistry()
        self.clusters = clusters_of(self, self.registry, self.log)
        self.kernel_clients = KernelClients.of_server(self.serverapp, self.registry, self.allowlist, self.log)
        assert self.serverapp is not None  # linked before initialize_settings
        offer_to_kernels(
            self,
            self.serverapp.base_url,
            self.kernel_clients.directory,
            self.clusters.gateway_settings(),
            self.log,
        )
        self._recordable_schedulers = recordable_schedulers(self.registry, self.kernel_clients, self.clusters)
        self.history_service = HistoryService(
            history_settings(self), self.registry, self._recordable_schedulers, self.log
        )

    def initialize_handlers(self) -> None:
        self.bokeh_js = LocalBokehJS(Path(self.cache_dir) if self.cache_dir else None)
        max_body = self.max_request_body
        self.handlers.extend(source_api.routes(self.registry, max_body))
        self.handlers.extend(pane_api.routes(self.panes, max_body))
        self.handlers.extend(cluster_api.routes(self.clusters, max_body))
        summaries = ClusterSummaries(self.kernel_clients, self.client, self.allowlist)
        self.handlers.extend(notebook_api.routes(self.kernel_clients, summaries))
        self.handlers.extend(history_api.routes(self.history_service, max_body, findings_section))
        self.handlers.extend(diagnosis_api.routes(self.history_service, max_body))
        self.handlers.extend(history_views.routes(self.history_service, page_script(), defer_scripts))
        self.handlers.extend(alert_api.routes(self.history_service, self.registry, max_body))
        self.session_tokens = SessionTokens()
        websockets = WebSocketRelay(
            self.panes,
            self.registry.note_lost,
            self.registry.note_moved,
            connect_timeout=self.connect_timeout,
            read_timeout=self.read_timeout,
            max_message=self.websocket_max_message_size,
        )
        self.history_service.when_drawn(websockets.drawn_now)
        services = ProxyServices(
            registry=self.registry,
            client=self.client,
            allowlist=self.allowlist,
            settings=ProxySettings(connect_timeout=self.connect_timeout, read_timeout=self.read_timeout),
            bokeh_js=self.bokeh_js,
            websockets=websockets,
            capabilities=Capabilities(self.view_link_lifetime),
            tokens=self.session_tokens,
            drawn=self.history_service,
        )
        self.handlers.extend(proxy_routes(services))

    async def _start_jupyter_server_extension(self, serverapp: object) -> None:
        await self.registry.load()
        self.kernel_clients.start()
        self.bokeh_js.start()
        await self.history_service.start()
        # In the background: a slow or dead dashboard, or a cluster that takes a minute to
        # start, must not delay the server's start.
        if self.initial_sources:
            self._initial = self.registry.add_initial(self.initial_sources)
        if requests := configured_initial_clusters(self.initial_clusters):
            self._initial_clusters = asyncio.ensure_future(self.clusters.start_configured(requests, self.log))

    async def stop_extension(self) -> None:
        if getattr(self, "_initial", None) is not None:
            self._initial.cancel()  # initial sources still asked for (a dashboard not up yet)
        self.registry.stop_checks()
        await self.bokeh_js.close()
        await self.kernel_clients.stop()
        await self.history_service.stop()
        await self.clusters.close()
        await self.client.close()
