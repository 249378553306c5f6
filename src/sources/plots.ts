/**
 * The Plots section of the sidebar: the selected source's plots by group, to open with a click,
 * the keyboard or a drag, and the default layout (see model.ts for sources/).
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { Poll } from '@lumino/polling';

import { KEY_PLOTS } from '../api/plots';
import { IPlot, ISource } from '../api/types';
import { CommandIDs, IPlotPanes, ISourcesModel } from '../tokens';
import { makeDockDraggable } from '../ui/dnd';
import { element } from '../ui/dom';
import { PlotTree } from './plottree';
import { Section } from '../ui/section';

/** How often the plots of the selected source are asked for again while the section is seen:
 * a notebook's new `dashdock.metric` shows up within this (Dask's own list never changes). */
const REFRESH_INTERVAL = 2000;

/**
 * The selected source's plots, with a filter, as a tree of folding groups (plottree.ts).
 *
 * #### Notes
 * The tree is built again only when the selection, the filter or the list changes, never on the
 * model's health updates. Enter in the filter opens the first match; Down moves into the tree.
 */
export class PlotsSection extends Section {
  constructor(options: PlotsSection.IOptions) {
    super();
    this.addClass('jp-dashdock-Plots');
    this._model = options.model;
    this._panes = options.panes;
    this._commands = options.commands;
    this._trans = options.trans;
    this._hasClusters = options.hasClusters ?? false;

    const trans = this._trans;
    this._header = element('div', 'jp-dashdock-Plots-header', this.node);
    this._filter = element(
      'input',
      'jp-dashdock-Plots-filter jp-mod-styled',
      this._header
    );
    this._filter.type = 'search';
    this._filter.placeholder = trans.__('Filter plots');
    this._filter.setAttribute('aria-label', trans.__('Filter plots'));
    this._filter.title = trans.__(
      'Type to filter; Enter opens the first match, Down moves into the list'
    );
    const layout = element(
      'button',
      'jp-dashdock-Plots-layout jp-mod-styled',
      this._header
    );
    layout.dataset.action = 'layout';
    layout.textContent = trans.__('Layout');
    layout.title = trans.__(
      'Open the default layout: %1',
      KEY_PLOTS.map(plot => plot.label(trans)).join(', ')
    );
    this._message = element('p', 'jp-dashdock-PlotList-message', this.node);
    this._message.setAttribute('role', 'status');
    this._tree = new PlotTree({
      plotRow: plot => this._plotItem(plot),
      open: row => this._open(row),
      trans
    });
    this.node.appendChild(this._tree.node);
    this.listen('click');
    this.listen('input', this._filter);
    this.listen('keydown', this._filter);
    this.follow(this._model.changed, this._onModelChanged);
    this._onModelChanged();
    this._refresh = new Poll({
      factory: () => this._refreshPlots(),
      frequency: { interval: REFRESH_INTERVAL, backoff: false },
      standby: () => !this.isVisible || 'when-hidden',
      name: 'dashdock:plots'
    });
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._refresh.dispose();
    this._tree.dispose();
    super.dispose();
  }

  /**
   * Handle the DOM events of the section (delegated from its root node).
   */
  handleEvent(event: Event): void {
    switch (event.type) {
      case 'click':
        this._evtClick(event as MouseEvent);
        break;
      case 'input':
        this._render();
        break;
      case 'keydown':
        this._evtFilterKeydown(event as KeyboardEvent);
        break;
    }
  }

  private _evtClick(event: MouseEvent): void {
    const target = event.target as HTMLElement;
    const selected = this._model.selected;
    if (!selected) {
      return;
    }
    const action = target.closest<HTMLElement>('[data-action]')?.dataset.action;
    if (action === 'layout') {
      void this._commands.execute(CommandIDs.openLayout, {
        source: selected.id
      });
    } else if (action === 'retry') {
      this._load(selected);
    }
  }

  /** Enter opens the first match; Down moves into the list, onto the first match. */
  private _evtFilterKeydown(event: KeyboardEvent): void {
    if (event.key !== 'Enter' && event.key !== 'ArrowDown') {
      return;
    }
    event.preventDefault();
    if (event.key === 'ArrowDown') {
      this._tree.focusFirst(!!this._filter.value.trim());
      return;
    }
    const first = this._tree.firstPlot();
    if (first) {
      this._open(first);
    }
  }

  private _open(item: HTMLElement): void {
    const selected = this._model.selected;
    if (selected) {
      void this._commands.execute(CommandIDs.openPlot, {
        source: selected.id,
        path: item.dataset.path ?? '',
        name: item.dataset.name ?? ''
      });
    }
  }

  private _onModelChanged(): void {
    const selected = this._model.selected;
    this._nameSource(selected);
    if (selected?.id !== this._plotsFor) {
      this._load(selected);
    } else if (selected && (selected.gpus ?? null) !== this._gpus) {
      this._render(); // the GPU group unfolds once the workers are known to have GPUs
    }
  }

