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

import { addPaneCommands, restorePanes } from '../panes/commands';
import { followPaneSettings, PaneManager } from '../panes/manager';
import {
  CommandIDs,
  IPlotPanes,
  ISourcesModel,
  TRANSLATION_DOMAIN
} from '../tokens';
import { mainAreaOf } from '../ui/mainarea';

/** Plot panes: creating, tracking and restoring them, and the open-plot / open-layout commands. */
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
      shell: mainAreaOf(app, trans),
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
    if (restorer) {
      restorePanes(restorer, panes);
    }
    if (settingRegistry) {
      void Promise.all([settingRegistry.load(panesPlugin.id), app.restored])
        .then(([settings]) => followPaneSettings(settings, panes))
        .catch(error =>
          console.warn('dashdock: could not load settings', error)
        );
    }
    return panes;
  }
};
