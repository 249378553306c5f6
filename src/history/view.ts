/**
 * The History view of one run: its overview page and what to do with a chosen window (see
 * model.ts for history/).
 */

import { MainAreaWidget } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { refreshIcon } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { getRun, historyURL } from '../api/client';
import { IFinding, IHistoryWindow } from '../api/types';
import { DashboardFrame } from '../ui/frame';
import { findingWindow } from './findingpages';
import { FindingsList } from './findings';
import { IWindow, windowFromMessage, windowLabel } from './window';

const VIEW_CLASS = 'jp-dashdock-HistoryView';

/**
 * Download `url` as a file: the server names it (`Content-Disposition`), the browser keeps it.
 */
export function download(url: string): void {
  const link = document.createElement('a');
  link.href = url;
  link.download = '';
  link.rel = 'noopener';
  document.body.appendChild(link);
  link.click();
  link.remove();
}

/**
 * A run's overview (the whole run, with a brush) and a toolbar: the chosen window, Open window,
 * and the exports of that window.
 *
 * #### Notes
 * The window comes from the overview page, which posts it when the user brushes (and once with
 * the whole run when it loads). The page is anyone's code (task keys are), so a message is taken
 * only from this view's own frame and only as finite numbers in order. A window given when the
 * view is opened is kept over the page's first message, which is the whole run.
 */
export class HistoryView extends MainAreaWidget<DashboardFrame> {
  constructor(options: HistoryView.IOptions) {
    const trans = options.trans;
    // A window given (an alert's "Show in history", a restored view) is drawn as the brush.
    const url = historyURL(options.run, 'view/overview', options.window ?? {});
    super({
      content: new DashboardFrame({ url, title: trans.__('History overview') })
    });
    this.addClass(VIEW_CLASS);
    this.id = options.id;
    this.run = options.run;
    this._trans = trans;
    this._findings = new FindingsList(trans);
    this._runName = options.runName ?? options.run;
    const given = options.window ?? {};
    if (given.start !== undefined && given.end !== undefined) {
      this._window = { start: given.start, end: given.end };
      this._keepGiven = true;
    }
    this.title.closable = true;
    this.node.dataset.dashdockRun = options.run;

    this._label.addClass('jp-dashdock-HistoryView-window');
    this._label.node.setAttribute('role', 'status');
    this.toolbar.addItem('window', this._label);
    this._openButton = this._button(
      'open-window',
      trans.__('Open window'),
      trans.__('Show the task stream, progress and memory of this window'),
      () => this._windowOpened.emit(this._window!)
    );
    this._button(
      'export-trace',
      trans.__('Export trace'),
      trans.__(
        'Download this window as a Chrome trace (Perfetto, chrome://tracing)'
      ),
      () => download(this.exportURL('trace'))
    );
    this._button(
      'parquet',
      trans.__('Parquet'),
      trans.__('Download the tasks of this window as a Parquet file'),
      () => download(this.exportURL('tasks.parquet'))
    );
    this._button(
      'report',
      trans.__('Report'),
      trans.__('Open a report of this window in a browser tab'),
      () => window.open(this.exportURL('report'), '_blank', 'noopener')
    );
    const reload = document.createElement('button');
    reload.type = 'button';
    reload.className = 'jp-ToolbarButtonComponent jp-Button jp-mod-minimal';
    reload.setAttribute('aria-label', trans.__('Reload'));
    reload.title = trans.__(
      'Draw the overview again (a run being recorded grows)'
    );
    reload.appendChild(
      refreshIcon.element({ tag: 'span', stylesheet: 'toolbarButton' })
    );
    // Drawn again with the brush where the user left it.
    // What the window's time went to, under the toolbar; a finding chosen brushes its stretch.
    this._findings.chosen.connect((_, finding) => {
      this.setWindow(findingWindow(finding));
      this.content.navigate(
        historyURL(this.run, 'view/overview', this._window ?? {})
      );
      this._findingChosen.emit(finding);
    });
    this.contentHeader.addWidget(this._findings);
    reload.addEventListener('click', () =>
      this.content.navigate(
        historyURL(this.run, 'view/overview', this._window ?? {})
      )
    );
    this.toolbar.addItem('reload', new Widget({ node: reload }));
    this._render();
    void this._loadName();
  }

  /** The run's id (its source's id while it is recorded). */
  readonly run: string;

