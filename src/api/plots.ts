/**
 * What every Dask dashboard offers: pure data and functions (no runtime imports), so node runs them.
 */

import type { TranslationBundle } from '@jupyterlab/translation';

/**
 * The plots people look at first: the default layout docks them as a grid and a client's repr
 * offers them as chips.
 *
 * #### Notes
 * The `layout` setting's default in schema/panes.json lists the same paths (JSON cannot import),
 * and each label is the name the server's catalog gives the plot (dashdock/sources/catalog.py), so
 * a plot has one name everywhere.
 */
export const KEY_PLOTS: readonly {
  path: string;
  label: (trans: TranslationBundle) => string;
}[] = [
  { path: '/individual-task-stream', label: trans => trans.__('Task Stream') },
  { path: '/individual-progress', label: trans => trans.__('Progress') },
  {
    path: '/individual-workers-memory',
    label: trans => trans.__('Workers Memory')
  },
  { path: '/individual-graph', label: trans => trans.__('Graph') }
];

/**
 * The height (pixels) below which a plot cannot be read, for plots that need more than the
 * smallest pane (the `minPaneHeight` setting): Progress draws a bar per task group and overprints
 * its labels, the Graph turns into a strip, Profile's flame graph and toolbar break. Measured on
 * Dask's pages at Lab's default font size.
 */
const PLOT_MIN_HEIGHTS: Readonly<Record<string, number>> = {
  '/individual-progress': 300,
  '/individual-graph': 340,
  '/individual-profile': 420,
  '/individual-profile-server': 420,
  '/individual-fine-performance-metrics': 420,
  '/individual-groups': 300,
  '/individual-workers': 260,
  '/individual-task-stream': 240
};

/** What a plot needs to be read (0: the smallest pane is enough). */
export function plotMinHeight(path: string): number {
  return PLOT_MIN_HEIGHTS[path.split('?')[0]] ?? 0;
}

/**
 * Plot groups in the order the sidebar shows them. The server assigns each plot its group
 * (dashdock/sources/catalog.py, GROUPS); a group it adds later shows under "other".
 */
export const PLOT_GROUPS: readonly string[] = [
  // A notebook's own metrics (dashdock.metric) lead: someone just made them to watch them.
  'custom',
  // The applications of a Bokeh server source (bokeh serve, panel serve, a kernel's published plots).
  'apps',
  'tasks',
  'memory',
  'workers',
  'gpu',
  'other'
];

/** '/individual-task-stream' -> 'Task Stream', for panes opened by path alone. */
export function nameFromPath(path: string): string {
  const last = path.split('/').filter(Boolean).pop() ?? path;
  return last
    .replace(/\.html$/, '')
    .replace(/^individual-/, '')
    .split('-')
    .map(word => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

/**
 * The name of a plot group as people read it, in the sidebar and in a client's repr.
 */
export function groupLabel(group: string, trans: TranslationBundle): string {
  switch (group) {
    case 'tasks':
      return trans.__('Tasks');
    case 'memory':
      return trans.__('Memory');
    case 'workers':
      return trans.__('Workers and system');
    case 'gpu':
      return trans.__('GPU');
    case 'custom':
      return trans.__('Custom');
    case 'apps':
      return trans.__('Apps');
    default:
      return trans.__('Other');
  }
}
