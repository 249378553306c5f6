/**
 * A live plot under a cell (see data.ts for notebook/).
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { TranslationBundle } from '@jupyterlab/translation';
import { UUID } from '@lumino/coreutils';
import { PanelLayout, Widget } from '@lumino/widgets';

import { proxyURL, setPaneState } from '../api/client';
import { MimeTypes } from '../tokens';
import { DashboardFrame } from '../ui/frame';
import { HiddenSuspender } from '../ui/visibility';
import { readPlotData } from './data';

/**
 * A live plot under a cell (`dashdock.show`): the proxied plot page in a frame of the asked height.
 *
 * #### Notes
 * Out of sight (scrolled away, or Lab in a background browser tab) for longer than the grace
 * period, its relay is paused on the server (no bytes flow); back in sight, the page reloads,
 * consistent with the scheduler, as panes do.
 */
export class InlinePlot extends Widget implements IRenderMime.IRenderer {
  constructor(options: InlinePlot.IOptions) {
    super();
    this.addClass('jp-dashdock-InlinePlot');
    this.layout = new PanelLayout();
    this._trans = options.trans;
    this._isDark = options.isDark;
    this._hidden = new HiddenSuspender({
      grace: options.hiddenGrace,
      isShown: () => this._intersecting,
      onSuspend: () => void this._sendState(),
      onResume: () => void this._sendState().then(() => this._frame?.reload())
    });
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = readPlotData(model.data[MimeTypes.plot]);
    this._observer?.disconnect();
    this._frame?.dispose();
    this._frame = null;
    if (!data) {
      this.node.textContent = this._trans.__(
        'This plot output cannot be shown (its data is not valid).'
      );
      return Promise.resolve();
    }
    this.node.textContent = '';
    this._frame = new DashboardFrame({
      url: proxyURL(data.target, data.path, this._paneId),
      title: data.title
    });
    this._frame.node.style.height = `${data.height}px`;
    this._frame.setDark(this._isDark());
    (this.layout as PanelLayout).addWidget(this._frame);
    this._observer = new IntersectionObserver(entries => {
      this._intersecting = entries.some(entry => entry.isIntersecting);
      this._hidden.update();
    });
    this._observer.observe(this.node);
    return Promise.resolve();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._observer?.disconnect();
    const suspended = this._hidden.suspended;
    this._hidden.dispose();
    if (suspended) {
      // The server keeps a pane's state only while it differs from live: let it forget this one.
      void setPaneState(this._paneId, { paused: false, interval: 0 }).catch(
        () => undefined
      );
    }
    super.dispose();
  }

  private _sendState(): Promise<void> {
    return setPaneState(this._paneId, {
      paused: this._hidden.suspended,
      interval: 0
    }).catch(() => undefined);
  }

  private _trans: TranslationBundle;
  private _isDark: () => boolean;
  private _hidden: HiddenSuspender;
  private _paneId = `dashdock-inline-${UUID.uuid4()}`;
  private _frame: DashboardFrame | null = null;
  private _observer: IntersectionObserver | null = null;
  private _intersecting = false;
}

export namespace InlinePlot {
  export interface IOptions {
    trans: TranslationBundle;
    /** Seconds out of sight before the relay pauses. */
    hiddenGrace: number;
    isDark: () => boolean;
  }
}
