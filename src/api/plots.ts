/**
 * What every Dask dashboard offers: pure data and functions (no runtime imports), so node runs them.
 */

import type { TranslationBundle } from '@jupyterlab/translation';

/**
 * The plots people look at first: the default layout docks them as a grid and a client's repr
 * offers them as chips.
 *
 * #### Notes
 * The `layout` setting's default in schema/panes.json lists the same paths (JSON cannot import).
 */
export const KEY_PLOTS: readonly {
  path: string;
  label: (trans: TranslationBundle) => string;
}[] = [
  { path: '/individual-task-stream', label: trans => trans.__('Task Stream') },
  { path: '/individual-progress', label: trans => trans.__('Progress') },
  {
    path: '/individual-workers-memory',
    label: trans => trans.__('Worker Memory')
  },
  { path: '/individual-graph', label: trans => trans.__('Graph') }
];

/**
 * Plot groups in the order the sidebar shows them. The server assigns each plot its group
 * (dashdock/sources/catalog.py, GROUPS); a group it adds later shows under "other".
 */
export const PLOT_GROUPS: readonly string[] = [
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
