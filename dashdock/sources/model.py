"""A source: a dashboard this server knows, its health, and the id it is known by.

Sources are user-added URLs (``"url"``), clusters this server manages (``"cluster"``) and the
Dask clients of running notebooks (``"kernel"``). Most are Dask dashboards; a Bokeh server (``bokeh
serve``, a kernel's published plots) is a source of flavour ``"bokeh"`` whose plots are its apps.
A saved entry that cannot be used now is a ``DisabledSource``: listed with the reason, unknown to
the proxy.
"""

from __future__ import annotations

import json
from contextlib import suppress
from dataclasses import dataclass, field

from dashdock.errors import Invalid
from dashdock.ids import derived_source_id
from dashdock.sources.listing import next_version
from dashdock.targets import DashboardURL, Target, TargetError, is_text, parse_dashboard_url

MAX_NAME = 200  # characters of a source's name given by a user


@dataclass
class Health:
    status: str = "unknown"  # "up", "down" or "unknown"
    message: str = ""
    checked: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {"status": self.status, "message": self.message, "checked": self.checked}


_VISIBLE_FIELDS = frozenset(
    {
        "name",
        "kind",
        "dashboard",
        "lost",
        "warning",
        "alerts",
        "credentials",
        "refused",
        "unrecorded",
        "gpus",
        "drawn",
    }
)


@dataclass
class Source:
    """A dashboard: the target to connect to and the path of the dashboard root on it."""

    id: str
    name: str
    kind: str  # "url" (added by a user), "cluster" (managed), "kernel" (a notebook's client)
    dashboard: DashboardURL
    health: Health = field(default_factory=Health)
    lost: int = 0  # how often an open plot lost its dashboard connection (a restart, a crash, a move)
    warning: str = ""  # for people: the last change to this source could not be saved
    alerts: bool = True  # whether its alerts notify (muted from the sidebar: still recorded)
    credentials: dict[str, str] | None = None  # {"kind", "name"} when the server keeps some for it
    refused: bool = False  # its dashboard's last answer was 401/403: it wants (other) credentials
    flavour: str = "dask"  # "dask" (a scheduler's dashboard) or "bokeh" (any Bokeh server: bokeh_apps.py)
    # A source added by URL: its scheduler as its dashboard names it (scheduler.py), when the
    # history may record it; else why not, for people.
    scheduler: str | None = None
    unrecorded: str = ""
    # When it was last looked for (time.monotonic()); infinite once its info page answered.
    scheduler_checked: float = 0.0
    # How many of its workers report GPU metrics, as the history's recorder last read them; None
    # while not known (not recorded yet, or not a Dask scheduler).
    gpus: int | None = None
    # The paths of its plots that dashdock draws from its recording instead of its dashboard (the
    # history service sets them while it does: live/plot_server.py).
    drawn: tuple[str, ...] = ()
    version: int = field(default=0, init=False, compare=False)  # of its last visible change (listing.py)

    def __post_init__(self) -> None:
        self.version = next_version()

    def __setattr__(self, name: str, value: object) -> None:
        # Every visible change gets a new version, wherever it is made; a health check that finds
        # what the last one found (only its time moves) is no change.
        old = self.__dict__.get(name)
        object.__setattr__(self, name, value)
        if name in _VISIBLE_FIELDS and old != value:
            object.__setattr__(self, "version", next_version())
        elif name == "health" and isinstance(old, Health) and isinstance(value, Health):
            if (old.status, old.message) != (value.status, value.message):
                object.__setattr__(self, "version", next_version())

    @property
    def target(self) -> Target:
        return self.dashboard.target

    @property
    def root_path(self) -> str:
        return self.dashboard.path

    def to_json(self) -> dict[str, object]:
        described: dict[str, object] = {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "url": self.dashboard.url,
            "health": self.health.to_json(),
            "lost": self.lost,
            "alerts": self.alerts,
            "flavour": self.flavour,
            # Whether the server holds credentials for it, and of which kind: never their value.
            "credentials": self.credentials,
            "needsCredentials": self.refused,
            # Why the history cannot record it; null when it can (or may, once its dashboard answers).
            "unrecorded": (
                "A Bokeh server has no Dask scheduler to record." if self.flavour == "bokeh" else None
            )
            or self.unrecorded
            or None,
            # Workers whose scheduler reports GPU metrics for them; null when not known.
            "gpus": self.gpus,
            # Its plots (paths) that dashdock draws from its recording, not its dashboard.
            "drawnPlots": list(self.drawn),
        }
        if self.warning:
            described["warning"] = self.warning
        return described

    def entry(self) -> str:
        """What the sources file keeps of it."""
        kept: dict[str, object] = {"url": self.dashboard.url, "name": self.name}
        if not self.alerts:
            kept["alerts"] = False
        if self.flavour != "dask":
            kept["flavour"] = self.flavour
        return json.dumps(kept)


@dataclass
class DisabledSource:
    """A saved source that cannot be used now: kept in the file as it is, listed with the reason,
    and unknown to the proxy. It can be removed; it comes back by itself once it is usable again
    (a host allowed again) at the next start."""

    id: str
    name: str
    url: str
    reason: str

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "kind": "url",
            "url": self.url,
            "disabled": self.reason,
            "health": Health("unknown", self.reason).to_json(),
            "lost": 0,
        }


def source_id_for(url: str) -> str:
    """Stable id of a dashboard URL, so re-adding it (or restoring a layout) finds the same source."""
    return derived_source_id(url)


def saved_id_for(entry: object) -> str:
    """The id a saved entry is kept under: its source's id when it has a usable URL, else one made
    from the entry itself (so that it can still be listed and removed)."""
    if isinstance(entry, dict) and isinstance(entry.get("url"), str):
        with suppress(TargetError):
            return source_id_for(parse_dashboard_url(entry["url"]).url)
    return derived_source_id(json.dumps(entry, sort_keys=True))


def given_name(name: object) -> str | None:
    """A source name from a request (``None`` or empty: the dashboard names it), or ``Invalid``."""
    if name is None:
        return None
    if not (isinstance(name, str) and len(name) <= MAX_NAME and is_text(name)):
        raise Invalid(f"'name' must be text of at most {MAX_NAME} characters.")
    return name or None
