/**
 * Creates plot panes, places them and keeps them tracked (see pane.ts for panes/).
 */

import { IThemeManager, WidgetTracker } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { TranslationBundle } from '@jupyterlab/translation';
import { UUID } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { MessageLoop } from '@lumino/messaging';
import type { DockPanel, Widget } from '@lumino/widgets';

import { KEY_PLOTS, nameFromPath, plotMinHeight } from '../api/plots';
import { IPanePlacement, IPlotPanes, ISourcesModel } from '../tokens';
import { isDarkTheme } from '../ui/theme';
import {
  canHalve,
  gridSteps,
  halving,
  IPaneBox,
  ISizeRule,
  placePlot
} from './layout';
import { PlotPane } from './pane';
import { rateFromSetting } from './rates';
import { SpareFrames } from './spares';
import { tabSourceLabels } from './tablabels';
import type { IMainArea } from '../ui/mainarea';

/** How many plots the default layout places as a grid (`gridSteps`). */
const GRID_SIZE = 4;

/** The tab bar a split adds, when no tab bar is on screen to measure. */
const TAB_BAR_HEIGHT = 28;

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
    this._model.changed.connect(this._updateLabels, this);
    this._model.changed.connect(this._retainSpares, this);
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
    this._model.changed.disconnect(this._updateLabels, this);
    this._model.changed.disconnect(this._retainSpares, this);
    this._spares.dispose();
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
      sourceName: options.sourceName,
      id: options.id || `dashdock-plot-${UUID.uuid4()}`,
      rate: options.rate ?? this._config.defaultRate,
      hiddenGrace: this._config.hiddenGrace,
      model: this._model,
      trans: this._trans,
      spares: this._spares
    });
    pane.setDark(this._isDark());
    // What its plot needs to be read (placement keeps a pane that high), for tests and people.
    pane.node.dataset.minHeight = String(plotMinHeight(options.path));
    // The restorer saves a pane's args when it is added; later changes are saved here.
    pane.stateChanged.connect(() => void this.tracker.save(pane));
    pane.disposed.connect(this._updateLabels, this);
    void this.tracker.add(pane);
    this._updateLabels();
    return pane;
  }

  open(options: IPlotPanes.IOptions, placement: IPanePlacement = {}): PlotPane {
    // A main area holding nothing but Launchers gives them up once the pane is there (closing them
    // earlier would make Lab open another): a clicked plot gets the room, not a strip beside them.
    const launchers = this._loneLaunchers();
    const { mode, ref } = placement.mode
      ? placement
      : this._placement(plotMinHeight(options.path));
    const pane = this.create(options);
    this._shell.add(pane, 'main', { mode, ref: ref ?? null });
    this._shell.activateById(pane.id);
    launchers.forEach(launcher => launcher.close());
    return pane;
  }

  /**
   * Show the plots of the `layout` setting that `source` offers. When none of them is open, the
   * first four go as a grid (`gridSteps`) and the others tile after them; otherwise the open ones
   * are brought to the front and the missing ones tile, so nothing is opened twice.
   */
  async openLayout(source: string): Promise<PlotPane[]> {
    const offered = await this._model.plots(source);
    const chosen = this._config.layout
      .map(path => offered.find(plot => plot.path === path))
      .filter((plot): plot is NonNullable<typeof plot> => !!plot);
    // A source without Dask's plots (a Bokeh server) lays out its first ones.
    const plots = chosen.length ? chosen : offered.slice(0, GRID_SIZE);
    const options = plots.map(plot => ({
      source,
      path: plot.path,
      name: plot.name
    }));
    const existing = plots.map(plot =>
      this.tracker.find(
        pane => pane.source === source && pane.path === plot.path
      )
    );
    if (existing.some(pane => pane)) {
      existing.forEach(pane => pane && this._shell.activateById(pane.id));
      return options.map(
        (option, index) => existing[index] ?? this.open(option)
      );
    }
    const steps = gridSteps(plots.length);
    const opened = new Map<number, PlotPane>();
    // The first pane takes a lone Launcher's place (open()), so the grid fills the main area.
    for (const { index, mode, ref } of steps) {
      const refPane = ref === null ? undefined : opened.get(ref);
      const box = refPane && this._box(refPane);
      // A grid cell that would be too small tiles as a click would instead.
      const placement =
        box &&
        canHalve(
          box,
          mode,
          this._sizeRule(refPane),
          plotMinHeight(options[index].path)
        )
          ? { mode, ref: box.id }
          : {};
      opened.set(index, this.open(options[index], placement));
    }
    return options.map(
      (option, index) => opened.get(index) ?? this.open(option)
    );
  }

  beside(ref: Widget, mode: 'split-right' | 'split-bottom'): IPanePlacement {
    MessageLoop.flush(); // see _box
    const { width, height } = ref.node.getBoundingClientRect();
    const box = { id: ref.id, width, height };
    const rule = this._sizeRule(ref);
    const split = canHalve(box, mode, rule) ? mode : halving(box, rule);
    return { mode: split ?? 'tab-after', ref: ref.id };
  }

  /** The main area's widgets when every one is a Launcher, else none. */
  private _loneLaunchers(): Widget[] {
    const main = Array.from(this._shell.widgets('main'));
    const isLauncher = (widget: Widget) =>
      !!widget.node.querySelector('.jp-Launcher');
    return main.every(isLauncher) ? main : [];
  }

  /** Where a plot goes when its caller did not say: by `placePlot`, against the panes on screen. */
  private _placement(incoming: number): IPanePlacement {
    MessageLoop.flush(); // see _box
    const visible = this.tracker.filter(pane => pane.isVisible);
    const current = this.tracker.currentWidget;
    const last = current?.isVisible ? this._box(current) : null;
    return placePlot(
      visible.map(pane => this._box(pane)),
      last,
      this._sizeRule(visible[0]),
      incoming
    );
  }

  private _box(pane: PlotPane): IPaneBox {
    // Lay out what earlier calls added (the dock fits itself in a later frame), so sizes are real.
    MessageLoop.flush();
    const { width, height } = pane.node.getBoundingClientRect();
    return { id: pane.id, width, height, minHeight: plotMinHeight(pane.path) };
  }

  /** The minimum size, and what a split costs in the dock the panes are in. */
  private _sizeRule(pane: Widget | undefined): ISizeRule {
    const dock = pane?.parent as Partial<DockPanel> | null | undefined;
    const spacing = dock?.spacing ?? 4;
    const tabBar = pane?.node.parentElement?.querySelector(
      ':scope > .lm-DockPanel-tabBar'
    );
    const tabBarHeight =
      tabBar?.getBoundingClientRect().height || TAB_BAR_HEIGHT;
    return {
      minWidth: this._config.minWidth,
      minHeight: this._config.minHeight,
      gapX: spacing,
      gapY: spacing + tabBarHeight
    };
  }

  /** Tabs name their source when panes of more than one source are open (tablabels.ts). */
  private _updateLabels(): void {
    const shown = this.tracker.filter(pane => !pane.isDisposed);
    const sources = new Set(shown.map(pane => pane.healthSource));
    const labels =
      sources.size > 1
        ? tabSourceLabels(shown.map(pane => pane.sourceName))
        : new Map<string, string>();
    shown.forEach(pane =>
      pane.setSourceLabel(labels.get(pane.sourceName) ?? null)
    );
  }

  private _isDark(): boolean {
    return this._config.followTheme && isDarkTheme(this._themeManager);
  }

  private _retainSpares(): void {
    this._spares.retain(new Set(this._model.sources.map(source => source.id)));
  }

  private _applyToPanes(): void {
    this._spares.max = this._config.spareFrames;
    this.tracker.forEach(pane => {
      pane.setHiddenGrace(this._config.hiddenGrace);
      pane.setDark(this._isDark());
    });
  }

  private _shell: IMainArea;
  private _model: ISourcesModel;
  private _trans: TranslationBundle;
  private _themeManager: IThemeManager | null;
  private _config: PaneManager.IConfig = {
    layout: KEY_PLOTS.map(plot => plot.path),
    hiddenGrace: 5,
    defaultRate: 0,
    followTheme: true,
    minWidth: 320,
    minHeight: 200,
    spareFrames: 2
  };
  private _spares = new SpareFrames(this._config.spareFrames);
}

export namespace PaneManager {
  export interface IOptions {
    shell: IMainArea;
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
    /** The smallest pane (pixels) that opening a plot may leave on screen. */
    minWidth: number;
    minHeight: number;
    /** Frames kept with BokehJS run, one per recently used source (0: none). */
    spareFrames: number;
  }
}

/**
 * Configure `panes` from the panes plugin's settings, now and whenever they change.
 */
export function followPaneSettings(
  settings: ISettingRegistry.ISettings,
  panes: PaneManager
): void {
  const apply = () =>
    panes.configure({
      layout: settings.get('layout').composite as string[],
      hiddenGrace: settings.get('hiddenGrace').composite as number,
      defaultRate: rateFromSetting(
        settings.get('defaultRate').composite as string
      ),
      followTheme: settings.get('followTheme').composite as boolean,
      minWidth: settings.get('minPaneWidth').composite as number,
      minHeight: settings.get('minPaneHeight').composite as number,
      spareFrames: settings.get('spareFrames').composite as number
    });
  apply();
  settings.changed.connect(apply);
}
