/**
 * The REST client of dashdock's server (see types.ts for what api/ owns).
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import {
  IAlert,
  IAlertSettings,
  ClusterProvider,
  ICluster,
  IClusterListing,
  IClusterRequest,
  IFormField,
  ICredentials,
  IDiagnosis,
  IHistoryRun,
  IHistoryRunDetail,
  IHistoryWindow,
  IPaneState,
  IPlot,
  ISource,
  ISourceListing,
  ISummary,
  IWorker
} from './types';
import { joinProxyURL } from './urls';

/**
 * An API call failed; `message` is the server's explanation, fit to show to people.
 */
export class APIError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** What the server says the Lab can do about it ('needs-credentials'), when it says. */
    readonly reason: string = ''
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
    throw new APIError(
      data?.message || response.statusText,
      response.status,
      typeof data?.reason === 'string' ? data.reason : ''
    );
  }
  return data as T;
}

/**
 * The server's sources; with `check`, the health of those that need it most is asked first; with
 * `since` (a listing's version), only what changed after it.
 */
export function listSources(
  check = false,
  since?: string
): Promise<ISourceListing> {
  const query = [
    check ? 'check=1' : '',
    since ? `since=${encodeURIComponent(since)}` : ''
  ].filter(Boolean);
  return requestAPI<ISourceListing>(
    query.length ? `sources?${query.join('&')}` : 'sources'
  );
}

export function addSource(
  url: string,
  name?: string,
  credentials?: ICredentials
): Promise<ISource> {
  return requestAPI<ISource>('sources', {
    method: 'POST',
    body: JSON.stringify({
      url,
      ...(name ? { name } : {}),
      ...(credentials ? { credentials } : {})
    })
  });
}

/**
 * Give the credentials of a source's server (null forgets them); kept by the server, never sent back.
 */
export function setSourceCredentials(
  id: string,
  credentials: ICredentials | null
): Promise<ISource> {
  return requestAPI<ISource>(`sources/${encodeURIComponent(id)}`, {
    method: 'PATCH',
    body: JSON.stringify({ credentials })
  });
}

/**
 * Mute (`on` false) or unmute a source's alerts; resolves to the source as it is now.
 */
export function setSourceAlerts(id: string, on: boolean): Promise<ISource> {
  return requestAPI<ISource>(`sources/${encodeURIComponent(id)}`, {
    method: 'PATCH',
    body: JSON.stringify({ alerts: on })
  });
}

/**
 * Alerts updated after `since` (Unix seconds; all kept when left out), the most recently updated first.
 */
export async function listAlerts(since?: number): Promise<IAlert[]> {
  const query = since === undefined ? '' : `?since=${since}`;
  return (await requestAPI<{ alerts: IAlert[] }>(`alerts${query}`)).alerts;
}

/**
 * Tell the server the user's alert settings (which kinds notify, the computation threshold).
 */
export function putAlertSettings(
  settings: IAlertSettings
): Promise<IAlertSettings> {
  return requestAPI<IAlertSettings>('alerts/settings', {
    method: 'PUT',
    body: JSON.stringify(settings)
  });
}

/**
 * Remove a source; resolves to a warning when the server could not change its sources file, else ''.
 */
export async function removeSource(id: string): Promise<string> {
  const answer = await requestAPI<{ warning?: string } | null>(
    `sources/${encodeURIComponent(id)}`,
    {
      method: 'DELETE'
    }
  );
  return answer?.warning ?? '';
}

export async function listPlots(id: string): Promise<IPlot[]> {
  return (
    await requestAPI<{ plots: IPlot[] }>(
      `sources/${encodeURIComponent(id)}/plots`
    )
  ).plots;
}

/**
 * A source's workers, from its scheduler, with the pages of their own dashboards.
 */
export async function listWorkers(id: string): Promise<IWorker[]> {
  return (
    await requestAPI<{ workers: IWorker[] }>(
      `sources/${encodeURIComponent(id)}/workers`
    )
  ).workers;
}

/**
 * Set what the relays of one pane do (the server forgets a pane whose state is back to live).
 */
export async function setPaneState(
  pane: string,
  state: IPaneState
): Promise<void> {
  await requestAPI<unknown>(`panes/${encodeURIComponent(pane)}`, {
    method: 'PATCH',
    body: JSON.stringify(state)
  });
}

/**
 * The URL on this server that shows `path` of a source's dashboard through the proxy (see
 * `joinProxyURL`).
 */
export function proxyURL(source: string, path: string, pane?: string): string {
  return joinProxyURL(
    ServerConnection.makeSettings().baseUrl,
    source,
    path,
    pane
  );
}

