/**
 * panes/: plots docked as panes in the main area: the pane widget (this file), the manager that
 * creates, places and restores them (manager.ts), and pure placement and rate rules (layout.ts,
 * rates.ts). May import api/, ui/ and tokens.ts; not the other feature directories.
 */

import { MainAreaWidget } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { Message } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';

import { proxyURL, setPaneState } from '../api/client';
import { ISource, ISourcesModel } from '../tokens';
import { DashboardFrame } from '../ui/frame';
import { HiddenSuspender } from '../ui/visibility';
import { RATES } from './rates';
import { rewindURL, warnNoRecording } from './rewind';
import { SpareFrames } from './spares';
import { GONE_AFTER_MS, PaneStatus, statusLabels, statusText } from './status';
import { PaneControls } from './toolbar';

const PANE_CLASS = 'jp-dashdock-PlotPane';
const STALE_CLASS = 'jp-dashdock-PaneStale';

/**
 * A docked plot of a dashboard source: the frame plus a toolbar with the source, a live status,
 * pause, update rate, reload and open-in-a-tab.
 *
 * #### Notes
 * The pane follows its source's health from the shared sources model: when the scheduler goes
 * away it shows "reconnecting" and marks the plot it still shows as stale, and when it answers
 * again (or a relay reported it lost) it reloads by itself. While hidden longer than a grace period
 * it asks the server to stop its relays. It remembers its source's name, so a pane whose source is
 * gone still says which one it showed.
 */
export class PlotPane extends MainAreaWidget<DashboardFrame> {
  constructor(options: PlotPane.IOptions) {
    const url = proxyURL(options.source, options.path, options.id);
    super({ content: options.spares.frame(options.source, url, options.name) });
    this.addClass(PANE_CLASS);
    this.source = options.source;
    this.follows = options.follows ?? null;
    this._healthSource = options.follows ?? options.source;
    this.path = options.path;
    this.id = options.id;
    this.plotName = options.name;
    this._model = options.model;
    this._trans = options.trans;
    this._rate = RATES.includes(options.rate) ? options.rate : 0;
    this._hidden = new HiddenSuspender({
      grace: options.hiddenGrace,
      isShown: () => this.isVisible,
      onSuspend: () => {
        void this._sendState();
        this._render();
      },
      onResume: () => {
        void this._sendState().then(() => {
          if (!this._paused && !this._rewound) {
            this.reload();
          }
        });
        this._render();
      }
    });
    this._sourceName = this._followed()?.name ?? options.sourceName ?? null;
    this.title.closable = true;
    this.node.dataset.dashdockPath = options.path;
    this.node.dataset.dashdockSource = options.source;
    if (options.follows) {
      this.node.dataset.dashdockFollows = options.follows;
    }
    this._lost = this._followed()?.lost ?? 0;
    void this._sendState();

    this._controls = new PaneControls(this.toolbar, {
      source: options.source,
      path: options.path,
      rate: this._rate,
      trans: options.trans,
      onPause: () => this.setPaused(!this._paused),
      onRate: value => this.setRate(value),
      onRewind: seconds => void this.rewind(seconds),
      onReload: () => this.reload(),
      tabURL: proxyURL(options.source, options.path)
    });
    this._stale.className = STALE_CLASS;
    this._stale.hidden = true;
    // Over the frame only, so the toolbar (status, reload) stays usable while the plot is stale.
    this.content.node.appendChild(this._stale);
    this._model.changed.connect(this._onSourcesChanged, this);
    this._render();
  }

  /** The id of the source the plot belongs to, or a literal `host:port` (a worker's dashboard). */
  readonly source: string;
  /** For a literal target: the source whose health the pane follows (the worker's scheduler). */
  readonly follows: string | null;
  /** The plot's path on the dashboard, e.g. `/individual-task-stream`. */
  readonly path: string;
  /** The plot's name, e.g. "Task Stream"; the tab adds the source's name when needed. */
  readonly plotName: string;

  /** The source's name as last known; its id (or target) when it was never known. */
  get sourceName(): string {
    return this._sourceName ?? this._healthSource;
  }

  /** The source whose health the pane follows: panes showing the same one show the same source. */
  get healthSource(): string {
    return this._healthSource;
  }

