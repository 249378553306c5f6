/**
 * What a pane's tab calls its source when panes of several sources are open (pure; see manager.ts
 * for panes/). A tab is narrow: "Task Stream · 127.0.0.1:8787" is cut before the port, the one part
 * that tells two local schedulers apart, so sources on one host are called by their port alone.
 */

/** `host:port` (an IPv6 host in brackets), as a source added by URL is named. */
const HOST_PORT = /^(\[[^\]]+\]|[^\s:/[\]]+):(\d{1,5})$/;

/**
 * The tab label of each of `names` (the distinct names of the sources with open panes): `:port`
 * for a `host:port` name whose host another of them shares, the whole name otherwise.
 */
export function tabSourceLabels(names: readonly string[]): Map<string, string> {
  const hostOf = new Map<string, string>();
  const sharing = new Map<string, number>();
  for (const name of new Set(names)) {
    const match = HOST_PORT.exec(name);
    if (match) {
      hostOf.set(name, match[1]);
      sharing.set(match[1], (sharing.get(match[1]) ?? 0) + 1);
    }
  }
  const labels = new Map<string, string>();
  for (const name of names) {
    const host = hostOf.get(name);
    const shared = host !== undefined && (sharing.get(host) ?? 0) > 1;
    labels.set(name, shared ? name.slice(host.length) : name);
  }
  return labels;
}
