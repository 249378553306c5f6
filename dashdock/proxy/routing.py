"""Where a proxied request goes: a source id or a literal ``host:port``, and the path below it."""

from __future__ import annotations

from dataclasses import dataclass

from dashdock.errors import Invalid, NotAllowed, host_not_allowed
from dashdock.ids import is_source_id
from dashdock.sources.registry import SourceRegistry
from dashdock.targets import Allowlist, Target, TargetError, has_dot_segment, parse_target_segment

DOT_SEGMENTS_REFUSED = (
    "This address has '.' or '..' segments (perhaps percent-encoded); dashdock relays only paths "
    "that stay inside the dashboard."
)


@dataclass(frozen=True)
class Route:
    """Where one proxied request goes."""

    target: Target
    upstream_root: str  # path of the dashboard root on the target ("" for the host root)
    proxy_prefix: str  # this server's path that stands for upstream_root
    path: str  # raw (still percent-encoded) path below the root
    source_id: str | None  # the registered source, when the path named one

    @property
    def upstream_url(self) -> str:
        return self.target.origin + self.upstream_root + self.path


def resolve_route(
    registry: SourceRegistry, allowlist: Allowlist, segment: str, proxy_prefix: str, path: str
) -> Route:
    """A source id goes where the registry says (so panes follow a source that moves); a
    ``host:port`` only where a source or the allowlist permits. Unknown or refused: an error.

    A path with a dot segment, raw or encoded, is refused before anything else: the dashboard (or
    a front that normalises paths) could read it as a path outside the dashboard's root, where
    requests would go with the credentials this server holds for it."""
    if has_dot_segment(path):
        raise NotAllowed(DOT_SEGMENTS_REFUSED)
    if is_source_id(segment):
        source = registry.get(segment)  # unknown, or saved but unusable now (with why)
        if has_dot_segment(source.root_path):  # never so when added; refused all the same
            raise NotAllowed(DOT_SEGMENTS_REFUSED)
        return Route(source.target, source.root_path, proxy_prefix, path, source.id)
    try:
        target = parse_target_segment(segment)
    except TargetError as exc:
        raise Invalid(str(exc)) from exc
    if not (registry.knows_target(target) or allowlist.allows(target)):
        raise host_not_allowed(target.netloc)
    return Route(target, "", proxy_prefix, path, None)
