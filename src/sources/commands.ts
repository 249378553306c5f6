/**
 * The `dashdock:add-source` command: from its arguments, or from a dialog that asks for the URL
 * (see model.ts for sources/).
 */

import { InputDialog, showErrorMessage } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';

import { DASHBOARD_URL_EXAMPLE } from '../api/urls';
import { CommandIDs, ISourcesModel } from '../tokens';

export function addSourceCommands(
  commands: CommandRegistry,
  model: ISourcesModel,
  trans: TranslationBundle
): void {
  commands.addCommand(CommandIDs.addSource, {
    label: trans.__('Add Dask Dashboard Source'),
    caption: trans.__('Add a Dask dashboard by URL so its plots can be docked'),
    describedBy: {
      args: {
        type: 'object',
        properties: {
          url: {
            type: 'string',
            description: trans.__(
              'Dashboard URL, e.g. %1',
              DASHBOARD_URL_EXAMPLE
            )
          },
          name: {
            type: 'string',
            description: trans.__('Name shown in the sidebar')
          }
        }
      }
    },
    execute: async args => {
      let url = args.url as string | undefined;
      if (!url) {
        const answer = await InputDialog.getText({
          title: trans.__('Add Dask Dashboard'),
          label: trans.__('Dashboard URL'),
          placeholder: DASHBOARD_URL_EXAMPLE
        });
        if (!answer.button.accept || !answer.value) {
          return null;
        }
        url = answer.value;
      }
      try {
        return await model.add(url, args.name as string | undefined);
      } catch (error: any) {
        // From the dialog, the person who typed the URL reads why; a caller with arguments gets the error.
        if (!args.url) {
          void showErrorMessage(
            trans.__('Could not add the dashboard'),
            error.message ?? error
          );
          return null;
        }
        throw error;
      }
    }
  });
}
