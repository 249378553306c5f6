import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { panesPlugin } from './plugins/panes';
import { sidebarPlugin } from './plugins/sidebar';
import { sourcesPlugin } from './plugins/sources';

export * from './tokens';

const plugins: JupyterFrontEndPlugin<any>[] = [sourcesPlugin, panesPlugin, sidebarPlugin];
export default plugins;
