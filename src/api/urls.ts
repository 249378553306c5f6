/**
 * Proxy URLs and dashboard links: pure functions (no runtime imports), so node runs them.
 */

/** The address of a Dask dashboard on this machine, shown as an example where a URL is asked for. */
export const DASHBOARD_URL_EXAMPLE = 'http://127.0.0.1:8787';

/** Where the server mounts its proxy, below the server's base URL. */
const PROXY_ROOT = 'dashdock/proxy';

/** The query key that ties a proxied page, and the websocket Bokeh opens from it, to one pane. */
const PANE_QUERY_KEY = 'dashdock-pane';

/**
 * A literal proxy target, as the server reads a proxy segment: `host:port` or `[v6]:port`.
 */
const TARGET_SEGMENT =
  /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.-]{1,253}):(\d{1,5})$/;

/** What may name a source in a link: an id's characters, never a dot, slash or colon. */
const SOURCE_SEGMENT = /^[A-Za-z0-9_-]{1,80}$/;

/** A path segment that a browser resolves away: `.` or `..`, percent-encoded dots included. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * The URL on the server at `baseUrl` that shows `path` of a dashboard through the proxy.
 *
 * #### Notes
 * `source` is a source id or a literal `host:port` / `[v6]:port` target; either stays as it is,
 * since the server matches the raw segment and an encoded colon would not be a target. Anything
 * else is percent-encoded, so it stays one segment.
 *
 * With `pane`, the page is tied to that pane, so the server can pause or throttle exactly its relays.
 *
 * Throws when `source` or a segment of `path` is a dot segment: the browser would resolve it
 * away and the URL would leave the proxy (no encoding prevents that).
 */
export function joinProxyURL(
  baseUrl: string,
  source: string,
  path: string,
  pane?: string
): string {
  if (
    DOT_SEGMENT.test(source) ||
    path.split(/[/\\]/).some(segment => DOT_SEGMENT.test(segment))
  ) {
    throw new Error('dashdock: a proxy URL cannot name "." or ".."');
  }
  const target = /^[A-Za-z0-9.:[\]-]+$/.test(source)
    ? source
    : encodeURIComponent(source);
  const root = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const url = `${root}${PROXY_ROOT}/${target}${path}`;
  return pane ? `${url}?${PANE_QUERY_KEY}=${encodeURIComponent(pane)}` : url;
}

/**
 * What a dashboard link names: a source id (`.../dashdock/proxy/<id>/...`), or a URL to add
 * (`.../dashdock/proxy/<host>:<port>/...` as kernels link it, or the scheduler's own URL).
 *
 * #### Notes
 * Only the link's path is read (not its query or fragment). A proxy segment that is neither an
 * id nor a `host:port` / `[v6]:port` target (a dot, `@`, an encoded slash, bad escapes) is not
 * read either: the whole link is then the URL to add, and the server, which checks every URL it
 * is given, refuses it with its reason.
 */
export function parseDashboardLink(link: string): {
  source?: string;
  url: string;
} {
  const path = link.split(/[?#]/, 1)[0];
  const proxied = /\/dashdock\/proxy\/([^/]+)/.exec(path);
  const segment = proxied ? decoded(proxied[1]) : null;
  if (segment === null) {
    return { url: link };
  }
  const target = TARGET_SEGMENT.exec(segment);
  if (target) {
    return Number(target[1]) <= 65535
      ? { url: `http://${segment}` }
      : { url: link };
  }
  return SOURCE_SEGMENT.test(segment)
    ? { source: segment, url: link }
    : { url: link };
}

/** `segment` percent-decoded, or null when its escapes are malformed. */
function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * `host:port` of a dashboard URL, the port written out when the URL leaves it implied.
 */
export function hostAndPort(url: string): string {
  const scheme = (
    url.match(/^([a-z][a-z0-9+.-]*):\/\//i)?.[1] ?? 'http'
  ).toLowerCase();
  const netloc = url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split(/[/?#]/)[0];
  const hostPart = netloc.split('@').pop() ?? netloc;
  const hasPort = /:\d+$/.test(hostPart);
  return hasPort ? hostPart : `${hostPart}:${scheme === 'https' ? 443 : 80}`;
}
