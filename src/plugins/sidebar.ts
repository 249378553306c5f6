/**
 * The dashdock sidebar: Lab's SidePanel to which features add their sections (see panes.ts for
 * plugins/).
 */

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin,
  LabShell
} from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { SidePanel, ToolbarButton } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { AlertsEntry } from '../alerts/entry';
import { IAlertsModel, IDaskSidebar, TRANSLATION_DOMAIN } from '../tokens';
import { dashdockIcon } from '../ui/icons';
import { SharedSections } from '../ui/sections';

/**
 * The left sidebar: its header (with the alerts entry) and the registry of its sections.
 */
export const sidebarPlugin: JupyterFrontEndPlugin<IDaskSidebar> = {
  id: 'dashdock:sidebar',
  description:
    'The left sidebar of Dask dashboards, to which dashdock features add their sections.',
  autoStart: true,
  provides: IDaskSidebar,
  optional: [ILayoutRestorer, ITranslator, IAlertsModel, INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null,
    alerts: IAlertsModel | null,
    notebooks: INotebookTracker | null
  ): IDaskSidebar => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const sidebar = new SidePanel({ translator: translator ?? nullTranslator });
    sidebar.id = 'dashdock-sidebar';
    sidebar.addClass('jp-dashdock-Sidebar');
    sidebar.title.icon = dashdockIcon;
    sidebar.title.caption = trans.__('Dask dashboards');
    const heading = new Widget({ node: document.createElement('h2') });
    heading.addClass('jp-dashdock-Sidebar-header');
    heading.node.textContent = trans.__('Dask dashboards');
    sidebar.header.addWidget(heading);
    if (alerts) {
      sidebar.header.addWidget(
        new AlertsEntry({ model: alerts, commands: app.commands, trans })
      );
    }
    const sections = new SharedSections(sidebar, app.started, app.restored);

    app.shell.add(sidebar, 'left', { rank: 200 });
    restorer?.add(sidebar, sidebar.id);
    // Notebook 7 keeps its side panels closed, reachable only from the View menu: each notebook's
    // toolbar gets a button that shows the sidebar, where its users look.
    if (!(app.shell instanceof LabShell)) {
      notebooks?.widgetAdded.connect((_, panel) => {
        const button = new ToolbarButton({
          icon: dashdockIcon,
          label: trans.__('Dask'),
          tooltip: trans.__('Show the Dask dashboards sidebar'),
          onClick: () => app.shell.activateById(sidebar.id)
        });
        button.addClass('jp-dashdock-ShowSidebar');
        panel.toolbar.insertItem(10, 'dashdock-sidebar', button);
      });
    }
    return {
      addSection: (section, options) => sections.add(section, options)
    };
  }
};
