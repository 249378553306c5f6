import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IConsoleTracker } from '@jupyterlab/console';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import type { ClusterProvider } from '../api/types';
import { clientCode, insertCode } from '../clusters/code';
import { askNewCluster } from '../clusters/form';
import { ClustersModel } from '../clusters/model';
import {
  CommandIDs,
  IClustersModel,
  ISourcesModel,
  TRANSLATION_DOMAIN
} from '../tokens';

/**
 * Managed clusters: the model behind the sidebar's Clusters section, and its commands.
 */
export const clustersPlugin: JupyterFrontEndPlugin<IClustersModel> = {
  id: 'dashdock:clusters',
  description:
    'Starts, scales and stops Dask clusters managed by the Jupyter server.',
  autoStart: true,
  requires: [ISourcesModel],
  provides: IClustersModel,
  optional: [INotebookTracker, IConsoleTracker, ICommandPalette, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    sources: ISourcesModel,
    notebooks: INotebookTracker | null,
    consoles: IConsoleTracker | null,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ): IClustersModel => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const model = new ClustersModel({
      // A new cluster is a new source: list it and show its plots right away. A gateway cluster
      // has none until it runs; the user's selection stays as it is.
      onStarted: cluster => {
        const source = cluster.source;
        if (source) {
          void sources
            .refresh()
            .then(() => sources.select(source))
            .catch(() => undefined);
        }
      }
    });

    app.commands.addCommand(CommandIDs.launchCluster, {
      label: trans.__('Launch Dask Cluster'),
      caption: trans.__('Start a Dask cluster managed by this Jupyter server'),
      describedBy: { args: { type: 'object', properties: {} } },
      execute: () => model.start()
    });

    app.commands.addCommand(CommandIDs.newClusterForm, {
      label: trans.__('New Dask Cluster…'),
      caption: trans.__(
        'Choose where a new Dask cluster runs (this server or the Dask Gateway), its options and size'
      ),
      describedBy: { args: { type: 'object', properties: {} } },
      execute: async () => {
        if (model.limits === null) {
          // Not listed yet: whether a gateway is configured comes with the first listing.
          await model.refresh().catch(() => undefined);
        }
        const providers: ClusterProvider[] = model.gateway
          ? ['local', 'gateway']
          : ['local'];
        // A refused request comes back in the form, with the server's reason, to be corrected.
        let request = await askNewCluster(providers, trans);
        while (request) {
          const cluster = await model.start(request);
          if (cluster || !model.error) {
            return cluster;
          }
          request = await askNewCluster(providers, trans, {
            request,
            why: model.error
          });
        }
        return null;
      }
    });

    app.commands.addCommand(CommandIDs.insertClientCode, {
      label: trans.__('Insert Dask Client Code'),
      caption: trans.__(
        'Insert the code that connects to a managed cluster into the active notebook or console'
      ),
      describedBy: {
        args: {
          type: 'object',
          required: ['cluster'],
          properties: { cluster: { type: 'string' } }
        }
      },
      execute: args => {
        const cluster = model.clusters.find(c => c.id === args.cluster);
        if (cluster) {
          insertCode(clientCode(cluster), {
            shell: app.shell,
            notebooks,
            consoles
          });
        }
      }
    });

    for (const command of [
      CommandIDs.launchCluster,
      CommandIDs.newClusterForm
    ]) {
      palette?.addItem({ command, category: trans.__('Dask') });
    }
    return model;
  }
};
