import { MainAreaWidget, ToolbarButton } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { launchIcon, refreshIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { proxyURL } from '../api';

const FRAME_CLASS = 'jp-dashdock-PlotFrame';
const PANE_CLASS = 'jp-dashdock-PlotPane';
const SOURCE_LABEL_CLASS = 'jp-dashdock-PlotPane-source';

/**
 * An iframe on a proxied plot page (same origin as Lab, so the proxy sees the user's session).
 */
export class PlotFrame extends Widget {
  constructor(url: string, title: string) {
    super();
    this.addClass(FRAME_CLASS);
    this._iframe = document.createElement('iframe');
    this._iframe.title = title;
    this._iframe.referrerPolicy = 'no-referrer';
    this._iframe.src = url;
    this.url = url;
    this.node.appendChild(this._iframe);
  }

  /** The proxied page this frame shows. */
  readonly url: string;

  reload(): void {
    // Re-assigning src reloads even when the page itself navigated elsewhere.
    this._iframe.src = this.url;
  }

  private _iframe: HTMLIFrameElement;
}

/**
 * A docked plot of a dashboard source: the frame plus a toolbar naming the source.
 */
export class PlotPane extends MainAreaWidget<PlotFrame> {
  constructor(options: PlotPane.IOptions) {
    const url = proxyURL(options.source, options.path);
    super({ content: new PlotFrame(url, options.name) });
    this.addClass(PANE_CLASS);
    this.source = options.source;
    this.path = options.path;
    this.id = options.id;
    this.title.label = options.name;
    this.title.caption = options.trans.__('%1 — %2', options.name, options.sourceName);
    this.title.closable = true;
    this.node.dataset.dashdockPath = options.path;
    this.node.dataset.dashdockSource = options.source;

    const sourceLabel = new Widget();
    sourceLabel.addClass(SOURCE_LABEL_CLASS);
    sourceLabel.node.textContent = options.sourceName;
    this.toolbar.addItem('source', sourceLabel);
    this.toolbar.addItem(
      'reload',
      new ToolbarButton({
        icon: refreshIcon,
        tooltip: options.trans.__('Reload this plot'),
        onClick: () => this.content.reload()
      })
    );
    this.toolbar.addItem(
      'open-tab',
      new ToolbarButton({
        icon: launchIcon,
        tooltip: options.trans.__('Open this plot in a browser tab'),
        onClick: () => window.open(url, '_blank', 'noopener')
      })
    );
  }

  /** The id of the source the plot belongs to. */
  readonly source: string;
  /** The plot's path on the dashboard, e.g. `/individual-task-stream`. */
  readonly path: string;
}

export namespace PlotPane {
  export interface IOptions {
    source: string;
    sourceName: string;
    path: string;
    name: string;
    id: string;
    trans: TranslationBundle;
  }
}
