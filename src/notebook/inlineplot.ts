import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { TranslationBundle } from '@jupyterlab/translation';
import { UUID } from '@lumino/coreutils';
import { Widget } from '@lumino/widgets';

import { proxyURL, setPaneState } from '../api';
import { createDashboardFrame } from '../frame';
import { MimeTypes } from '../tokens';
import { readPlotData } from './data';

const DARK_CLASS = 'jp-mod-dark';

/**
 * A live plot under a cell (`dashdock.show`): the proxied plot page in a frame of the asked height.
 *
 * #### Notes
 * Scrolled out of view for longer than the grace period, its relay is paused on the server (no
 * bytes flow); scrolled back, the page reloads, consistent with the scheduler, as panes do.
 */
export class InlinePlot extends Widget implements IRenderMime.IRenderer {
  constructor(options: InlinePlot.IOptions) {
    super();
    this.addClass('jp-dashdock-InlinePlot');
    this._trans = options.trans;
    this._hiddenGrace = options.hiddenGrace;
    this._isDark = options.isDark;
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = readPlotData(model.data[MimeTypes.plot]);
    this.node.textContent = '';
    this._observer?.disconnect();
    if (!data) {
      this.node.textContent = this._trans.__('This plot output cannot be shown (its data is not valid).');
      return Promise.resolve();
    }
    this.toggleClass(DARK_CLASS, this._isDark());
    this._frame = createDashboardFrame(data.title);
    this._frame.style.height = `${data.height}px`;
    this._url = proxyURL(data.target, data.path, this._paneId);
    this._frame.src = this._url;
    this.node.appendChild(this._frame);
    this._observer = new IntersectionObserver(entries => this._onIntersection(entries));
    this._observer.observe(this.node);
    return Promise.resolve();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._observer?.disconnect();
    window.clearTimeout(this._timer);
    if (this._paused) {
      void setPaneState(this._paneId, { paused: false, interval: 0 }).catch(() => undefined);
    }
    super.dispose();
  }

  private _onIntersection(entries: IntersectionObserverEntry[]): void {
    const visible = entries.some(entry => entry.isIntersecting);
    window.clearTimeout(this._timer);
    if (!visible) {
      this._timer = window.setTimeout(() => void this._pause(), this._hiddenGrace * 1000);
    } else if (this._paused) {
      void this._resume();
    }
  }

  private async _pause(): Promise<void> {
    this._paused = true;
    await setPaneState(this._paneId, { paused: true, interval: 0 }).catch(() => undefined);
  }

  private async _resume(): Promise<void> {
    this._paused = false;
    await setPaneState(this._paneId, { paused: false, interval: 0 }).catch(() => undefined);
    if (this._frame) {
      this._frame.src = this._url;
    }
  }

  private _trans: TranslationBundle;
  private _hiddenGrace: number;
  private _isDark: () => boolean;
  private _paneId = `dashdock-inline-${UUID.uuid4()}`;
  private _frame: HTMLIFrameElement | null = null;
  private _url = '';
  private _observer: IntersectionObserver | null = null;
  private _timer = 0;
  private _paused = false;
}

export namespace InlinePlot {
  export interface IOptions {
    trans: TranslationBundle;
    /** Seconds out of view before the relay pauses. */
    hiddenGrace: number;
    isDark: () => boolean;
  }
}
