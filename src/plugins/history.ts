/**
 * History: the sidebar's section, run views and their window panes (see panes.ts for plugins/).
 */

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, IThemeManager } from '@jupyterlab/apputils';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { addHistoryCommands, restoreHistory } from '../history/commands';
import { HistoryManager } from '../history/manager';
import { HistorySection } from '../history/section';
import {
  CommandIDs,
  IDaskSidebar,
  IPlotPanes,
  ISourcesModel,
  TRANSLATION_DOMAIN
} from '../tokens';
import { mainAreaOf } from '../ui/mainarea';

/**
 * The History view of a run, its window panes, their restoring, the export command and the
 * sidebar's History section.
 */
export const historyPlugin: JupyterFrontEndPlugin<void> = {
  id: 'dashdock:history',
  description:
    'Shows recorded Dask runs: an overview, the panes of a chosen window, and exports.',
  autoStart: true,
  optional: [
    ILayoutRestorer,
    ICommandPalette,
    IThemeManager,
    ITranslator,
    IPlotPanes,
    IDaskSidebar,
    ISourcesModel
  ],
  activate: (
    app: JupyterFrontEnd,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    themeManager: IThemeManager | null,
    translator: ITranslator | null,
    panes: IPlotPanes | null,
    sidebar: IDaskSidebar | null,
    sources: ISourcesModel | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const manager = new HistoryManager({
      shell: mainAreaOf(app, trans),
      trans,
      themeManager,
      panes
    });
    addHistoryCommands(app.commands, manager, trans);
    palette?.addItem({
      command: CommandIDs.openHistory,
      category: trans.__('Dask')
    });

    if (restorer) {
      restoreHistory(restorer, manager);
    }
    if (sidebar && sources) {
      const options = { model: sources, commands: app.commands, trans };
      // Room for three runs under its recording switches once opened (about 44 px a row).
      sidebar.addSection(new HistorySection(options), {
        rank: 500,
        weight: 0,
        least: 200
      });
    }
  }
};
