import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { IPlot, ISource } from './tokens';

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

export async function listSources(): Promise<ISource[]> {
  return (await requestAPI<{ sources: ISource[] }>('sources')).sources;
}

export function addSource(url: string, name?: string): Promise<ISource> {
  return requestAPI<ISource>('sources', {
    method: 'POST',
    body: JSON.stringify(name ? { url, name } : { url })
  });
}

export async function removeSource(id: string): Promise<void> {
  await requestAPI<void>(`sources/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

export async function listPlots(id: string): Promise<IPlot[]> {
  return (await requestAPI<{ plots: IPlot[] }>(`sources/${encodeURIComponent(id)}/plots`)).plots;
}

/**
 * The URL on this server that shows `path` of a source's dashboard through the proxy.
 */
export function proxyURL(source: string, path: string): string {
  const baseUrl = ServerConnection.makeSettings().baseUrl;
  return URLExt.join(baseUrl, 'dashdock/proxy', encodeURIComponent(source)) + path;
}
