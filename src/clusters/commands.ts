/**
 * `dashdock:launch-cluster`, `dashdock:new-cluster-form` and `dashdock:insert-client-code`
 * (see model.ts for clusters/).
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import { IConsoleTracker } from '@jupyterlab/console';
import { INotebookTracker } from '@jupyterlab/notebook';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';

import type { ClusterProvider } from '../api/types';
import { CommandIDs, IClustersModel } from '../tokens';
import { clientCode, insertCode } from './code';
import { askNewCluster } from './form';

/**
 * Add the clusters commands to `commands`.
 */
export function addClusterCommands(
  commands: CommandRegistry,
  model: IClustersModel,
  options: addClusterCommands.IOptions
): void {
  const { trans } = options;
  commands.addCommand(CommandIDs.launchCluster, {
    label: trans.__('Launch Dask Cluster'),
    caption: trans.__('Start a Dask cluster managed by this Jupyter server'),
    describedBy: { args: { type: 'object', properties: {} } },
    execute: () => model.start()
  });

  commands.addCommand(CommandIDs.newClusterForm, {
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

  commands.addCommand(CommandIDs.insertClientCode, {
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
          shell: options.shell,
          notebooks: options.notebooks,
          consoles: options.consoles
        });
      }
    }
  });
}

export namespace addClusterCommands {
  export interface IOptions {
    shell: JupyterFrontEnd.IShell;
    notebooks: INotebookTracker | null;
    consoles: IConsoleTracker | null;
    trans: TranslationBundle;
  }
}
