/**
 * The public tokens, command ids and types of dashdock, for its own plugins and other extensions.
 */

import type { TranslationBundle } from '@jupyterlab/translation';
import { Token } from '@lumino/coreutils';
import { ISignal } from '@lumino/signaling';
import type { Widget } from '@lumino/widgets';

import type {
  IAlert,
  ICluster,
  IClusterLimits,
  IClusterListing,
  IClusterRequest,
  ICredentials,
  IPlot,
  ISource
} from './api/types';

export type {
  IAlert,
  ICluster,
  IClusterLimits,
  IPlot,
  ISource,
  IWorker
} from './api/types';

/**
 * The clusters this server manages, and what can be done with them.
 */
export interface IClustersModel {
  readonly clusters: readonly ICluster[];
  /** The server's limits on clusters, as last listed; null until the first listing. */
  readonly limits: IClusterLimits | null;
  /** Operations under way, by cluster id ('new' for a cluster being started). */
  readonly busy: ReadonlySet<string>;
  /** The last failure to start a cluster, for people; empty once an operation went well. */
  readonly error: string;
  /**
   * The last failure of an operation on a cluster, by cluster id, for people; an entry goes once
   * an operation on that cluster went well or `dismissError` is called.
   */
  readonly errors: ReadonlyMap<string, string>;
  /** Forget the failure shown for a cluster (the user changed what it was about). */
  dismissError(id: string): void;
  readonly changed: ISignal<IClustersModel, void>;
  /** The configured Dask Gateway and why listing its clusters failed, or null without one. */
  readonly gateway: IClusterListing['gateway'];
  refresh(): Promise<void>;
  /** Start a cluster: by default a local one of the configured size; else as `request` asks. */
  start(request?: IClusterRequest): Promise<ICluster | null>;
  scale(id: string, workers: number): Promise<void>;
  adapt(id: string, minimum: number, maximum: number): Promise<void>;
  /** A fresh cluster of the same size; its source and open panes follow it to its new dashboard. */
  restart(id: string): Promise<void>;
  stop(id: string): Promise<void>;
}

export const IClustersModel = new Token<IClustersModel>(
  'dashdock:IClustersModel',
  'The Dask clusters this Jupyter server manages, and how to start, resize and stop them.'
);

/**
 * Where a newly opened pane goes in the main area.
 */
export interface IPanePlacement {
  mode?:
    | 'split-right'
    | 'split-left'
    | 'split-top'
    | 'split-bottom'
    | 'tab-after'
    | 'tab-before';
  ref?: string;
}

/**
 * The sources this Lab knows and the one selected in the sidebar.
 */
export interface ISourcesModel {
  /** The sources that can be used; selection, panes and plots only ever see these. */
  readonly sources: readonly ISource[];
  /** Saved sources that cannot be used now, each with its reason in `disabled`. */
  readonly disabled: readonly ISource[];
  /** What people should know about the sources file (moved aside, a change not saved), not dismissed. */
  readonly warnings: readonly string[];
  readonly selected: ISource | null;
  /** When the next health check runs (ms since the epoch), 0 when none is planned. */
  readonly nextCheck: number;
  /** Emitted when the list of sources or the selection really changed. */
  readonly changed: ISignal<ISourcesModel, void>;
  refresh(): Promise<void>;
  /** Set how often sources are checked while all are up, and while one is down (seconds). */
  configure(intervals: { checkInterval: number; retryInterval: number }): void;
  /** Add a dashboard by URL; with `credentials` when it is behind authentication. */
  add(url: string, name?: string, credentials?: ICredentials): Promise<ISource>;
  /** Remove a user-added source, usable or disabled. */
  remove(id: string): Promise<void>;
  /** Stop showing a warning in this Lab. */
  dismissWarning(warning: string): void;
  select(id: string | null): void;
  plots(id: string): Promise<IPlot[]>;
}

export const ISourcesModel = new Token<ISourcesModel>(
  'dashdock:ISourcesModel',
  'The dashboard sources known to this JupyterLab, and the selected one.'
);

/**
 * The alerts this Lab has heard of (the server's, polled), and what each offers to do.
 */
export interface IAlertsModel {
  /** The alerts known, most recently updated first. */
  readonly alerts: readonly IAlert[];
  /** Emitted when the list changed. */
  readonly changed: ISignal<IAlertsModel, void>;
  /** What an alert offers, as its notification offers it: commands, labelled for people. */
  actions(alert: IAlert, trans: TranslationBundle): IAlertsModel.IAction[];
}

