/**
 * Creates plot panes, places them and keeps them tracked (see pane.ts for panes/).
 */

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { IThemeManager, WidgetTracker } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { UUID } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';

import { KEY_PLOTS, nameFromPath } from '../api/plots';
import { IPanePlacement, IPlotPanes, ISourcesModel } from '../tokens';
import { isDarkTheme } from '../ui/theme';
import { gridSteps, IPaneBox, tilePlacement } from './layout';
import { PlotPane } from './pane';

/**
 * The plot panes of this Lab: `IPlotPanes`, the default layout, and the settings every pane follows.
 *
 * #### Notes
 * Every pane is tracked when it is created, so that panes placed by a drop are restored after a
 * reload like any other.
 */
export class PaneManager implements IPlotPanes, IDisposable {
  constructor(options: PaneManager.IOptions) {
    this._shell = options.shell;
    this._model = options.model;
    this._trans = options.trans;
    this._themeManager = options.themeManager;
    this._themeManager?.themeChanged.connect(this._applyToPanes, this);
  }

  /** The open panes; the layout restorer saves and reopens them through it. */
  readonly tracker = new WidgetTracker<PlotPane>({
    namespace: 'dashdock-plots'
  });

  get isDisposed(): boolean {
    return this.tracker.isDisposed;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._themeManager?.themeChanged.disconnect(this._applyToPanes, this);
    this.tracker.dispose();
  }

  /** Change settings; open panes follow at once, new panes use them. */
  configure(config: Partial<PaneManager.IConfig>): void {
    this._config = { ...this._config, ...config };
    this._applyToPanes();
  }

  create(options: IPlotPanes.IOptions): PlotPane {
    const pane = new PlotPane({
      source: options.source,
      path: options.path,
      follows: options.follows,
      name: options.name || nameFromPath(options.path),
      id: options.id || `dashdock-plot-${UUID.uuid4()}`,
      rate: options.rate ?? this._config.defaultRate,
      hiddenGrace: this._config.hiddenGrace,
      model: this._model,
      trans: this._trans
    });
    pane.setDark(this._isDark());
    void this.tracker.add(pane);
    return pane;
  }

  open(options: IPlotPanes.IOptions, placement: IPanePlacement = {}): PlotPane {
    const { mode, ref } = placement.mode
      ? placement
      : tilePlacement(this._lastPaneBox());
    const pane = this.create(options);
    this._shell.add(pane, 'main', { mode, ref: ref ?? null });
    this._shell.activateById(pane.id);
    return pane;
  }

  /**
   * Open the plots of the `layout` setting that `source` offers: the first four as a grid
   * (`gridSteps`), the others tiled after them.
   */
  async openLayout(source: string): Promise<PlotPane[]> {
    const offered = await this._model.plots(source);
    const plots = this._config.layout
      .map(path => offered.find(plot => plot.path === path))
      .filter((plot): plot is NonNullable<typeof plot> => !!plot);
    const steps = gridSteps(plots.length);
    const opened = new Map<number, PlotPane>();
    for (const { index, mode, ref } of steps) {
      const plot = plots[index];
      const refId = ref === null ? undefined : opened.get(ref)?.id;
      opened.set(
        index,
        this.open(
          { source, path: plot.path, name: plot.name },
          { mode, ref: refId }
        )
      );
    }
    plots
      .slice(steps.length)
      .forEach(plot => this.open({ source, path: plot.path, name: plot.name }));
    return [...opened.values()];
  }

  /** The last active pane's box, when it is on screen to be split. */
  private _lastPaneBox(): IPaneBox | null {
    const last = this.tracker.currentWidget;
    if (!last || !last.isAttached) {
      return null;
    }
    const { width, height } = last.node.getBoundingClientRect();
    return { id: last.id, width, height };
  }

  private _isDark(): boolean {
    return this._config.followTheme && isDarkTheme(this._themeManager);
  }

  private _applyToPanes(): void {
    this.tracker.forEach(pane => {
      pane.setHiddenGrace(this._config.hiddenGrace);
      pane.setDark(this._isDark());
    });
  }

  private _shell: JupyterFrontEnd.IShell;
  private _model: ISourcesModel;
  private _trans: TranslationBundle;
  private _themeManager: IThemeManager | null;
  private _config: PaneManager.IConfig = {
    layout: KEY_PLOTS.map(plot => plot.path),
    hiddenGrace: 5,
    defaultRate: 0,
    followTheme: true
  };
}

export namespace PaneManager {
  export interface IOptions {
    shell: JupyterFrontEnd.IShell;
    model: ISourcesModel;
    trans: TranslationBundle;
    themeManager: IThemeManager | null;
  }

  /** What the panes plugin's settings say (schema/panes.json). */
  export interface IConfig {
    /** Plot paths the default layout opens, in order. */
    layout: string[];
    /** Seconds a pane stays hidden before its relays pause. */
    hiddenGrace: number;
    /** Seconds between redraws of new panes (0 is live). */
    defaultRate: number;
    /** Whether plots are drawn dark when the Lab theme is dark. */
    followTheme: boolean;
  }
}
