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

/** Where the Lab keeps which source the sidebar shows, so that a reload shows it again. */
const SELECTION_KEY = 'dashdock:sources:selected';

/**
 * The selected source is restored from the Lab's state database, then saved whenever it changes.
 * Saving starts only once the saved one is read: the first listing selects the first source, which
 * must not overwrite the choice being restored.
 */
function rememberSelection(model: SourcesModel, state: IStateDB): void {
  let saved: string | null = null;
  void state
    .fetch(SELECTION_KEY)
    .then(value => {
      if (typeof value === 'string') {
        model.prefer(value);
      }
    })
    .catch(error =>
      console.warn('dashdock: could not read the selection', error)
    )
    .then(() => {
      model.changed.connect(() => {
        const id = model.selected?.id ?? null;
        if (id !== null && id !== saved) {
          saved = id;
          void state.save(SELECTION_KEY, id);
        }
      });
    });
}
