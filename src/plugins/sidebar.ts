/**
 * The dashdock sidebar: Lab's SidePanel with one section per concern (see panes.ts for plugins/).
 */

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { SidePanel } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { AlertsEntry } from '../alerts/entry';
import { ClustersSection } from '../clusters/view';
import { HistorySection } from '../history/section';
import { PlotsSection } from '../sources/plots';
import { SourcesSection } from '../sources/view';
import { WorkersSection } from '../sources/workers';
import {
  IAlertsModel,
  IClustersModel,
  IPlotPanes,
  ISourcesModel,
  TRANSLATION_DOMAIN
} from '../tokens';
import { dashdockIcon } from '../ui/icons';
import { shareSections } from '../ui/sections';

/**
 * Sources, plots, workers and managed clusters, in the left sidebar.
 */
export const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: 'dashdock:sidebar',
  description:
    'Lists Dask dashboard sources and their plots in the left sidebar.',
  autoStart: true,
  requires: [ISourcesModel, IPlotPanes],
  optional: [IClustersModel, ILayoutRestorer, ITranslator, IAlertsModel],
  activate: (
    app: JupyterFrontEnd,
    model: ISourcesModel,
    panes: IPlotPanes,
    clusters: IClustersModel | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null,
    alerts: IAlertsModel | null
  ): void => {
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

    // Plots get the most room, then a cluster's card with its controls; workers start closed,
    // so no scheduler is asked for workers nobody looks at.
    const options = { model, panes, commands: app.commands, trans };
    const shares = new Map<Widget, number>([
      [new SourcesSection(options), 1],
      [new PlotsSection({ ...options, hasClusters: !!clusters }), 2],
      [new WorkersSection(options), 0]
    ]);
    if (clusters) {
      shares.set(
        new ClustersSection({ model: clusters, commands: app.commands, trans }),
        1.6
      );
    }
    shares.set(new HistorySection(options), 0);
    shares.forEach((_, section) => sidebar.addWidget(section));
    shareSections(sidebar, shares);

    app.shell.add(sidebar, 'left', { rank: 200 });
    restorer?.add(sidebar, sidebar.id);
  }
};
