import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { ICluster, IClusterLimits, IPlot, ISource, IWorker } from './tokens';

/**
 * An API call failed; `message` is the server's explanation, fit to show to people.
 */
export class APIError extends Error {
  constructor(
    message: string,
    readonly status: number
  ) {
    super(message);
  }
}

/**
 * Call the dashdock REST API and return its JSON; failures become `APIError` with the server's message.
 */
export async function requestAPI<T>(
  endpoint: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  const url = URLExt.join(settings.baseUrl, 'dashdock/api', endpoint);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    throw new APIError(String(error), 0);
  }
  const text = await response.text();
  let data: any = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { message: text };
    }
  }
  if (!response.ok) {
    throw new APIError(data?.message || response.statusText, response.status);
  }
  return data as T;
}

/**
 * What `GET sources` answers: usable sources, then disabled ones, and warnings about the sources file.
 */
export interface ISourceListing {
  sources: ISource[];
  warnings: string[];
  /** What the listing reflects; a later `since` asks only for what changed after it. */
  version?: string;
  /**
   * With `since`: the ids of all usable sources, in order; `sources` then holds only the usable
   * ones that changed, and every disabled one.
   */
  ids?: string[];
}

/**
 * The server's sources; with `check`, the health of those that need it most is asked first; with
 * `since` (a listing's version), only what changed after it.
 */
export function listSources(check = false, since?: string): Promise<ISourceListing> {
  const query = [check ? 'check=1' : '', since ? `since=${encodeURIComponent(since)}` : ''].filter(Boolean);
  return requestAPI<ISourceListing>(query.length ? `sources?${query.join('&')}` : 'sources');
}

export function addSource(url: string, name?: string): Promise<ISource> {
  return requestAPI<ISource>('sources', {
    method: 'POST',
    body: JSON.stringify(name ? { url, name } : { url })
  });
}

/**
 * Remove a source; resolves to a warning when the server could not change its sources file, else ''.
 */
export async function removeSource(id: string): Promise<string> {
  const answer = await requestAPI<{ warning?: string } | null>(`sources/${encodeURIComponent(id)}`, {
    method: 'DELETE'
  });
  return answer?.warning ?? '';
}

export async function listPlots(id: string): Promise<IPlot[]> {
  return (await requestAPI<{ plots: IPlot[] }>(`sources/${encodeURIComponent(id)}/plots`)).plots;
}

/**
 * A source's workers, from its scheduler, with the pages of their own dashboards.
 */
export async function listWorkers(id: string): Promise<IWorker[]> {
  return (await requestAPI<{ workers: IWorker[] }>(`sources/${encodeURIComponent(id)}/workers`)).workers;
}

/**
 * What the relays of one pane do: paused (nothing reaches it) and seconds between deliveries.
 */
export async function setPaneState(pane: string, state: { paused: boolean; interval: number }): Promise<void> {
  await requestAPI<unknown>(`panes/${encodeURIComponent(pane)}`, {
    method: 'PATCH',
    body: JSON.stringify(state)
  });
}

/**
 * The URL on this server that shows `path` of a source's dashboard through the proxy.
 *
 * #### Notes
 * With `pane`, the page (and the websocket Bokeh opens with the page's query) is tied to that
 * pane, so the server can pause or throttle exactly its relays.
 */
export function proxyURL(source: string, path: string, pane?: string): string {
  const baseUrl = ServerConnection.makeSettings().baseUrl;
  // A source id or a literal `host:port` / `[v6]:port` target stays as it is: the server matches
  // the raw segment, so an encoded colon would not be a target.
  const target = /^[A-Za-z0-9.:[\]-]+$/.test(source) ? source : encodeURIComponent(source);
  const url = URLExt.join(baseUrl, 'dashdock/proxy', target) + path;
  return pane ? `${url}?dashdock-pane=${encodeURIComponent(pane)}` : url;
}

/**
 * What `GET clusters` answers: the clusters, and the limits every request is held to.
 */
export interface IClusterListing {
  clusters: ICluster[];
  limits: IClusterLimits;
}

export function listClusters(): Promise<IClusterListing> {
  return requestAPI<IClusterListing>('clusters');
}

export function startCluster(options: { name?: string; workers?: number } = {}): Promise<ICluster> {
  return requestAPI<ICluster>('clusters', { method: 'POST', body: JSON.stringify(options) });
}

export function changeCluster(
  id: string,
  change: { workers: number } | { adapt: { minimum: number; maximum: number } }
): Promise<ICluster> {
  return requestAPI<ICluster>(`clusters/${encodeURIComponent(id)}`, {
    method: 'PATCH',
    body: JSON.stringify(change)
  });
}

export function restartCluster(id: string): Promise<ICluster> {
  return requestAPI<ICluster>(`clusters/${encodeURIComponent(id)}/restart`, { method: 'POST' });
}

export async function stopCluster(id: string): Promise<void> {
  await requestAPI<void>(`clusters/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/**
 * What a notebook's repr of a Dask client shows live: the scheduler's counts, and the source its
 * plots open from (none when the dashboard is not a source of this server).
 */
export interface ISummary {
  source: ISource | null;
  /** `host:port` of the dashboard, usable as a proxy target when there is no source. */
  target: string;
  counts: {
    workers?: number;
    threads?: number;
    tasks?: number;
    processing?: number;
    waiting?: number;
    in_memory?: number;
    erred?: number;
    stored_bytes?: number;
    clients?: number;
  } | null;
  message: string;
}

export function summary(dashboard: string, kernel: string | null): Promise<ISummary> {
  const query = new URLSearchParams({ dashboard });
  if (kernel) {
    query.set('kernel', kernel);
  }
  return requestAPI<ISummary>(`summary?${query.toString()}`);
}
