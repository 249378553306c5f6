/**
 * The Plots section of the sidebar: the selected source's plots by group, to open with a click
 * or dock with a drag, and the default layout (see model.ts for sources/).
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { KEY_PLOTS, PLOT_GROUPS } from '../api/plots';
import { IPlot, ISource } from '../api/types';
import { CommandIDs, IPlotPanes, ISourcesModel } from '../tokens';
import { makeDockDraggable, wasDragged } from '../ui/dnd';
import { element, makeKeyboardClickable } from '../ui/dom';

/**
 * The selected source's plots, with a filter.
 *
 * #### Notes
 * The list is built again only when the selection or the filter changes, never on the model's
 * health updates; the filter input itself is built once.
 */
export class PlotsSection extends Widget {
  constructor(options: PlotsSection.IOptions) {
    super();
    this.addClass('jp-dashdock-Plots');
    this._model = options.model;
    this._panes = options.panes;
    this._commands = options.commands;
    this._trans = options.trans;
    const trans = this._trans;
    this.title.label = trans.__('Plots');
    const header = element('div', 'jp-dashdock-Plots-header', this.node);
    this._filter = element(
      'input',
      'jp-dashdock-Plots-filter jp-mod-styled',
      header
    );
    this._filter.type = 'search';
    this._filter.placeholder = trans.__('Filter plots');
    this._filter.setAttribute('aria-label', trans.__('Filter plots'));
    const layout = element(
      'button',
      'jp-dashdock-Plots-layout jp-mod-styled',
      header
    );
    layout.dataset.action = 'layout';
    layout.textContent = trans.__('Layout');
    layout.title = trans.__(
      'Open the default layout: %1',
      KEY_PLOTS.map(plot => plot.label(trans)).join(', ')
    );
    this._list = element('div', 'jp-dashdock-PlotList', this.node);
    this._model.changed.connect(this._onModelChanged, this);
    this._onModelChanged();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._onModelChanged, this);
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
    }
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this.node.addEventListener('click', this);
    this._filter.addEventListener('input', this);
  }

  protected onBeforeDetach(msg: Message): void {
    this.node.removeEventListener('click', this);
    this._filter.removeEventListener('input', this);
    super.onBeforeDetach(msg);
  }

  private _evtClick(event: MouseEvent): void {
    const target = event.target as HTMLElement;
    const selected = this._model.selected;
    if (!selected) {
      return;
    }
    if (
      target.closest<HTMLElement>('[data-action]')?.dataset.action === 'layout'
    ) {
      void this._commands.execute(CommandIDs.openLayout, {
        source: selected.id
      });
      return;
    }
    const item = target.closest<HTMLElement>('.jp-dashdock-Plot');
    if (item && !wasDragged(item)) {
      void this._commands.execute(CommandIDs.openPlot, {
        source: selected.id,
        path: item.dataset.path ?? '',
        name: item.dataset.name ?? ''
      });
    }
  }

  private _onModelChanged(): void {
    const selected = this._model.selected;
    if (selected?.id !== this._plotsFor) {
      this._load(selected);
    }
  }

  private _load(source: ISource | null): void {
    this._plotsFor = source?.id ?? null;
    this._plots = [];
    if (!source) {
      this._showMessage(
        this._trans.__('Add a dashboard above to list its plots.')
      );
      return;
    }
    this._showMessage(this._trans.__('Loading plots…'));
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
          this._showMessage(String(error.message ?? error));
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
    // A group the client does not know yet is shown under "other", not dropped.
    const groupOf = (plot: IPlot) =>
      PLOT_GROUPS.includes(plot.group) ? plot.group : 'other';
    this._list.replaceChildren(
      ...PLOT_GROUPS.map(group => ({
        group,
        plots: visible.filter(plot => groupOf(plot) === group)
      }))
        .filter(({ plots }) => plots.length)
        .map(({ group, plots }) => {
          const section = element('div', 'jp-dashdock-PlotGroup');
          section.dataset.group = group;
          element('h3', '', section).textContent = Private.groupLabel(
            group,
            trans
          );
          const list = element('ul', '', section);
          list.append(...plots.map(plot => this._plotItem(source, plot)));
          return section;
        })
    );
  }

  private _plotItem(source: ISource, plot: IPlot): HTMLElement {
    const item = element('li', 'jp-dashdock-Plot');
    item.dataset.path = plot.path;
    item.dataset.name = plot.name;
    item.textContent = plot.name;
    item.title = this._trans.__('Click to open, drag to dock');
    makeKeyboardClickable(item);
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

  private _showMessage(text: string): void {
    const message = element('p', 'jp-dashdock-PlotList-message');
    message.textContent = text;
    this._list.replaceChildren(message);
  }

  private _model: ISourcesModel;
  private _panes: IPlotPanes;
  private _commands: CommandRegistry;
  private _trans: TranslationBundle;
  private _filter: HTMLInputElement;
  private _list: HTMLElement;
  private _plots: IPlot[] = [];
  private _plotsFor: string | null = null;
}

export namespace PlotsSection {
  export interface IOptions {
    model: ISourcesModel;
    panes: IPlotPanes;
    commands: CommandRegistry;
    trans: TranslationBundle;
  }
}

namespace Private {
  export function groupLabel(group: string, trans: TranslationBundle): string {
    switch (group) {
      case 'tasks':
        return trans.__('Tasks');
      case 'memory':
        return trans.__('Memory');
      case 'workers':
        return trans.__('Workers and system');
      case 'gpu':
        return trans.__('GPU');
      default:
        return trans.__('Other');
    }
  }
}
