/**
 * api/: how the frontend talks to dashdock's server and what every Dask dashboard offers.
 *
 * Owns the REST client (client.ts), the shapes it exchanges (this file), proxy URLs and dashboard
 * links (urls.ts) and the dashboards' well-known plots (plots.ts). Imports nothing of ours except
 * its own files; only client.ts has runtime imports from JupyterLab, so the others run in node.
 *
 * This file: the JSON the REST API exchanges. `tokens.ts` re-exports the public ones.
 */

/**
 * A dashboard the server knows, as the REST API describes it.
 */
export interface ISource {
  id: string;
  name: string;
  kind: string;
  url: string;
  health: {
    status: 'up' | 'down' | 'unknown';
    message: string;
    checked: number;
  };
  /** How often an open plot lost its connection to this dashboard (a scheduler restart, a crash). */
  lost: number;
  /**
   * Why this saved source cannot be used now (its host is no longer allowed, its entry is not
   * readable). It stays saved, can be removed, and the proxy does not reach it.
   */
  disabled?: string;
  /** The last change to this source was not saved (it would be gone after a server restart). */
  warning?: string;
  /** Whether its alerts notify (muted: still recorded and listed). Missing on disabled sources. */
  alerts?: boolean;
  /** A Dask dashboard, or a Bokeh server whose plots are its apps. Missing on disabled sources. */
  flavour?: 'dask' | 'bokeh';
  /** The kind and name of the credentials the server holds for it (never their value), or null. */
  credentials?: { kind: ICredentials['kind']; name: string } | null;
  /** Its dashboard's last answer was 401 or 403: it wants credentials (or other ones). */
  needsCredentials?: boolean;
  /** Why the history cannot record it (a Bokeh server, a TLS scheduler, a host not allowed). */
  unrecorded?: string | null;
  /** How many of its workers report GPU metrics (Dask's NVML metrics); null while not known. */
  gpus?: number | null;
  /** Its plots (paths) that dashdock draws from its recording instead of its dashboard. */
  drawnPlots?: string[];
}

/**
 * What a dashboard behind authentication wants with every request: sent once to the server, which
 * keeps it and adds it upstream.
 */
export interface ICredentials {
  kind: 'header' | 'query' | 'cookie';
  name: string;
  value: string;
}

/**
 * A cluster this server manages, as the REST API describes it.
 */
export interface ICluster {
  id: string;
  name: string;
  /** Who runs it: this Jupyter server (`local`) or the user's Dask Gateway. */
  provider: ClusterProvider;
  status: 'starting' | 'running' | 'closing' | 'stopped';
  scheduler: string | null;
  dashboard: string | null;
  /** Its size as its scheduler reports it; null when the server cannot see it (yet). */
  workers: number | null;
  /** The workers asked for (scale and adapt set it at once, the workers join later); null or
   * absent when the cluster does not say (a gateway's). */
  requested?: number | null;
  threads: number | null;
  memory: number | null;
  adapt: { minimum: number; maximum: number } | null;
  /** Tasks its scheduler has not finished, as last asked; null when it cannot tell. */
  tasks: number | null;
  /** Results its workers hold in memory, as last asked, which shutting down loses; null or
   * absent when it cannot tell. */
  held?: number | null;
  /** The source id of its dashboard, once running. */
  source: string | null;
}

/** Who runs a cluster: this Jupyter server, or the user's Dask Gateway. */
export type ClusterProvider = 'local' | 'gateway';

/**
 * One field of the "New cluster" form, as the server describes it (a gateway's cluster options,
 * or the keyword arguments of the local cluster class).
 */
export interface IFormField {
  name: string;
  label: string;
  type: 'int' | 'float' | 'string' | 'bool' | 'select' | 'mapping';
  default: unknown;
  min?: number;
  max?: number;
  options?: string[];
}

/**
 * What "New cluster" asks the server for.
 */
export interface IClusterRequest {
  provider?: ClusterProvider;
  name?: string;
  workers?: number;
  adapt?: { minimum: number; maximum: number };
  /** The form's values, by field name. */
  options?: Record<string, unknown>;
}

