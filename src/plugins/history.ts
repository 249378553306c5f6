/**
 * History: views of recorded runs and their window panes (see panes.ts for plugins/).
 */

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, IThemeManager } from '@jupyterlab/apputils';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { addHistoryCommands, OPEN_HISTORY_PANE } from '../history/commands';
import { HistoryManager } from '../history/manager';
import { CommandIDs, IPlotPanes, TRANSLATION_DOMAIN } from '../tokens';

/**
 * The History view of a run, its window panes, their restoring, and the export command.
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
    IPlotPanes
  ],
  activate: (
    app: JupyterFrontEnd,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    themeManager: IThemeManager | null,
    translator: ITranslator | null,
    panes: IPlotPanes | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const manager = new HistoryManager({
      shell: app.shell,
      trans,
      themeManager,
      panes
    });
    addHistoryCommands(app.commands, manager, trans);
    palette?.addItem({
      command: CommandIDs.openHistory,
      category: trans.__('Dask')
    });

    void restorer?.restore(manager.views, {
      command: CommandIDs.openHistory,
      args: view => ({
        id: view.run,
        runName: view.runName,
        viewId: view.id,
        ...(view.window ?? {})
      }),
      name: view => view.id
    });
    void restorer?.restore(manager.panes, {
      command: OPEN_HISTORY_PANE,
      args: pane => ({
        run: pane.run,
        runName: pane.runName,
        page: pane.page,
        start: pane.window.start,
        end: pane.window.end,
        id: pane.id
      }),
      name: pane => pane.id
    });
  }
};
