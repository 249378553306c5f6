/**
 * notebook/: what dashdock shows in notebooks: the live repr of Dask clients (clientrepr.ts) and
 * live plots under cells (inlineplot.ts), from outputs read by this file. May import api/, ui/
 * and tokens.ts; not the other feature directories.
 *
 * This file: the data of dashdock's notebook outputs, checked: outputs come from notebooks, which
 * may come from anyone, so nothing in them is used before it has the expected shape. Pure (no
 * imports), so node runs it.
 */

const DASHBOARD =
  /^https?:\/\/([A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]):(\d{1,5})$/;
const PLOT_PATH = /^\/individual-[a-z0-9-]{1,80}$/;
const KERNEL_ID = /^[A-Za-z0-9-]{1,64}$/;

export interface IClientData {
  kind: 'client' | 'cluster';
  /** The cluster's class name, e.g. LocalCluster; '' when the output names none (the view names it). */
  title: string;
  name: string;
  kernelId: string | null;
  scheduler: string;
  /** The dashboard's own address, http://host:port. */
  dashboard: string;
  /** `host:port`, a proxy target. */
  target: string;
  /** Dask's link (through dashdock's proxy when the kernel was started by this server). */
  dashboardLink: string;
  workers: number | null;
  threads: number | null;
  memory: number | null;
}

export interface IPlotData {
  dashboard: string;
  target: string;
  path: string;
  title: string;
  height: number;
  kernelId: string | null;
}

export function readClientData(value: unknown): IClientData | null {
  const data = asObject(value);
  const dashboard = data && targetOf(data.dashboard);
  if (!data || !dashboard) {
    return null;
  }
  const link = text(data.dashboard_link);
  return {
    kind: data.kind === 'cluster' ? 'cluster' : 'client',
    title: text(data.title),
    name: text(data.name),
    kernelId: kernelId(data.kernel_id),
    scheduler: text(data.scheduler),
    dashboard: dashboard.url,
    target: dashboard.target,
    // Only a path on this page's server (not `//host`, which leaves it) or a plain http(s) URL;
    // never `javascript:` and the like.
    dashboardLink: /^(\/(?![/\\])|https?:\/\/)/.test(link)
      ? link
      : `${dashboard.url}/status`,
    workers: count(data.workers),
    threads: count(data.threads),
    memory: count(data.memory)
  };
}

export function readPlotData(value: unknown): IPlotData | null {
  const data = asObject(value);
  const dashboard = data && targetOf(data.dashboard);
  const path = data && text(data.path);
  if (!data || !dashboard || !path || !PLOT_PATH.test(path)) {
    return null;
  }
  const height = count(data.height);
  return {
    dashboard: dashboard.url,
    target: dashboard.target,
    path,
    title: text(data.title) || path,
    height: height !== null ? Math.min(Math.max(height, 120), 2000) : 320,
    kernelId: kernelId(data.kernel_id)
  };
}

/**
 * The cluster's memory limit now: the scheduler's counts carry no limit, so the per-worker limit
 * of the repr's snapshot is scaled to the live number of workers (Dask's clusters give their
 * workers equal limits).
 */
export function memoryLimit(
  data: IClientData,
  workers: number | undefined
): number | null {
  if (!data.memory || !data.workers || workers === undefined) {
    return null;
  }
  return (data.memory / data.workers) * workers;
}

function targetOf(value: unknown): { url: string; target: string } | null {
  const url = text(value);
  const match = DASHBOARD.exec(url);
  const port = match ? Number(match[2]) : 0;
  if (!match || port < 1 || port > 65535) {
    return null;
  }
  return { url, target: `${match[1]}:${match[2]}` };
}

function asObject(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.slice(0, 500) : '';
}

/** A whole number of things (workers, threads, bytes, pixels), or null for anything else. */
function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
    ? value
    : null;
}

function kernelId(value: unknown): string | null {
  return typeof value === 'string' && KERNEL_ID.test(value) ? value : null;
}