/**
 * How many workers one managed cluster may have (its adaptive maximum included) and how many
 * clusters may run at once; the server refuses a request beyond either, saying which.
 */
export interface IClusterLimits {
  max_workers: number;
  max_clusters: number;
}

/**
 * One plot a dashboard offers.
 */
export interface IPlot {
  name: string;
  group: string;
  path: string;
  /** What the plot shows, in one sentence (the server's catalog writes it). */
  description: string;
  url: string;
}

/**
 * A worker of a source, as the REST API lists it, with the pages of its own dashboard.
 */
export interface IWorker {
  address: string;
  name: string;
  threads: number | null;
  memory_limit: number | null;
  /** `host:port` of the worker's dashboard, when it runs one. */
  dashboard: string | null;
  /** Whether the proxy may reach that dashboard; `reason` says why not. */
  reachable: boolean;
  reason: string;
  pages: { name: string; path: string; url: string }[];
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
 * What `GET clusters` answers: the clusters, and the limits every request is held to.
 */
export interface IClusterListing {
  clusters: ICluster[];
  limits: IClusterLimits;
  /** The configured Dask Gateway and why listing its clusters failed (''), or null without one. */
  gateway: { address: string | null; error: string } | null;
}

/**
 * What the relays of one pane do: paused (nothing reaches it) and seconds between deliveries.
 */
export interface IPaneState {
  paused: boolean;
  interval: number;
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

/**
 * One recorded run of a source, as `GET history` lists it (times in Unix seconds).
 */
export interface IHistoryRun {
  /** The run's id; for a run being recorded now, its source's id. */
  id: string;
  source: string;
  name: string;
  start: number;
  /** When recording stopped; null while it goes on. */
  end: number | null;
  tasks: number;
  /** Tasks the recorder could not read (the scheduler's buffer overflowed between two reads). */
  missed: number;
  /** Whether it is being recorded now. */
  live: boolean;
  /** On a source's newest run: what went wrong recording the source, in one line (absent when nothing did). */
  problem?: string | null;
}

/**
 * One run as `GET history/{id}` describes it: whether its source is being recorded now, too.
 */
export interface IHistoryRunDetail extends IHistoryRun {
  recording: boolean;
}

/**
 * What alerts are about, in the order settings list them.
 */
export const ALERT_KINDS = [
  'worker-lost',
  'worker-paused',
  'spilling',
  'task-erred',
  'scheduler-lost',
  'scheduler-back',
  'computation-done'
] as const;

export type AlertKind = (typeof ALERT_KINDS)[number];

/**
 * Something the recorder noticed, as `GET alerts` lists it; happening again updates it in place
 * (the same id, `updated` and `count` grow). Times in Unix seconds.
 */
export interface IAlert {
  id: string;
  source: string;
  kind: AlertKind;
  time: number;
  updated: number;
  title: string;
  /** What its actions need: `worker`, `group`, `key`, `exception`, `start`/`end`, ... */
  detail: { [key: string]: unknown };
  count: number;
  /** False for a muted source or a kind left out of the settings: listed, not notified. */
  notified: boolean;
}

/**
 * The alert settings the server needs (Lab's settings are where people change them).
 */
export interface IAlertSettings {
  kinds: AlertKind[];
  computationSeconds: number;
}

/**
 * A time window of a run, in Unix seconds; both ends left out means the whole run.
 */
export interface IHistoryWindow {
  start?: number;
  end?: number;
}

/**
 * One cause of a window's time (`GET history/{id}/diagnosis`): what it cost in thread-seconds,
 * its share of the window's thread time, and where it showed.
 */
export interface IFinding {
  kind: string;
  title: string;
  detail: string;
  lost_seconds: number;
  share: number;
  evidence: Record<string, unknown>;
  start: number;
  end: number;
  advice: string;
  docs: string;
}

export interface IDiagnosis {
  findings: IFinding[];
  tasks: number;
  truncated: boolean;
  threads: number;
  /** The end of the last recorded task in the window, null when none. */
  recorded_until: number | null;
  start: number;
  end: number;
}
