/**
 * Proxy URLs and dashboard links: pure functions (no runtime imports), so node runs them.
 */

/** Where the server mounts its proxy, below the server's base URL. */
const PROXY_ROOT = 'dashdock/proxy';

/** The query key that ties a proxied page, and the websocket Bokeh opens from it, to one pane. */
const PANE_QUERY_KEY = 'dashdock-pane';

/**
 * The URL on the server at `baseUrl` that shows `path` of a dashboard through the proxy.
 *
 * #### Notes
 * `source` is a source id or a literal `host:port` / `[v6]:port` target; either stays as it is,
 * since the server matches the raw segment and an encoded colon would not be a target.
 *
 * With `pane`, the page is tied to that pane, so the server can pause or throttle exactly its relays.
 */
export function joinProxyURL(baseUrl: string, source: string, path: string, pane?: string): string {
  const target = /^[A-Za-z0-9.:[\]-]+$/.test(source) ? source : encodeURIComponent(source);
  const root = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const url = `${root}${PROXY_ROOT}/${target}${path}`;
  return pane ? `${url}?${PANE_QUERY_KEY}=${encodeURIComponent(pane)}` : url;
}

/**
 * What a dashboard link names: a source id (`.../dashdock/proxy/<id>/...`), or a URL to add
 * (`.../dashdock/proxy/<host>:<port>/...` as kernels link it, or the scheduler's own URL).
 */
export function parseDashboardLink(link: string): { source?: string; url: string } {
  const proxied = /\/dashdock\/proxy\/([^/?#]+)/.exec(link);
  if (!proxied) {
    return { url: link };
  }
  const target = decodeURIComponent(proxied[1]);
  return target.includes(':') ? { url: `http://${target}` } : { source: target, url: link };
}
