/**
 * dashdock's frontend. Each directory owns one concern; its main module's header says what it
 * owns and what it may import:
 *
 * - api/       the server's REST API, proxy URLs, what every Dask dashboard offers; imports nothing of ours
 * - ui/        DOM and widget helpers every view shares; imports nothing of ours (never api/)
 * - sources/   dashboards this Lab knows, and the sidebar's Sources, Plots and Workers sections
 * - clusters/  clusters the server manages, and the sidebar's Clusters section
 * - panes/     plots docked in the main area
 * - notebook/  what dashdock shows in notebooks
 * - history/   recorded runs: the sidebar's History section, History views and window panes
 * - alerts/    what the recorder noticed: notifications, the alerts panel
 * - plugins/   JupyterLab plugins: they only wire the above
 *
 * Feature directories (sources, clusters, panes, notebook, history, alerts) import api/, ui/ and tokens.ts, never
 * each other: what they share goes through the public tokens.
 */

import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { alertsPlugin } from './plugins/alerts';
import { bokehjsPlugin } from './plugins/bokehjs';
import { clustersPlugin } from './plugins/clusters';
import { dashboardsPlugin } from './plugins/dashboards';
import { historyPlugin } from './plugins/history';
import { notebookPlugin } from './plugins/notebook';
import { panesPlugin } from './plugins/panes';
import { sidebarPlugin } from './plugins/sidebar';
import { sourcesPlugin } from './plugins/sources';

export * from './tokens';

const plugins: JupyterFrontEndPlugin<any>[] = [
  sourcesPlugin,
  panesPlugin,
  clustersPlugin,
  sidebarPlugin,
  dashboardsPlugin,
  notebookPlugin,
  historyPlugin,
  alertsPlugin,
  bokehjsPlugin
];
export default plugins;
