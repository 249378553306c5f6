/** Alerts: notifications of what the recorder noticed, their settings, the panel, the model. */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { addAlertCommands } from '../alerts/commands';
import { AlertsModel } from '../alerts/model';
import { AlertNotifier, followAlertSettings } from '../alerts/notifier';
import {
  CommandIDs,
  IAlertsModel,
  ISourcesModel,
  TRANSLATION_DOMAIN
} from '../tokens';
import { mainAreaOf } from '../ui/mainarea';

export const alertsPlugin: JupyterFrontEndPlugin<IAlertsModel> = {
  id: 'dashdock:alerts',
  description:
    'Notifies when a Dask cluster is in trouble (workers lost, paused or spilling, tasks erring, a scheduler gone) and when long work is done.',
  autoStart: true,
  provides: IAlertsModel,
  optional: [ISourcesModel, ISettingRegistry, ICommandPalette, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    sources: ISourcesModel | null,
    settingRegistry: ISettingRegistry | null,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ): IAlertsModel => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const sourceName = (id: string): string =>
      sources?.sources.find(source => source.id === id)?.name ?? id;
    const model = new AlertsModel();
    const notifier = new AlertNotifier({
      model,
      commands: app.commands,
      trans,
      sourceName
    });
    addAlertCommands({
      commands: app.commands,
      shell: mainAreaOf(app, trans),
      model,
      trans,
      sourceName
    });
    palette?.addItem({
      command: CommandIDs.openAlerts,
      category: trans.__('Dask')
    });
    if (settingRegistry) {
      void Promise.all([settingRegistry.load(alertsPlugin.id), app.restored])
        .then(([settings]) => followAlertSettings(settings, notifier))
        .catch(error =>
          console.warn('dashdock: could not load alert settings', error)
        );
    }
    return model;
  }
};
