/**
 * The sidebar's Sources, Plots and Workers sections (see panes.ts for plugins/).
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { PlotsSection } from '../sources/plots';
import { SourcesSection } from '../sources/view';
import { WorkersSection } from '../sources/workers';
import {
  IClustersModel,
  IDaskSidebar,
  IPlotPanes,
  ISourcesModel,
  TRANSLATION_DOMAIN
} from '../tokens';

/**
 * The sources' sections of the sidebar. A plugin of its own, apart from `dashdock:sources`:
 * the sections open panes, and the panes plugin needs the sources model first.
 */
export const dashboardsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'dashdock:dashboards',
  description:
    'Lists Dask dashboard sources, their plots and workers in the sidebar.',
  autoStart: true,
  requires: [IDaskSidebar, ISourcesModel, IPlotPanes],
  optional: [IClustersModel, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    sidebar: IDaskSidebar,
    model: ISourcesModel,
    panes: IPlotPanes,
    clusters: IClustersModel | null,
    translator: ITranslator | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const options = { model, panes, commands: app.commands, trans };
    // Plots get the most room; workers start closed, so no scheduler is asked for workers
    // nobody looks at.
    sidebar.addSection(new SourcesSection(options), { rank: 100, weight: 1 });
    sidebar.addSection(
      new PlotsSection({ ...options, hasClusters: !!clusters }),
      { rank: 200, weight: 2 }
    );
    sidebar.addSection(new WorkersSection(options), { rank: 300, weight: 0 });
  }
};
