/**
 * Where dashdock opens its panes and views: Lab's dock, or, in a shell without one (Notebook 7,
 * whose main area holds its one document and ignores any other widget), a dock of its own in the
 * shell's right side panel.
 */

import { JupyterFrontEnd, LabShell } from '@jupyterlab/application';
import type { DocumentRegistry } from '@jupyterlab/docregistry';
import { TranslationBundle } from '@jupyterlab/translation';
import { DockPanelSvg } from '@jupyterlab/ui-components';
import { find } from '@lumino/algorithm';
import { BoxLayout, DockPanel, SplitPanel, Widget } from '@lumino/widgets';

import { dashdockIcon } from './icons';

/** What dashdock asks of the place its panes open in (a part of Lab's shell). */
export interface IMainArea {
  add(
    widget: Widget,
    area: 'main',
    options?: DocumentRegistry.IOpenOptions
  ): void;
  activateById(id: string): void;
  widgets(area: 'main'): IterableIterator<Widget>;
}

/** The right panel's share of the width when the plots dock opens in it. */
const DOCK_SHARE = 0.45;

const areas = new WeakMap<JupyterFrontEnd, IMainArea>();

/** `app`'s main area when it is Lab's dock; otherwise the one plots dock of this page. */
export function mainAreaOf(
  app: JupyterFrontEnd,
  trans: TranslationBundle
): IMainArea {
  if (app.shell instanceof LabShell) {
    return app.shell;
  }
  let area = areas.get(app);
  if (!area) {
    area = new SidePanelDock(app.shell, trans);
    areas.set(app, area);
  }
  return area;
}

/**
 * A dock (split, tab, drag, as in Lab) shown as one widget of the shell's right side panel; it
 * joins the panel with its first widget and leaves it with its last.
 */
class SidePanelDock implements IMainArea {
  constructor(shell: JupyterFrontEnd.IShell, trans: TranslationBundle) {
    this._shell = shell;
    const holder = (this._holder = new Widget());
    holder.id = 'dashdock-plot-dock';
    holder.addClass('jp-dashdock-PlotDock');
    holder.title.icon = dashdockIcon;
    holder.title.label = trans.__('Dask plots');
    holder.title.caption = trans.__('Plots of Dask dashboards');
    const layout = new BoxLayout();
    this._dock = new DockPanelSvg(); // tabs with Lab's close icons
    layout.addWidget(this._dock);
    holder.layout = layout;
    this._dock.layoutModified.connect(this._leaveWhenEmpty, this);
  }

  add(
    widget: Widget,
    _area: 'main',
    options: DocumentRegistry.IOpenOptions = {}
  ): void {
    const ref = options.ref
      ? (find(this._dock.widgets(), w => w.id === options.ref) ?? null)
      : null;
    this._dock.addWidget(widget, {
      mode: ref ? (options.mode ?? 'tab-after') : 'tab-after',
      ref
    });
    const joining = !this._holder.isAttached;
    if (joining) {
      this._shell.add(this._holder, 'right', { rank: 50 });
    }
    this._shell.activateById(this._holder.id); // the user may have closed the side panel
    if (joining) {
      this._widen();
    }
  }

  activateById(id: string): void {
    const widget = find(this._dock.widgets(), w => w.id === id);
    if (!widget) {
      return;
    }
    this._shell.activateById(this._holder.id);
    this._dock.activateWidget(widget);
  }

  widgets(_area: 'main'): IterableIterator<Widget> {
    return this._dock.widgets();
  }

  /** The side panel starts at a fifth of the width: too narrow for a plot. */
  private _widen(): void {
    let child: Widget = this._holder;
    let parent = child.parent;
    while (parent && !(parent instanceof SplitPanel)) {
      child = parent;
      parent = parent.parent;
    }
    if (!parent) {
      return;
    }
    const index = parent.widgets.indexOf(child);
    const sizes = parent.relativeSizes();
    // A hidden panel (Notebook 7's left one, by default) takes no room whatever its size says.
    const others = sizes.reduce(
      (sum, size, i) =>
        i === index || parent.widgets[i].isHidden ? sum : sum + size,
      0
    );
    const wanted = (others * DOCK_SHARE) / (1 - DOCK_SHARE);
    if (index >= 0 && sizes[index] < wanted) {
      sizes[index] = wanted;
      parent.setRelativeSizes(sizes);
    }
  }

  /** The last pane closed: the dock leaves the side panel, which closes if nothing else is in it. */
  private _leaveWhenEmpty(): void {
    if (!this._dock.isEmpty || !this._holder.isAttached) {
      return;
    }
    this._holder.parent = null;
    // Notebook 7's shell (not in JupyterFrontEnd.IShell): an empty side panel would stay open.
    const shell = this._shell as {
      isEmpty?: (area: string) => boolean;
      collapseRight?: () => void;
    };
    if (shell.isEmpty?.('right')) {
      shell.collapseRight?.();
    }
  }

  private _shell: JupyterFrontEnd.IShell;
  private _holder: Widget;
  private _dock: DockPanel;
}
