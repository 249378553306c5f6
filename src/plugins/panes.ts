/**
 * plugins/: one file per JupyterLab plugin; they only wire (tokens, commands, settings, the shell)
 * and may import everything of ours.
 */

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, IThemeManager } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { addPaneCommands } from '../panes/commands';
import { PaneManager } from '../panes/manager';
import { rateFromSetting } from '../panes/rates';
import {
  CommandIDs,
  IPlotPanes,
  ISourcesModel,
  TRANSLATION_DOMAIN
} from '../tokens';

/**
 * Plot panes: creating, tracking and restoring them, and the open-plot / open-layout commands.
 */
export const panesPlugin: JupyterFrontEndPlugin<IPlotPanes> = {
  id: 'dashdock:panes',
  description:
    'Opens the plots of Dask dashboards as panes and restores them after a reload.',
  autoStart: true,
  requires: [ISourcesModel],
  provides: IPlotPanes,
  optional: [
    ILayoutRestorer,
    ISettingRegistry,
    ICommandPalette,
    IThemeManager,
    ITranslator
  ],
  activate: (
    app: JupyterFrontEnd,
    model: ISourcesModel,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null,
    palette: ICommandPalette | null,
    themeManager: IThemeManager | null,
    translator: ITranslator | null
  ): IPlotPanes => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const panes = new PaneManager({
      shell: app.shell,
      model,
      trans,
      themeManager
    });

    addPaneCommands(app.commands, panes, model, trans);
    palette?.addItem({
      command: CommandIDs.openLayout,
      category: trans.__('Dask')
    });
    palette?.addItem({
      command: CommandIDs.openPlot,
      category: trans.__('Dask'),
      args: {}
    });

    void restorer?.restore(panes.tracker, {
      command: CommandIDs.openPlot,
      args: pane => ({
        source: pane.source,
        path: pane.path,
        ...(pane.follows ? { follows: pane.follows } : {}),
        name: pane.plotName,
        sourceName: pane.sourceName,
        id: pane.id,
        rate: pane.rate
      }),
      name: pane => pane.id
    });

    if (settingRegistry) {
      void Promise.all([settingRegistry.load(panesPlugin.id), app.restored])
        .then(([settings]) => {
          const apply = () =>
            panes.configure({
              layout: settings.get('layout').composite as string[],
              hiddenGrace: settings.get('hiddenGrace').composite as number,
              defaultRate: rateFromSetting(
                settings.get('defaultRate').composite as string
              ),
              followTheme: settings.get('followTheme').composite as boolean,
              minWidth: settings.get('minPaneWidth').composite as number,
              minHeight: settings.get('minPaneHeight').composite as number
            });
          apply();
          settings.changed.connect(apply);
        })
        .catch(error =>
          console.warn('dashdock: could not load settings', error)
        );
    }
    return panes;
  }
};