export function listClusters(): Promise<IClusterListing> {
  return requestAPI<IClusterListing>('clusters');
}

export function startCluster(request: IClusterRequest = {}): Promise<ICluster> {
  return requestAPI<ICluster>('clusters', {
    method: 'POST',
    body: JSON.stringify(request)
  });
}

/** The fields of the "New cluster" form of a provider. */
export async function clusterForm(
  provider: ClusterProvider
): Promise<IFormField[]> {
  const form = await requestAPI<{ fields: IFormField[] }>(
    `clusters/forms/${provider}`
  );
  return form.fields;
}

/** Scale or adapt; `warning` says what a gateway did instead of what was asked (its limit). */
export function changeCluster(
  id: string,
  change: { workers: number } | { adapt: { minimum: number; maximum: number } }
): Promise<{ id: string; warning?: string }> {
  return requestAPI<{ id: string; warning?: string }>(
    `clusters/${encodeURIComponent(id)}`,
    {
      method: 'PATCH',
      body: JSON.stringify(change)
    }
  );
}

export function restartCluster(id: string): Promise<ICluster> {
  return requestAPI<ICluster>(`clusters/${encodeURIComponent(id)}/restart`, {
    method: 'POST'
  });
}

export async function stopCluster(id: string): Promise<void> {
  await requestAPI<void>(`clusters/${encodeURIComponent(id)}`, {
    method: 'DELETE'
  });
}

export function summary(
  dashboard: string,
  kernel: string | null
): Promise<ISummary> {
  const query = new URLSearchParams({ dashboard });
  if (kernel) {
    query.set('kernel', kernel);
  }
  return requestAPI<ISummary>(`summary?${query.toString()}`);
}

/**
 * What a cell computed, as its kernel last reported (unchecked: the caller reads it).
 */
export function cellReport(
  kernel: string,
  cell: string
): Promise<{ label: string; report: unknown }> {
  return requestAPI(
    `kernels/${encodeURIComponent(kernel)}/cells/${encodeURIComponent(cell)}`
  );
}

/**
 * The recorded runs, in the server's order (oldest first).
 */
export async function listRuns(): Promise<IHistoryRun[]> {
  return (await listHistory()).runs;
}

/** The recorded runs, and why nothing more is recorded when something is wrong. */
export function listHistory(): Promise<{
  runs: IHistoryRun[];
  problem?: string | null;
}> {
  return requestAPI('history');
}

/** One run (by its id, or its source's id while recorded), and whether its source is recorded. */
export function getRun(id: string): Promise<IHistoryRunDetail> {
  return requestAPI<IHistoryRunDetail>(`history/${encodeURIComponent(id)}`);
}

/** Why a window of a run took as long as it did (the whole run when no window is given). */
export function getDiagnosis(
  id: string,
  window: IHistoryWindow = {}
): Promise<IDiagnosis> {
  const query = new URLSearchParams();
  for (const key of ['start', 'end'] as const) {
    const value = window[key];
    if (value !== undefined && Number.isFinite(value)) {
      query.set(key, String(value));
    }
  }
  const suffix = query.toString() ? `?${query}` : '';
  return requestAPI<IDiagnosis>(
    `history/${encodeURIComponent(id)}/diagnosis${suffix}`
  );
}

export async function deleteRun(id: string): Promise<void> {
  await requestAPI<void>(`history/${encodeURIComponent(id)}`, {
    method: 'DELETE'
  });
}

/** Turn the recording of one source on or off; resolves to whether it is recorded now. */
export async function setRecording(
  source: string,
  enabled: boolean
): Promise<boolean> {
  const answer = await requestAPI<{ recording: boolean }>(
    `history/${encodeURIComponent(source)}/recording`,
    { method: 'PUT', body: JSON.stringify({ enabled }) }
  );
  return answer.recording;
}

/**
 * The URL of something the server makes of a run: an export (`trace`, `tasks.parquet`,
 * `report`) or a page (`view/overview`, `view/task-stream`, ...), for a window when one is given.
 */
export function historyURL(
  id: string,
  what: string,
  window: IHistoryWindow = {},
  extra: Record<string, string> = {}
): string {
  const query = new URLSearchParams();
  for (const key of ['start', 'end'] as const) {
    const value = window[key];
    if (value !== undefined && Number.isFinite(value)) {
      query.set(key, String(value));
    }
  }
  for (const [key, value] of Object.entries(extra)) {
    query.set(key, value);
  }
  const url = URLExt.join(
    ServerConnection.makeSettings().baseUrl,
    'dashdock/api/history',
    encodeURIComponent(id),
    what
  );
  const search = query.toString();
  return search ? `${url}?${search}` : url;
}
