/**
 * Managed clusters: the model, its commands and the sidebar's Clusters section (see panes.ts for
 * plugins/).
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IConsoleTracker } from '@jupyterlab/console';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { addClusterCommands } from '../clusters/commands';
import { ClustersModel } from '../clusters/model';
import { ClustersSection } from '../clusters/view';
import {
  CommandIDs,
  IClustersModel,
  IDaskSidebar,
  ISourcesModel,
  TRANSLATION_DOMAIN
} from '../tokens';

export const clustersPlugin: JupyterFrontEndPlugin<IClustersModel> = {
  id: 'dashdock:clusters',
  description:
    'Starts, scales and stops Dask clusters managed by the Jupyter server.',
  autoStart: true,
  requires: [ISourcesModel],
  provides: IClustersModel,
  optional: [
    INotebookTracker,
    IConsoleTracker,
    ICommandPalette,
    ITranslator,
    IDaskSidebar
  ],
  activate: (
    app: JupyterFrontEnd,
    sources: ISourcesModel,
    notebooks: INotebookTracker | null,
    consoles: IConsoleTracker | null,
    palette: ICommandPalette | null,
    translator: ITranslator | null,
    sidebar: IDaskSidebar | null
  ): IClustersModel => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    // A new cluster is a new source: list it and show its plots right away. A gateway cluster
    // has none until it runs; the user's selection stays as it is.
    const model = new ClustersModel({
      onStarted: ({ source }) => {
        if (source) {
          void sources
            .refresh()
            .then(() => sources.select(source))
            .catch(() => undefined);
        }
      }
    });
    const { commands, shell } = app;
    addClusterCommands(commands, model, { shell, notebooks, consoles, trans });
    for (const command of [
      CommandIDs.launchCluster,
      CommandIDs.newClusterForm
    ]) {
      palette?.addItem({ command, category: trans.__('Dask') });
    }
    // A cluster's card with its controls gets room, after the plots.
    sidebar?.addSection(new ClustersSection({ model, commands, trans }), {
      rank: 400,
      weight: 1.6
    });
    return model;
  }
};
