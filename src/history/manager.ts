/**
 * Creates History views and window panes, places them, keeps them tracked and themed (see
 * model.ts for history/).
 */

import { IThemeManager, WidgetTracker } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { UUID } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import type { Widget } from '@lumino/widgets';

import { historyURL, listRuns } from '../api/client';
import { IHistoryRun, IHistoryWindow } from '../api/types';
import { IPanePlacement, IPlotPanes } from '../tokens';
import { isDarkTheme } from '../ui/theme';
import { HistoryPane, WINDOW_PAGES, WindowPage } from './pane';
import { download, HistoryView } from './view';
import { IWindow } from './window';
import type { IMainArea } from '../ui/mainarea';
import { findingWindow, pageOf } from './findingpages';

/**
 * Where each page of a window docks, against the view or a page docked before it: the task
 * stream under the overview across its width, progress and memory stacked at its right.
 */
const PLACEMENT: Record<
  WindowPage,
  { mode: 'split-bottom' | 'split-right'; ref: WindowPage | 'view' }
> = {
  'task-stream': { mode: 'split-bottom', ref: 'view' },
  progress: { mode: 'split-right', ref: 'task-stream' },
  memory: { mode: 'split-bottom', ref: 'progress' }
};

/**
 * The History views and window panes of this Lab.
 *
 * #### Notes
 * Views and panes are tracked when created, so the layout restorer reopens them after a reload
 * (through `dashdock:open-history` and the pane command). They follow Lab's theme as plot panes do.
 */
export class HistoryManager implements IDisposable {
  constructor(options: HistoryManager.IOptions) {
    this._shell = options.shell;
    this._trans = options.trans;
    this._themeManager = options.themeManager;
    this._panes = options.panes ?? null;
    this._themeManager?.themeChanged.connect(this._applyTheme, this);
  }

  /** The open History views. */
  readonly views = new WidgetTracker<HistoryView>({
    namespace: 'dashdock-history'
  });

  /** The open window panes. */
  readonly panes = new WidgetTracker<HistoryPane>({
    namespace: 'dashdock-history-panes'
  });

  get isDisposed(): boolean {
    return this.views.isDisposed;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._themeManager?.themeChanged.disconnect(this._applyTheme, this);
    this.views.dispose();
    this.panes.dispose();
  }

  /**
   * Show the History view of a run, by its id or its source's (the run being recorded, else the
   * newest one); a view already open is brought to the front, with the window when one is given.
   */
  async openHistory(
    options: HistoryManager.IOpenOptions
  ): Promise<HistoryView> {
    const found = options.id ? null : await this.runOf(options.source ?? '');
    const run = options.id ?? found!.id;
    const window = Private.window(options);
    const open = this.views.find(view => view.run === run);
    if (open) {
      if (window) {
        open.setWindow(window);
      }
      this._shell.activateById(open.id);
      return open;
    }
    const view = new HistoryView({
      id: options.viewId || `dashdock-history-${UUID.uuid4()}`,
      run,
      runName: options.runName ?? found?.name,
      window: window ?? {},
      trans: this._trans
    });
    view.setDark(isDarkTheme(this._themeManager));
    view.windowOpened.connect((_, chosen) => this.openWindow(view, chosen));
    // A finding chosen: its stretch's panes, with the plot that shows it in front.
    view.findingChosen.connect((_, finding) => {
      const panes = this.openWindow(view, findingWindow(finding));
      const shows = panes.find(pane => pane.page === pageOf(finding));
      if (shows) {
        this._shell.activateById(shows.id);
      }
    });
    view.stateChanged.connect(() => void this.views.save(view));
    void this.views.add(view);
    this._shell.add(view, 'main');
    this._shell.activateById(view.id);
    return view;
  }

  /**
   * Dock the task stream, progress and memory of a window of `view`'s run; panes of that run
   * already open show the new window instead.
   */
  openWindow(view: HistoryView, window: IWindow): HistoryPane[] {
    const docked = new Map<WindowPage | 'view', string>([['view', view.id]]);
    return WINDOW_PAGES.map(page => {
      const open = this.panes.find(
        pane => pane.run === view.run && pane.page === page
      );
      if (open) {
        open.setWindow(window);
        void this.panes.save(open);
        this._shell.activateById(open.id);
        docked.set(page, open.id);
        return open;
      }
      const pane = this.createPane({
        run: view.run,
        runName: view.runName,
        page,
        window
      });
      const { mode, ref } = PLACEMENT[page];
      const beside = this._widgetOf(docked.get(ref) ?? view.id) ?? view;
      const others = [...docked.values()]
        .map(id => this._widgetOf(id))
        .filter((widget): widget is Widget => !!widget && widget !== beside);
      this._shell.add(pane, 'main', this._placement(beside, mode, others));
      docked.set(page, pane.id);
      return pane;
    });
  }