export namespace IAlertsModel {
  export interface IAction {
    id: string;
    label: string;
    caption: string;
    command: string;
    args: { [key: string]: string | number };
  }
}

export const IAlertsModel = new Token<IAlertsModel>(
  'dashdock:IAlertsModel',
  'The alerts of the Dask schedulers this Lab follows, and what each offers to do.'
);

/**
 * Opens plots as panes; used by the sidebar, drag and drop and other extensions.
 */
export interface IPlotPanes {
  /** Create a pane without placing it (for drag and drop, where the dock places it). */
  create(options: IPlotPanes.IOptions): Widget;
  /** Create a pane and add it to the main area. */
  open(options: IPlotPanes.IOptions, placement?: IPanePlacement): Widget;
  /**
   * Show the default layout of a source: its panes already open are brought to the front, the
   * others are opened (as a grid when none was open). Resolves to the layout's panes.
   */
  openLayout(source: string): Promise<Widget[]>;
  /**
   * Where a widget docks beside `ref` (in the main area): the split `mode` when both halves keep
   * the minimum pane size, else the other split when that one does, else as a tab after `ref`.
   */
  beside(ref: Widget, mode: 'split-right' | 'split-bottom'): IPanePlacement;
}

export namespace IPlotPanes {
  export interface IOptions {
    /** A source id, or a literal `host:port` proxy target (a worker's dashboard). */
    source: string;
    path: string;
    /** The source whose health the pane shows when `source` is a literal target. */
    follows?: string;
    name?: string;
    /** The source's name as last known, shown when the source is gone (a restored pane). */
    sourceName?: string;
    id?: string;
    /** Seconds between redraws: 0 (live), 1 or 5. */
    rate?: number;
  }
}

export const IPlotPanes = new Token<IPlotPanes>(
  'dashdock:IPlotPanes',
  'Opens the plots of a Dask dashboard as panes in the main area.'
);

/**
 * The dashdock sidebar: features (ours and other extensions') add their sections to it.
 */
export interface IDaskSidebar {
  /** Add a section; sections are ordered by rank, lowest first. */
  addSection(section: Widget, options: IDaskSidebar.ISectionOptions): void;
}

export namespace IDaskSidebar {
  export interface ISectionOptions {
    /** Where the section goes: lower ranks above (Sources 100, Plots 200, Workers 300,
     * Clusters 400, History 500). */
    rank: number;
    /** Its share of the sidebar's height; 0 starts it collapsed (and counts as 1 once opened). */
    weight: number;
    /** The least height (pixels) it keeps while open, when the sidebar has room (default 96). */
    least?: number;
  }
}

export const IDaskSidebar = new Token<IDaskSidebar>(
  'dashdock:IDaskSidebar',
  'The dashdock sidebar, to which features add their sections.'
);

/**
 * Command ids, stable for the palette and other extensions.
 */
export namespace CommandIDs {
  export const addSource = 'dashdock:add-source';
  export const openPlot = 'dashdock:open-plot';
  export const openLayout = 'dashdock:open-layout';
  /** The command Dask's own client repr offers ("Launch dashboard in JupyterLab"). */
  export const populateAndLaunch = 'dask:populate-and-launch-layout';
  export const launchCluster = 'dashdock:launch-cluster';
  /** The "New cluster" form: where (this server or the Dask Gateway), options and size. */
  export const newClusterForm = 'dashdock:new-cluster-form';
  export const insertClientCode = 'dashdock:insert-client-code';
  /** `{source or id, start?, end?}`: the History view of a recorded run. */
  export const openHistory = 'dashdock:open-history';
  /** `{run or source, page, start, end}`: a window of a recorded run as a pane. */
  export const openHistoryPane = 'dashdock:open-history-pane';
  /** `{id, start?, end?}`: download a run's Chrome trace (a window of it when given). */
  export const exportTrace = 'dashdock:export-trace';
  /** `{source?}`: the recent alerts, newest first (of one source when given). */
  export const openAlerts = 'dashdock:open-alerts';
}

/**
 * The translation domain of this extension.
 */
export const TRANSLATION_DOMAIN = 'dashdock';

/**
 * MIME types of the outputs dashdock's kernel integration displays in notebooks.
 */
export namespace MimeTypes {
  /** A Dask client or cluster (`dashdock.kernel.reprs`). */
  export const client = 'application/vnd.dashdock.client+json';
  /** A live plot under a cell (`dashdock.show`). */
  export const plot = 'application/vnd.dashdock.plot+json';
  /** What a cell computed with Dask (`dashdock.kernel.cells`). */
  export const cell = 'application/vnd.dashdock.cell+json';
}
