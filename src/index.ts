import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { clustersPlugin } from './plugins/clusters';
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
  notebookPlugin
];
export default plugins;