  /**
   * Where a window pane docks: beside `ref` as planned; when that would make a pane smaller than
   * the minimum, beside the largest of the window's other widgets that can be halved; else as a
   * tab after `ref`, so every pane on screen stays usable.
   */
  private _placement(
    ref: Widget,
    mode: 'split-bottom' | 'split-right',
    others: Widget[]
  ): IPanePlacement {
    const panes = this._panes;
    if (!panes) {
      return { mode, ref: ref.id };
    }
    const area = (widget: Widget) => {
      const { width, height } = widget.node.getBoundingClientRect();
      return width * height;
    };
    const candidates = [ref, ...others.sort((a, b) => area(b) - area(a))];
    for (const candidate of candidates) {
      const placement = panes.beside(candidate, mode);
      if (placement.mode !== 'tab-after') {
        return placement;
      }
    }
    return { mode: 'tab-after', ref: ref.id };
  }

  private _widgetOf(id: string): Widget | undefined {
    return (
      this.panes.find(pane => pane.id === id) ??
      this.views.find(view => view.id === id)
    );
  }

  /** A window pane, tracked and themed, not placed (the restorer and `openWindow` place it). */
  createPane(
    options: Omit<HistoryPane.IOptions, 'id' | 'trans'> & {
      id?: string;
    }
  ): HistoryPane {
    const pane = new HistoryPane({
      ...options,
      id: options.id || `dashdock-history-pane-${UUID.uuid4()}`,
      trans: this._trans
    });
    pane.setDark(isDarkTheme(this._themeManager));
    void this.panes.add(pane);
    return pane;
  }

  /** A window pane added to the main area (the layout restorer then moves it to its old spot). */
  openPane(
    options: Omit<HistoryPane.IOptions, 'id' | 'trans'> & {
      id?: string;
    }
  ): HistoryPane {
    const pane = this.createPane(options);
    this._shell.add(pane, 'main');
    return pane;
  }

  /** Download the Chrome trace of a run, or of a window of it. */
  exportTrace(id: string, window: IHistoryWindow = {}): void {
    download(historyURL(id, 'trace', window));
  }

  /**
   * The run of a source (of any source when none is named): the one recorded at `at` (seconds)
   * when given, else the one being recorded, else the newest.
   */
  async runOf(source: string, at?: number): Promise<IHistoryRun> {
    const runs = (await listRuns()).filter(
      run => !source || run.source === source
    );
    const during =
      at === undefined
        ? undefined
        : runs.find(run => run.start <= at && (run.end ?? Infinity) >= at);
    const live = runs.find(run => run.live);
    const newest = [...runs].sort((a, b) => b.start - a.start)[0];
    const run = during ?? live ?? newest;
    if (!run) {
      throw new Error(
        source
          ? this._trans.__('Nothing was recorded of this source yet.')
          : this._trans.__('Nothing was recorded yet.')
      );
    }
    return run;
  }

  private _applyTheme(): void {
    const dark = isDarkTheme(this._themeManager);
    this.views.forEach(view => view.setDark(dark));
    this.panes.forEach(pane => pane.setDark(dark));
  }

  private _shell: IMainArea;
  private _trans: TranslationBundle;
  private _themeManager: IThemeManager | null;
  private _panes: IPlotPanes | null;
}

export namespace HistoryManager {
  export interface IOptions {
    shell: IMainArea;
    trans: TranslationBundle;
    themeManager: IThemeManager | null;
    /** Places window panes by the plot panes' minimum size (without it they split as laid out). */
    panes?: IPlotPanes | null;
  }

  /** What `dashdock:open-history` takes. */
  export interface IOpenOptions extends IHistoryWindow {
    /** A run's id (a source's id names the run being recorded). */
    id?: string;
    /** A source's id: its run being recorded, else its newest. */
    source?: string;
    /** The run's name as last known (a restored view). */
    runName?: string;
    /** The view's widget id (a restored view gets its old one back). */
    viewId?: string;
  }
}

namespace Private {
  /** The window the options give, when both ends are finite and in order. */
  export function window(options: IHistoryWindow): IWindow | null {
    const { start, end } = options;
    return typeof start === 'number' &&
      typeof end === 'number' &&
      Number.isFinite(start) &&
      Number.isFinite(end) &&
      start <= end
      ? { start, end }
      : null;
  }
}