  /** The run's name, once the server said it; its id before. */
  get runName(): string {
    return this._runName;
  }

  /** The chosen window; null until the page posted one. */
  get window(): IWindow | null {
    return this._window;
  }

  /** Emitted when the user asks for the panes of the window. */
  get windowOpened(): ISignal<this, IWindow> {
    return this._windowOpened;
  }

  /** Emitted when the user chooses a finding: its stretch is the window now. */
  get findingChosen(): ISignal<this, IFinding> {
    return this._findingChosen;
  }

  /** Emitted when something the layout restorer saves changed (the window). */
  get stateChanged(): ISignal<this, void> {
    return this._stateChanged;
  }

  /** The URL of an export of the chosen window (of the whole run before one is chosen). */
  exportURL(what: 'trace' | 'tasks.parquet' | 'report'): string {
    return historyURL(this.run, what, this._window ?? {});
  }

  /** Choose a window, as the page would. */
  setWindow(window: IWindow): void {
    if (
      window.start === this._window?.start &&
      window.end === this._window.end
    ) {
      return;
    }
    this._window = window;
    this._render();
    this._stateChanged.emit();
  }

  setDark(dark: boolean): void {
    this.content.setDark(dark);
  }

  /**
   * Handle the window's `message` events: the overview page's chosen window.
   */
  handleEvent(event: Event): void {
    if (event.type !== 'message') {
      return;
    }
    const message = event as MessageEvent;
    // Bail if another frame (or the Lab itself) sent it: only our page chooses our window.
    const frame = this.content.node.querySelector('iframe');
    if (!frame || message.source !== frame.contentWindow) {
      return;
    }
    const chosen = windowFromMessage(message.data);
    if (!chosen) {
      return;
    }
    if (this._keepGiven) {
      this._keepGiven = false;
      return;
    }
    this.setWindow(chosen);
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    window.addEventListener('message', this);
  }

  protected onBeforeDetach(msg: Message): void {
    window.removeEventListener('message', this);
    super.onBeforeDetach(msg);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    window.removeEventListener('message', this);
    this._findings.dispose();
    // Widget.dispose() emits `disposed` (Lab's tracker forgets the widget on it), then clears
    // this widget's signals: clearing them first would keep a closed pane tracked for good.
    super.dispose();
  }

  private async _loadName(): Promise<void> {
    try {
      const run = await getRun(this.run);
      if (!this.isDisposed && run.name !== this._runName) {
        this._runName = run.name;
        this._render();
        this._stateChanged.emit();
      }
    } catch (error) {
      // The page says what went wrong (a deleted run, a damaged store) where the user looks.
      console.warn('dashdock: could not read the run', error);
    }
  }

  private _button(
    action: string,
    label: string,
    tooltip: string,
    onClick: () => void
  ): HTMLButtonElement {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = `jp-ToolbarButtonComponent jp-Button jp-mod-minimal jp-dashdock-HistoryView-${action}`;
    button.dataset.action = action;
    button.textContent = label;
    button.title = tooltip;
    // The button lives and dies with the toolbar, and its listener with it.
    button.addEventListener('click', onClick);
    this.toolbar.addItem(action, new Widget({ node: button }));
    return button;
  }

  private _render(): void {
    const trans = this._trans;
    this.title.label = trans.__('History · %1', this._runName);
    this.title.caption = trans.__('History of %1', this._runName);
    this._label.node.textContent = this._window
      ? windowLabel(this._window, trans)
      : trans.__('Whole run: brush the overview to choose a window');
    this._label.node.title = this._label.node.textContent; // when it is cut short
    this._openButton.disabled = !this._window;
    this._findings.diagnose(this.run, this._window ?? {});
  }

  private _trans: TranslationBundle;
  private _runName: string;
  private _window: IWindow | null = null;
  private _keepGiven = false;
  private _label = new Widget();
  private _openButton: HTMLButtonElement;
  private _findings: FindingsList;
  private _findingChosen = new Signal<this, IFinding>(this);
  private _windowOpened = new Signal<this, IWindow>(this);
  private _stateChanged = new Signal<this, void>(this);
}

export namespace HistoryView {
  export interface IOptions {
    id: string;
    run: string;
    /** The run's name when known (a restored view); the server is asked anyway. */
    runName?: string;
    /** A window to show at first instead of the whole run. */
    window?: IHistoryWindow;
    trans: TranslationBundle;
  }
}
