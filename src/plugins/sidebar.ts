import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { Panel } from '@lumino/widgets';

import { dashdockIcon } from '../icons';
import { IClustersModel, IPlotPanes, ISourcesModel, TRANSLATION_DOMAIN } from '../tokens';
import { ClustersView } from '../widgets/clusters';
import { DashdockSidebar } from '../widgets/sidebar';

/**
 * The dashdock panel in the left sidebar.
 */
export const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: 'dashdock:sidebar',
  description: 'Lists Dask dashboard sources and their plots in the left sidebar.',
  autoStart: true,
  requires: [ISourcesModel, IPlotPanes],
  optional: [IClustersModel, ILayoutRestorer, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    model: ISourcesModel,
    panes: IPlotPanes,
    clusters: IClustersModel | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const sidebar = new Panel();
    sidebar.addClass('jp-dashdock-SidePanel');
    sidebar.addWidget(new DashdockSidebar({ model, panes, commands: app.commands, trans }));
    if (clusters) {
      sidebar.addWidget(new ClustersView({ model: clusters, commands: app.commands, trans }));
    }
    sidebar.id = 'dashdock-sidebar';
    sidebar.title.icon = dashdockIcon;
    sidebar.title.caption = trans.__('Dask dashboards');
    app.shell.add(sidebar, 'left', { rank: 200 });
    restorer?.add(sidebar, sidebar.id);
  }
};
