/**
 * One page of a recorded window, docked as a pane (see model.ts for history/).
 */

import { MainAreaWidget } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';

import { historyURL } from '../api/client';
import { DashboardFrame } from '../ui/frame';
import { IWindow, shortWindowLabel, windowLabel } from './window';

const PANE_CLASS = 'jp-dashdock-HistoryPane';

/** The pages a window opens, in the order they are docked. */
export const WINDOW_PAGES = ['task-stream', 'progress', 'memory'] as const;

export type WindowPage = (typeof WINDOW_PAGES)[number];

/** A page's name, for people. */
export function pageName(page: WindowPage, trans: TranslationBundle): string {
  switch (page) {
    case 'task-stream':
      return trans.__('Task Stream');
    case 'progress':
      return trans.__('Progress');
    case 'memory':
      return trans.__('Workers Memory');
  }
}

/**
 * A recorded page (task stream, progress or memory) of one window of a run, in a frame.
 *
 * #### Notes
 * What it shows is recorded: it never changes by itself, so it needs no status, pause or rate,
 * and it is not suspended while hidden. A new window for the same run and page replaces the one
 * shown (`setWindow`), so choosing windows one after another does not pile up panes.
 */
export class HistoryPane extends MainAreaWidget<DashboardFrame> {
  constructor(options: HistoryPane.IOptions) {
    const url = historyURL(options.run, `view/${options.page}`, options.window);
    const name = pageName(options.page, options.trans);
    super({ content: new DashboardFrame({ url, title: name }) });
    this.addClass(PANE_CLASS);
    this.id = options.id;
    this.run = options.run;
    this.page = options.page;
    this.runName = options.runName;
    this._window = options.window;
    this._trans = options.trans;
    this.title.closable = true;
    this.node.dataset.dashdockRun = options.run;
    this.node.dataset.dashdockPage = options.page;
    this._render();
  }

  /** The run's id (its source's id while it is recorded). */
  readonly run: string;
  readonly page: WindowPage;
  /** The run's name when the pane was opened; it names the pane after the run is gone. */
  readonly runName: string;

  get window(): IWindow {
    return this._window;
  }

  /** Show another window of the same run. */
  setWindow(window: IWindow): void {
    if (
      window.start === this._window.start &&
      window.end === this._window.end
    ) {
      return;
    }
    this._window = window;
    this.content.url = historyURL(this.run, `view/${this.page}`, window);
    this._render();
  }

  setDark(dark: boolean): void {
    this.content.setDark(dark);
  }

  private _render(): void {
    const trans = this._trans;
    const name = pageName(this.page, trans);
    this.title.label = trans.__(
      '%1 · %2 · %3',
      name,
      this.runName,
      shortWindowLabel(this._window)
    );
    this.title.caption = trans.__(
      '%1 of %2, %3',
      name,
      this.runName,
      windowLabel(this._window, trans)
    );
  }

  private _window: IWindow;
  private _trans: TranslationBundle;
}

export namespace HistoryPane {
  export interface IOptions {
    id: string;
    run: string;
    runName: string;
    page: WindowPage;
    window: IWindow;
    trans: TranslationBundle;
  }
}