  /**
   * The section's title names the source its plots are of: with several sources, the selection
   * in Sources is otherwise the only sign of which one a click opens.
   */
  private _nameSource(source: ISource | null): void {
    const trans = this._trans;
    this.title.label = source
      ? trans.__('Plots · %1', source.name)
      : trans.__('Plots');
    this.title.caption = source ? trans.__('The plots of %1', source.name) : '';
  }

  /** Ask for the shown source's plots again; the tree changes only if the list did. */
  private async _refreshPlots(): Promise<void> {
    const source = this._model.selected;
    if (!source || this._plotsFor !== source.id || !this._plots.length) {
      return; // nothing shown yet, or an error the user retries
    }
    let plots: IPlot[];
    try {
      plots = await this._model.plots(source.id);
    } catch {
      return; // the health check says when a dashboard is down
    }
    if (
      this._plotsFor === source.id &&
      JSON.stringify(plots) !== JSON.stringify(this._plots)
    ) {
      this._plots = plots;
      this._render();
    }
  }

  private _load(source: ISource | null): void {
    const trans = this._trans;
    this._plotsFor = source?.id ?? null;
    this._plots = [];
    // Nothing to filter or lay out without a source: the message says what to do instead.
    this._header.hidden = !source;
    if (!source) {
      this._showMessage(
        this._hasClusters
          ? trans.__(
              'No dashboard yet. Add a dashboard URL under Sources above, or start a cluster under Clusters below.'
            )
          : trans.__(
              'No dashboard yet. Add a dashboard URL under Sources above.'
            )
      );
      return;
    }
    this._showMessage(trans.__('Loading plots…'));
    this._model
      .plots(source.id)
      .then(plots => {
        if (this._plotsFor !== source.id) {
          return; // the selection moved on while we waited
        }
        this._plots = plots;
        this._render();
      })
      .catch(error => {
        if (this._plotsFor === source.id) {
          this._plotsFor = null; // try again on the next change
          // The server's message names the dashboard and says what went wrong.
          this._showMessage(String(error?.message ?? error), true);
        }
      });
  }

  private _render(): void {
    const source = this._model.selected;
    if (!source || this._plotsFor !== source.id) {
      return;
    }
    const trans = this._trans;
    const query = this._filter.value.trim().toLowerCase();
    const visible = this._plots.filter(plot =>
      plot.name.toLowerCase().includes(query)
    );
    if (!visible.length) {
      this._showMessage(
        this._plots.length
          ? trans.__('No plot matches the filter.')
          : trans.__('This dashboard lists no plots.')
      );
      return;
    }
    this._showMessage('');
    this._gpus = source.gpus ?? null;
    this._tree.render(
      visible,
      trans.__('Plots of %1', source.name),
      !!query,
      this._gpus
    );
  }

  private _plotItem(plot: IPlot): HTMLElement {
    const source = this._model.selected!;
    const item = element('li', 'jp-dashdock-Plot');
    item.setAttribute('role', 'treeitem');
    item.dataset.path = plot.path;
    item.dataset.name = plot.name;
    item.textContent = plot.name;
    item.title = this._trans.__(
      '%1\nEnter or click to open, drag to dock',
      plot.description || plot.name
    );
    makeDockDraggable(
      item,
      () =>
        this._panes.create({
          source: source.id,
          path: plot.path,
          name: plot.name
        }),
      () => plot.name
    );
    return item;
  }

  /**
   * Show `text` instead of the tree (an empty text shows the tree alone); an error offers to try
   * again, since a dashboard that comes back between two health checks changes nothing we see.
   */
  private _showMessage(text: string, isError = false): void {
    this._message.textContent = text;
    this._message.hidden = !text;
    this._message.classList.toggle('jp-mod-error', isError);
    if (isError) {
      const retry = element(
        'button',
        'jp-dashdock-PlotList-retry jp-mod-styled',
        this._message
      );
      retry.dataset.action = 'retry';
      retry.textContent = this._trans.__('Try again');
      retry.title = this._trans.__('Ask the dashboard for its plots again');
    }
    if (text) {
      this._tree.clear();
    }
  }

  private _model: ISourcesModel;
  private _panes: IPlotPanes;
  private _commands: CommandRegistry;
  private _trans: TranslationBundle;
  private _hasClusters: boolean;
  private _header: HTMLElement;
  private _filter: HTMLInputElement;
  private _message: HTMLElement;
  private _tree: PlotTree;
  private _plots: IPlot[] = [];
  private _plotsFor: string | null = null;
  private _gpus: number | null = null;
  private _refresh: Poll;
}

export namespace PlotsSection {
  export interface IOptions {
    model: ISourcesModel;
    panes: IPlotPanes;
    commands: CommandRegistry;
    trans: TranslationBundle;
    /** Whether the sidebar has a Clusters section to point at when there is no source. */
    hasClusters?: boolean;
  }
}
