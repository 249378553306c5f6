import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { makeDockDraggable } from '../dnd';
import { WorkersSection } from './workers';
import { CommandIDs, IPlot, IPlotPanes, ISource, ISourcesModel } from '../tokens';

const SIDEBAR_CLASS = 'jp-dashdock-Sidebar';
const SELECTED_CLASS = 'jp-mod-selected';
const DISABLED_CLASS = 'jp-mod-disabled';

/** Topics in the order the sidebar shows them. */
const GROUP_ORDER = ['tasks', 'memory', 'workers', 'gpu', 'other'];

/**
 * The left sidebar: add a dashboard by URL, pick a source, and open or drag its plots.
 */
export class DashdockSidebar extends Widget {
  constructor(options: DashdockSidebar.IOptions) {
    super();
    this.addClass(SIDEBAR_CLASS);
    this._model = options.model;
    this._panes = options.panes;
    this._commands = options.commands;
    this._trans = options.trans;
    this._workers = new WorkersSection({ panes: options.panes, trans: options.trans });
    this.node.appendChild(this._buildSkeleton());
    this._model.changed.connect(this._onModelChanged, this);
    this._renderSources();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._onModelChanged, this);
    this._workers.dispose();
    super.dispose();
  }

  /**
   * Handle the DOM events of the sidebar (delegated from its root node).
   */
  handleEvent(event: Event): void {
    switch (event.type) {
      case 'submit':
        this._evtSubmit(event);
        break;
      case 'click':
        this._evtClick(event as MouseEvent);
        break;
      case 'input':
        this._renderPlots();
        break;
    }
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this.node.addEventListener('submit', this);
    this.node.addEventListener('click', this);
    this._filter.addEventListener('input', this);
  }

  protected onBeforeDetach(msg: Message): void {
    this.node.removeEventListener('submit', this);
    this.node.removeEventListener('click', this);
    this._filter.removeEventListener('input', this);
    super.onBeforeDetach(msg);
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this._model.refresh().catch(error => this._showPlotsMessage(String(error.message ?? error)));
  }

  private _buildSkeleton(): DocumentFragment {
    const trans = this._trans;
    const fragment = document.createDocumentFragment();

    const header = document.createElement('header');
    header.className = 'jp-dashdock-Sidebar-header';
    header.textContent = trans.__('Dask dashboards');
    fragment.appendChild(header);

    const form = document.createElement('form');
    form.className = 'jp-dashdock-AddSource';
    this._urlInput = document.createElement('input');
    this._urlInput.className = 'jp-dashdock-AddSource-url jp-mod-styled';
    this._urlInput.type = 'text';
    this._urlInput.placeholder = 'http://127.0.0.1:8787';
    this._urlInput.setAttribute('aria-label', trans.__('Dashboard URL'));
    this._urlInput.spellcheck = false;
    const add = document.createElement('button');
    add.type = 'submit';
    add.className = 'jp-dashdock-AddSource-button jp-mod-styled jp-mod-accept';
    add.textContent = trans.__('Add');
    form.append(this._urlInput, add);
    fragment.appendChild(form);

    this._addError = document.createElement('div');
    this._addError.className = 'jp-dashdock-AddSource-error';
    this._addError.setAttribute('role', 'alert');
    fragment.appendChild(this._addError);

    this._warnings = document.createElement('div');
    this._warnings.className = 'jp-dashdock-SourceWarnings';
    this._warnings.setAttribute('role', 'status');
    fragment.appendChild(this._warnings);

    this._sourceList = document.createElement('ul');
    this._sourceList.className = 'jp-dashdock-SourceList';
    this._sourceList.setAttribute('aria-label', trans.__('Dashboard sources'));
    fragment.appendChild(this._sourceList);

    const plotsSection = document.createElement('section');
    plotsSection.className = 'jp-dashdock-Plots';
    const plotsHeader = document.createElement('div');
    plotsHeader.className = 'jp-dashdock-Plots-header';
    this._filter = document.createElement('input');
    this._filter.type = 'search';
    this._filter.className = 'jp-dashdock-Plots-filter jp-mod-styled';
    this._filter.placeholder = trans.__('Filter plots');
    this._filter.setAttribute('aria-label', trans.__('Filter plots'));
    const layout = document.createElement('button');
    layout.className = 'jp-dashdock-Plots-layout jp-mod-styled';
    layout.dataset.action = 'layout';
    layout.textContent = trans.__('Layout');
    layout.title = trans.__('Open the default layout: task stream, progress, worker memory and graph');
    plotsHeader.append(this._filter, layout);
    this._plotList = document.createElement('div');
    this._plotList.className = 'jp-dashdock-PlotList';
    plotsSection.append(plotsHeader, this._plotList);
    fragment.appendChild(plotsSection);
    fragment.appendChild(this._workers.node);
    return fragment;
  }

  private _evtSubmit(event: Event): void {
    event.preventDefault();
    const url = this._urlInput.value.trim();
    this._addError.textContent = '';
    if (!url) {
      this._addError.textContent = this._trans.__(
        'Enter the URL of a Dask dashboard, such as http://127.0.0.1:8787.'
      );
      return;
    }
    this.node.classList.add('jp-mod-busy');
    this._model
      .add(url)
      .then(() => {
        this._urlInput.value = '';
      })
      .catch(error => {
        // Keep what was typed so the user can correct it.
        this._addError.textContent = String(error.message ?? error);
      })
      .finally(() => this.node.classList.remove('jp-mod-busy'));
  }

  private _evtClick(event: MouseEvent): void {
    const target = event.target as HTMLElement;
    const action = target.closest<HTMLElement>('[data-action]');
    if (action?.dataset.action === 'remove' && action.dataset.sourceId) {
      void this._model.remove(action.dataset.sourceId).catch(error => {
        this._addError.textContent = String(error.message ?? error);
      });
      return;
    }
    if (action?.dataset.action === 'dismiss-warning' && action.dataset.warning !== undefined) {
      this._model.dismissWarning(action.dataset.warning);
      return;
    }
    if (action?.dataset.action === 'layout' && this._model.selected) {
      void this._commands.execute(CommandIDs.openLayout, { source: this._model.selected.id });
      return;
    }
    const sourceItem = target.closest<HTMLElement>('.jp-dashdock-Source');
    if (sourceItem?.dataset.sourceId && !sourceItem.classList.contains(DISABLED_CLASS)) {
      this._model.select(sourceItem.dataset.sourceId);
      return;
    }
    const plotItem = target.closest<HTMLElement>('.jp-dashdock-Plot');
    if (plotItem && !plotItem.dataset.dashdockDragged && this._model.selected) {
      void this._commands.execute(CommandIDs.openPlot, {
        source: this._model.selected.id,
        path: plotItem.dataset.path ?? '',
        name: plotItem.dataset.name ?? ''
      });
    }
  }

  private _onModelChanged(): void {
    this._renderSources();
  }

  private _renderSources(): void {
    const trans = this._trans;
    const selected = this._model.selected;
    this._sourceList.replaceChildren(
      ...this._model.sources.map(source => {
        const item = document.createElement('li');
        item.className = 'jp-dashdock-Source';
        item.classList.toggle(SELECTED_CLASS, source.id === selected?.id);
        item.dataset.sourceId = source.id;
        item.dataset.kind = source.kind;
        item.title = Private.kindLabel(source, trans);
        const status = document.createElement('span');
        status.className = `jp-dashdock-Source-status jp-mod-${source.health.status}`;
        status.setAttribute('aria-label', Private.statusLabel(source, trans));
        status.title = Private.statusLabel(source, trans);
        const name = document.createElement('span');
        name.className = 'jp-dashdock-Source-name';
        name.textContent = source.name;
        const unsaved = document.createElement('span');
        unsaved.className = 'jp-dashdock-Source-unsaved';
        unsaved.textContent = trans.__('not saved');
        unsaved.title = source.warning ?? '';
        // Notebooks' clients and managed clusters go when they close: there is nothing to remove.
        item.append(
          status,
          name,
          ...(source.warning ? [unsaved] : []),
          ...(source.kind === 'url' ? [this._removeButton(source)] : [])
        );
        return item;
      }),
      ...this._model.disabled.map(source => this._disabledItem(source))
    );
    this._renderWarnings();
    this._workers.setSource(selected);
    if (selected?.id !== this._plotsFor) {
      this._loadPlots(selected);
    }
  }

  /**
   * A saved source that cannot be used now: listed with its reason so nothing vanishes unexplained,
   * not selectable, and removable.
   */
  private _disabledItem(source: ISource): HTMLElement {
    const trans = this._trans;
    const item = document.createElement('li');
    item.className = `jp-dashdock-Source ${DISABLED_CLASS}`;
    item.dataset.sourceId = source.id;
    item.dataset.kind = source.kind;
    item.title = source.url
      ? trans.__('%1 (disabled: %2)', source.url, source.disabled ?? '')
      : trans.__('Disabled: %1', source.disabled ?? '');
    const status = document.createElement('span');
    status.className = 'jp-dashdock-Source-status jp-mod-disabled';
    status.setAttribute('aria-label', trans.__('Disabled'));
    const text = document.createElement('span');
    text.className = 'jp-dashdock-Source-name';
    const name = document.createElement('span');
    name.textContent = source.name;
    const reason = document.createElement('span');
    reason.className = 'jp-dashdock-Source-reason';
    reason.textContent = source.disabled ?? '';
    text.append(name, reason);
    item.append(status, text, this._removeButton(source));
    return item;
  }

  private _removeButton(source: ISource): HTMLElement {
    const trans = this._trans;
    const remove = document.createElement('button');
    remove.className = 'jp-dashdock-Source-remove jp-Button jp-mod-minimal';
    remove.dataset.action = 'remove';
    remove.dataset.sourceId = source.id;
    remove.textContent = '×';
    remove.title = trans.__('Remove this source');
    remove.setAttribute('aria-label', trans.__('Remove %1', source.name));
    return remove;
  }

  /**
   * What the server says about the sources file (a file moved aside, a change not saved): these
   * would otherwise be known to its log only.
   */
  private _renderWarnings(): void {
    const trans = this._trans;
    this._warnings.replaceChildren(
      ...this._model.warnings.map(warning => {
        const message = document.createElement('p');
        message.className = 'jp-dashdock-SourceWarning';
        const text = document.createElement('span');
        text.textContent = warning;
        const dismiss = document.createElement('button');
        dismiss.className = 'jp-dashdock-SourceWarning-dismiss jp-Button jp-mod-minimal';
        dismiss.dataset.action = 'dismiss-warning';
        dismiss.dataset.warning = warning;
        dismiss.textContent = '×';
        dismiss.title = trans.__('Dismiss');
        dismiss.setAttribute('aria-label', trans.__('Dismiss this warning'));
        message.append(text, dismiss);
        return message;
      })
    );
  }

  private _loadPlots(source: ISource | null): void {
    this._plotsFor = source?.id ?? null;
    this._plots = [];
    if (!source) {
      this._showPlotsMessage(
        this._trans.__('Add a dashboard above to list its plots.')
      );
      return;
    }
    this._showPlotsMessage(this._trans.__('Loading plots…'));
    this._model
      .plots(source.id)
      .then(plots => {
        if (this._plotsFor !== source.id) {
          return; // the selection moved on while we waited
        }
        this._plots = plots;
        this._renderPlots();
      })
      .catch(error => {
        if (this._plotsFor === source.id) {
          this._plotsFor = null; // try again on the next change
          this._showPlotsMessage(String(error.message ?? error));
        }
      });
  }

  private _renderPlots(): void {
    const source = this._model.selected;
    if (!source || this._plotsFor !== source.id) {
      return;
    }
    const query = this._filter.value.trim().toLowerCase();
    const visible = this._plots.filter(plot => plot.name.toLowerCase().includes(query));
    if (!visible.length) {
      this._showPlotsMessage(
        this._plots.length ? this._trans.__('No plot matches the filter.') : this._trans.__('This dashboard lists no plots.')
      );
      return;
    }
    const groups = GROUP_ORDER.map(group => ({ group, plots: visible.filter(p => p.group === group) })).filter(
      g => g.plots.length
    );
    this._plotList.replaceChildren(
      ...groups.map(({ group, plots }) => {
        const section = document.createElement('div');
        section.className = 'jp-dashdock-PlotGroup';
        section.dataset.group = group;
        const heading = document.createElement('h3');
        heading.textContent = Private.groupLabel(group, this._trans);
        const list = document.createElement('ul');
        list.append(...plots.map(plot => this._plotItem(source, plot)));
        section.append(heading, list);
        return section;
      })
    );
  }

  private _plotItem(source: ISource, plot: IPlot): HTMLElement {
    const item = document.createElement('li');
    item.className = 'jp-dashdock-Plot';
    item.dataset.path = plot.path;
    item.dataset.name = plot.name;
    item.textContent = plot.name;
    item.title = this._trans.__('Click to open, drag to dock');
    makeDockDraggable(
      item,
      () => this._panes.create({ source: source.id, path: plot.path, name: plot.name }),
      () => plot.name
    );
    return item;
  }

  private _showPlotsMessage(text: string): void {
    const message = document.createElement('p');
    message.className = 'jp-dashdock-PlotList-message';
    message.textContent = text;
    this._plotList.replaceChildren(message);
  }

  private _model: ISourcesModel;
  private _panes: IPlotPanes;
  private _commands: CommandRegistry;
  private _trans: TranslationBundle;
  private _urlInput!: HTMLInputElement;
  private _addError!: HTMLElement;
  private _warnings!: HTMLElement;
  private _sourceList!: HTMLUListElement;
  private _filter!: HTMLInputElement;
  private _plotList!: HTMLElement;
  private _plots: IPlot[] = [];
  private _plotsFor: string | null = null;
  private _workers: WorkersSection;
}

export namespace DashdockSidebar {
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

  export function kindLabel(source: ISource, trans: TranslationBundle): string {
    switch (source.kind) {
      case 'kernel':
        return trans.__('%1 (a Dask client in notebook %2)', source.url, source.name);
      case 'cluster':
        return trans.__('%1 (a cluster this server manages)', source.url);
      default:
        return source.url;
    }
  }

  export function statusLabel(source: ISource, trans: TranslationBundle): string {
    switch (source.health.status) {
      case 'up':
        return trans.__('Scheduler reachable');
      case 'down':
        return trans.__('Scheduler unreachable: %1', source.health.message);
      default:
        return trans.__('Not checked yet');
    }
  }
}
