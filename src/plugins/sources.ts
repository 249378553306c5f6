import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  InputDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { DASHBOARD_URL_EXAMPLE } from '../api/urls';
import { SourcesModel } from '../sources/model';
import { CommandIDs, ISourcesModel, TRANSLATION_DOMAIN } from '../tokens';

/**
 * The sources model and the `dashdock:add-source` command.
 */
export const sourcesPlugin: JupyterFrontEndPlugin<ISourcesModel> = {
  id: 'dashdock:sources',
  description: 'Keeps the list of Dask dashboard sources and adds new ones.',
  autoStart: true,
  provides: ISourcesModel,
  optional: [ICommandPalette, ISettingRegistry, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null
  ): ISourcesModel => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const model = new SourcesModel();

    app.commands.addCommand(CommandIDs.addSource, {
      label: trans.__('Add Dask Dashboard Source'),
      caption: trans.__(
        'Add a Dask dashboard by URL so its plots can be docked'
      ),
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
    palette?.addItem({
      command: CommandIDs.addSource,
      category: trans.__('Dask')
    });

    // Not awaited: activation must not wait on the network.
    void app.restored
      .then(() => model.refresh())
      .catch(error => console.warn('dashdock:', error));
    if (settingRegistry) {
      void Promise.all([settingRegistry.load(sourcesPlugin.id), app.restored])
        .then(([settings]) => {
          const apply = () =>
            model.configure({
              checkInterval: settings.get('checkInterval').composite as number,
              retryInterval: settings.get('retryInterval').composite as number
            });
          apply();
          settings.changed.connect(apply);
        })
        .catch(error =>
          console.warn('dashdock: could not load settings', error)
        );
    }
    return model;
  }
};
