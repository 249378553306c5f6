import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { IThemeManager } from '@jupyterlab/apputils';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { CellStrip } from '../notebook/cellstrip';
import { ClientRepr } from '../notebook/clientrepr';
import { InlinePlot } from '../notebook/inlineplot';
import {
  IAlertsModel,
  IPlotPanes,
  MimeTypes,
  TRANSLATION_DOMAIN
} from '../tokens';
import { isDarkTheme } from '../ui/theme';

/** Ahead of `text/html` (rank 50), so Lab prefers dashdock's output to Dask's own HTML. */
const RANK = 10;
const INLINE_HIDDEN_GRACE = 5;

/**
 * Renders what dashdock's kernel integration displays: the live repr of Dask clients and
 * clusters, live plots under cells, and what each cell computed, with the alerts raised meanwhile.
 */
export const notebookPlugin: JupyterFrontEndPlugin<void> = {
  id: 'dashdock:notebook',
  description:
    'Shows Dask clients in notebooks with live numbers and plot chips, and inline live plots.',
  autoStart: true,
  requires: [IRenderMimeRegistry, IPlotPanes],
  optional: [IThemeManager, ITranslator, IAlertsModel],
  activate: (
    app: JupyterFrontEnd,
    rendermime: IRenderMimeRegistry,
    panes: IPlotPanes,
    themeManager: IThemeManager | null,
    translator: ITranslator | null,
    alerts: IAlertsModel | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const isDark = () => isDarkTheme(themeManager);
    // Notebooks clone the application's registry when they open, so they all get these.
    rendermime.addFactory(
      {
        // Safe: it shows text only and asks this server for numbers; nothing from the output runs.
        safe: true,
        mimeTypes: [MimeTypes.client],
        createRenderer: () => new ClientRepr({ panes, trans })
      },
      RANK
    );
    rendermime.addFactory(
      {
        // A frame on a proxied page: only for trusted outputs (Lab shows the others' fallback).
        safe: false,
        mimeTypes: [MimeTypes.plot],
        createRenderer: () =>
          new InlinePlot({ trans, hiddenGrace: INLINE_HIDDEN_GRACE, isDark })
      },
      RANK
    );
    rendermime.addFactory(
      {
        // Safe: text and bars drawn from checked numbers; it asks this server for newer ones.
        safe: true,
        mimeTypes: [MimeTypes.cell],
        createRenderer: () =>
          new CellStrip({ commands: app.commands, panes, trans, alerts })
      },
      RANK
    );
  }
};