  /** Emitted when something the layout restorer saves changed (the rate, the source's name). */
  get stateChanged(): ISignal<this, void> {
    return this._stateChanged;
  }

  /** What the tab calls the source, when panes of more than one source are open (null: nothing). */
  setSourceLabel(label: string | null): void {
    if (label !== this._sourceLabel) {
      this._sourceLabel = label;
      this._render();
    }
  }

  /** Seconds between redraws (0 is live). */
  get rate(): number {
    return this._rate;
  }

  get status(): PaneStatus {
    // A recorded page shows the same whatever the scheduler does now.
    if (this._rewound) {
      return 'rewound';
    }
    const source = this._followed();
    // A literal host:port that follows no source has no health to show; its page shows errors.
    const unfollowed = !this.follows && this.source.includes(':');
    if (!source && !unfollowed) {
      return 'gone'; // removed, or a managed cluster that was shut down
    }
    if (source?.health.status === 'down') {
      return Date.now() - this._downSince > GONE_AFTER_MS
        ? 'gone'
        : 'reconnecting';
    }
    if (this._paused) {
      return 'paused';
    }
    return this._hidden.suspended ? 'suspended' : 'live';
  }

  setPaused(paused: boolean): void {
    if (paused === this._paused) {
      return;
    }
    this._paused = paused;
    void this._sendState().then(() => {
      if (!paused && !this._hidden.suspended && !this._rewound) {
        // A fresh page gives a document consistent with the scheduler, not a half-applied one.
        this.reload();
      }
    });
    this._render();
  }

  setRate(rate: number): void {
    if (rate === this._rate || !RATES.includes(rate)) {
      return;
    }
    this._rate = rate;
    void this._sendState();
    this._render();
    this._stateChanged.emit();
  }

  setHiddenGrace(seconds: number): void {
    this._hidden.grace = seconds;
  }

  setDark(dark: boolean): void {
    this.content.setDark(dark);
  }

  /** Seconds of the recording shown (the last minutes before it was chosen); 0 when live. */
  get rewound(): number {
    return this._rewound?.seconds ?? 0;
  }

  /**
   * Show the recorded page of the last `seconds` instead of the live plot, or (0) the live plot
   * again, reloaded. A source without a recording stays live and says so in the status.
   */
  async rewind(seconds: number): Promise<void> {
    const choice = ++this._rewindChoice;
    this._note = '';
    if (!seconds || !this._controls.recordedPage) {
      const wasRewound = !!this._rewound;
      this._rewound = null;
      if (wasRewound) {
        this.content.reload(); // the frame's own page is the live plot
      }
      this._render();
      return;
    }
    let url: string | null;
    try {
      url = await rewindURL(this.source, this._controls.recordedPage, seconds);
    } catch (error) {
      console.warn('dashdock: could not rewind the pane', error);
      url = null;
      this._note = this._trans.__('could not rewind: %1', String(error));
    }
    if (choice !== this._rewindChoice || this.isDisposed) {
      return; // another choice came after this one
    }
    if (url === null) {
      if (!this._note) {
        this._note = this._trans.__('no recording for this source');
        warnNoRecording(this._trans, this.sourceName);
      }
      if (this._rewound) {
        this._rewound = null;
        this.content.reload();
      }
    } else {
      this._rewound = { seconds, url };
      this.content.url = url;
    }
    this._render();
  }

