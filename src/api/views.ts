/**
 * What the Lab asks of view URLs for a spare frame (panes/spares.ts): the page a proxy link shows,
 * fetched as a frame would load it, and whether a spare's own view URL still holds.
 */

import { ServerConnection } from '@jupyterlab/services';

/** A proxied page as the Lab fetched it: its HTML, and its path and query below its view URL. */
export interface IViewPage {
  html: string;
  below: string;
}

/**
 * Fetch the page a proxy URL shows, as a frame would load it (following its redirect to the view
 * URL), for a spare frame to show (panes/spares.ts); null when it is not an HTML page of a view
 * URL, is longer than `maxLength` characters, or cannot be had.
 */
export async function fetchViewPage(
  url: string,
  maxLength: number
): Promise<IViewPage | null> {
  const settings = ServerConnection.makeSettings();
  const { views } = viewRoot(settings);
  try {
    const response = await ServerConnection.makeRequest(
      url,
      { cache: 'no-store' },
      settings
    );
    const final = new URL(response.url);
    const below = final.pathname.startsWith(views)
      ? /^[^/]+\/[^/]+\/(.*)$/.exec(final.pathname.slice(views.length))
      : null;
    const type = response.headers.get('Content-Type') ?? '';
    const length = Number(response.headers.get('Content-Length') ?? 0);
    if (
      !response.ok ||
      !below ||
      !type.startsWith('text/html') ||
      length > maxLength
    ) {
      void response.body?.cancel();
      return null;
    }
    const html = await response.text();
    return html.length > maxLength
      ? null
      : { html, below: below[1] + final.search };
  } catch {
    return null;
  }
}

/** Whether this server still serves the view URL `view` (a path): false once its link expired or
 * the server restarted (another key). Asks for its spare page's headers (proxy/page/spare.py). */
export async function viewHolds(view: string): Promise<boolean> {
  const settings = ServerConnection.makeSettings();
  const { base, views } = viewRoot(settings);
  const segments = view.startsWith(views)
    ? view.slice(views.length).split('/')
    : [];
  if (
    segments.length !== 2 ||
    segments.some(part => !part || /^(?:\.|%2e){1,2}$/i.test(part))
  ) {
    return false; // not a view URL of this server
  }
  try {
    const response = await ServerConnection.makeRequest(
      new URL(`${view}/.dashdock/spare`, base).href,
      { method: 'HEAD', cache: 'no-store' },
      settings
    );
    return response.ok;
  } catch {
    return false;
  }
}

/** This server's base URL, and the path every view URL starts with. */
function viewRoot(settings: ServerConnection.ISettings): {
  base: URL;
  views: string;
} {
  const base = new URL(settings.baseUrl, window.location.href);
  return { base, views: new URL('dashdock/view/', base).pathname };
}
