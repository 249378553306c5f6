import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IStateDB } from '@jupyterlab/statedb';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { addSourceCommands } from '../sources/commands';
import { SourcesModel } from '../sources/model';
import { rememberSelection } from '../sources/selection';
import { CommandIDs, ISourcesModel, TRANSLATION_DOMAIN } from '../tokens';

/**
 * The sources model and the `dashdock:add-source` command.
 */
export const sourcesPlugin: JupyterFrontEndPlugin<ISourcesModel> = {
  id: 'dashdock:sources',
  description: 'Keeps the list of Dask dashboard sources and adds new ones.',
  autoStart: true,
  provides: ISourcesModel,
  optional: [ICommandPalette, ISettingRegistry, ITranslator, IStateDB],
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    state: IStateDB | null
  ): ISourcesModel => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const model = new SourcesModel();

    addSourceCommands(app.commands, model, trans);
    palette?.addItem({
      command: CommandIDs.addSource,
      category: trans.__('Dask')
    });

    if (state) {
      rememberSelection(model, state);
    }
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
