import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { dashdockIcon } from '../icons';
import { IPlotPanes, ISourcesModel, TRANSLATION_DOMAIN } from '../tokens';
import { DashdockSidebar } from '../widgets/sidebar';

/**
 * The dashdock panel in the left sidebar.
 */
export const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: 'dashdock:sidebar',
  description: 'Lists Dask dashboard sources and their plots in the left sidebar.',
  autoStart: true,
  requires: [ISourcesModel, IPlotPanes],
  optional: [ILayoutRestorer, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    model: ISourcesModel,
    panes: IPlotPanes,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const sidebar = new DashdockSidebar({ model, panes, commands: app.commands, trans });
    sidebar.id = 'dashdock-sidebar';
    sidebar.title.icon = dashdockIcon;
    sidebar.title.caption = trans.__('Dask dashboards');
    app.shell.add(sidebar, 'left', { rank: 200 });
    restorer?.add(sidebar, sidebar.id);
  }
};
