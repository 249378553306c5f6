/**
 * BokehJS for framed dashboard pages (see panes.ts for plugins/).
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';

import { BokehJSProvider } from '../ui/bokehjs';

/**
 * Hands BokehJS, fetched once in the Lab's origin, to every dashboard page the Lab frames: panes,
 * inline plots, cell strips. Its own plugin: every frame needs it, whichever plugin made it.
 */
export const bokehjsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'dashdock:bokehjs',
  description:
    'Gives framed Dask dashboard pages BokehJS from the browser cache of the Lab.',
  autoStart: true,
  activate: (app: JupyterFrontEnd): void => {
    new BokehJSProvider(app.serviceManager.serverSettings);
  }
};