  reload(): void {
    if (this._rewound) {
      this.content.url = this._rewound.url;
    } else {
      this.content.reload();
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._hidden.dispose();
    window.clearInterval(this._countdown);
    this._model.changed.disconnect(this._onSourcesChanged, this);
    // Widget.dispose() emits `disposed` (Lab's tracker forgets the widget on it), then clears
    // this widget's signals: clearing them first would keep a closed pane tracked for good.
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._hidden.update();
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this._hidden.update();
  }

  private _sendState(): Promise<void> {
    return setPaneState(this.id, {
      paused: this._paused || this._hidden.suspended,
      interval: this._rate
    }).catch(error =>
      console.warn('dashdock: could not set the pane state', error)
    );
  }

  /** The followed source, as the sources model knows it now. */
  private _followed(): ISource | undefined {
    return this._model.sources.find(s => s.id === this._healthSource);
  }

  private _onSourcesChanged(): void {
    const source = this._followed();
    const name = source?.name ?? null;
    if (name !== null && name !== this._sourceName) {
      this._sourceName = name;
      this._stateChanged.emit();
    }
    const down = source?.health.status === 'down';
    const lost = source?.lost ?? 0;
    if (down && !this._wasDown) {
      this._downSince = Date.now();
    }
    // Back up after a relay was lost (a restart); a failed health check alone reloads nothing.
    const lostSinceBack = this._lostSinceBack || lost !== this._lost;
    const cameBack = this._wasDown && !down && lostSinceBack;
    const lostWhileUp = !down && lost !== this._lost;
    this._lostSinceBack = lostSinceBack && !(this._wasDown && !down);
    this._wasDown = down;
    this._lost = lost;
    // A rewound pane shows a recording, which a reconnect does not change.
    if (
      (cameBack || lostWhileUp) &&
      !this._paused &&
      !this._hidden.suspended &&
      !this._rewound
    ) {
      this.reload();
    }
    this._render();
  }

  private _render(): void {
    const trans = this._trans;
    const status = this.status;
    const source = this._followed();
    this.title.label = this._sourceLabel
      ? trans.__('%1 · %2', this.plotName, this._sourceLabel)
      : this.plotName;
    this.title.caption = trans.__('%1 — %2', this.plotName, this.sourceName);
    const seconds = Math.max(
      0,
      Math.ceil((this._model.nextCheck - Date.now()) / 1000)
    );
    const labels = statusLabels(trans, {
      rate: this._rate,
      seconds,
      sourceKnown: !!source,
      rewound: this.rewound
    });
    const drawn = !this._rewound && !!source?.drawnPlots?.includes(this.path);
    Object.assign(this.node.dataset, { status, drawn: String(drawn) });
    const { text, detail } = statusText(trans, {
      sourceName: this.sourceName,
      label: labels[status],
      note: this._note,
      drawn,
      health: source?.health.message
    });
    this._controls.showStatus(status, text, detail);
    this.title.className = `jp-dashdock-PaneTab jp-mod-${status}`;
    this._controls.update({
      paused: this._paused,
      rewound: this.rewound,
      unrecorded: !!source?.unrecorded,
      removed: status === 'gone' && !source
    });
    // The plot on screen is the last one drawn before the scheduler went away: say so over it.
    const stale = status === 'reconnecting' || status === 'gone';
    this.toggleClass('jp-mod-stale', stale);
    this._stale.hidden = !stale;
    this._stale.textContent = stale
      ? trans.__('Stale: %1', labels[status])
      : '';
    // Count down to the next check while the scheduler is away; nothing ticks while it is up.
    const waiting =
      status === 'reconnecting' || (status === 'gone' && !!source);
    if (waiting && !this._countdown) {
      this._countdown = window.setInterval(() => this._render(), 1000);
    } else if (!waiting && this._countdown) {
      window.clearInterval(this._countdown);
      this._countdown = 0;
    }
  }

  private _model: ISourcesModel;
  private _healthSource: string;
  private _trans: TranslationBundle;
  private _controls: PaneControls;
  private _stale = document.createElement('div');
  private _rewound: { seconds: number; url: string } | null = null;
  private _rewindChoice = 0;
  /** A short message after the status (why a rewind did not happen). */
  private _note = '';
  private _sourceName: string | null;
  private _sourceLabel: string | null = null;
  private _stateChanged = new Signal<this, void>(this);
  private _hidden: HiddenSuspender;
  private _rate: number;
  private _paused = false;
  private _countdown = 0;
  private _wasDown = false;
  private _downSince = 0;
  private _lost: number;
  private _lostSinceBack = false; // a relay was lost since the source last came back up
}

export namespace PlotPane {
  export interface IOptions {
    source: string;
    path: string;
    follows?: string;
    name: string;
    /** The source's name as last known (a restored pane whose source may be gone). */
    sourceName?: string;
    id: string;
    rate: number;
    hiddenGrace: number;
    model: ISourcesModel;
    trans: TranslationBundle;
    spares: SpareFrames; // frames with BokehJS run, for the pane to draw in sooner
  }
}
