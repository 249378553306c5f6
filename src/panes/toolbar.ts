/**
 * A pane's toolbar: its status, pause, rate, rewind, reload and open-in-a-tab controls, built once
 * and updated in place (see pane.ts for panes/).
 */

import { Toolbar } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { launchIcon, refreshIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { rateSelect, toolbarButton } from './buttons';
import { STATUSES, type PaneStatus } from './status';
import { recordedPage, rewindControl } from './rewind';

const STATUS_CLASS = 'jp-dashdock-PaneStatus';

/**
 * The controls of a pane's toolbar that change with its state.
 */
export class PaneControls {
  /**
   * Add the controls to `toolbar`: rewind only for a scheduler's page that is recorded (not a
   * worker's own dashboard, a literal `host:port`).
   */
  constructor(toolbar: Toolbar<Widget>, options: PaneControls.IOptions) {
    const { trans } = options;
    this._trans = trans;
    this.status.addClass(STATUS_CLASS);
    this.status.node.setAttribute('role', 'status');
    const pause = toolbarButton({
      className: 'jp-dashdock-PaneStatus-pause',
      label: trans.__('Pause'),
      tooltip: trans.__('Freeze this plot at the current instant'),
      onClick: options.onPause
    });
    this._pause = pause.node as HTMLButtonElement;
    const rate = rateSelect({
      trans,
      rate: options.rate,
      onChange: options.onRate
    });
    this._rate = rate.node as HTMLSelectElement;
    toolbar.addItem('status', this.status);
    toolbar.addItem('pause', pause);
    toolbar.addItem('rate', rate);
    const page = recordedPage(options.path);
    if (page && !options.source.includes(':')) {
      const rewind = rewindControl(trans, options.onRewind);
      this._rewindSelect = rewind.node.querySelector('select');
      this._rewind = rewind;
      this.recordedPage = page;
      toolbar.addItem('rewind', rewind);
    }
    toolbar.addItem(
      'reload',
      toolbarButton({
        icon: refreshIcon,
        label: trans.__('Reload'),
        tooltip: trans.__('Reload this plot'),
        onClick: options.onReload
      })
    );
    toolbar.addItem(
      'open-tab',
      toolbarButton({
        icon: launchIcon,
        label: trans.__('Open in a browser tab'),
        tooltip: trans.__('Open this plot in a browser tab'),
        onClick: () => window.open(options.tabURL, '_blank', 'noopener')
      })
    );
  }

  /** The status, leading the toolbar (the last items overflow first in narrow panes). */
  readonly status = new Widget();
  /** The recorded page a rewind shows, or null when the pane offers no rewind. */
  readonly recordedPage: string | null = null;

  /**
   * Show `status` in words (`text`), in full in the tooltip with what the last health check said
   * (`detail`). It leads the toolbar (the last items overflow first in narrow panes).
   */
  showStatus(status: PaneStatus, text: string, detail?: string): void {
    const node = this.status.node;
    node.textContent = text;
    node.title = [text, detail].filter(Boolean).join('\n');
    for (const name of STATUSES) {
      this.status.toggleClass(`jp-mod-${name}`, name === status);
    }
  }

  /**
   * Show the pane's state: paused or not, the recording shown (seconds, 0 when live), whether its
   * source can be recorded at all.
   */
  update(state: {
    paused: boolean;
    rewound: number;
    unrecorded: boolean;
    /** The source was removed: nothing live is left to pause or to slow down. */
    removed: boolean;
  }): void {
    const trans = this._trans;
    const pause = this._pause;
    pause.dataset.paused = String(state.paused);
    pause.textContent = state.paused ? trans.__('Resume') : trans.__('Pause');
    pause.title = state.paused
      ? trans.__('Show this plot live again')
      : trans.__('Freeze this plot at the current instant');
    // Pause and rate act on the live plot; a recorded page, or a removed source's, has none.
    pause.disabled = !!state.rewound || state.removed;
    this._rate.disabled = !!state.rewound || state.removed;
    if (this._rewindSelect) {
      this._rewindSelect.value = String(state.rewound);
    }
    // A source that can never be recorded (no scheduler the history can reach) offers no Rewind.
    this._rewind?.setHidden(state.unrecorded);
  }

  private _trans: TranslationBundle;
  private _pause: HTMLButtonElement;
  private _rate: HTMLSelectElement;
  private _rewindSelect: HTMLSelectElement | null = null;
  private _rewind: Widget | null = null;
}

export namespace PaneControls {
  export interface IOptions {
    source: string;
    path: string;
    rate: number;
    trans: TranslationBundle;
    onPause: () => void;
    onRate: (rate: number) => void;
    onRewind: (seconds: number) => void;
    onReload: () => void;
    /** The plot's proxy link, which a tab opens as its own page. */
    tabURL: string;
  }
}
