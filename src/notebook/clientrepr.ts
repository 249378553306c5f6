/**
 * dashdock's repr of a Dask client or cluster in a notebook (see data.ts for notebook/).
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { TranslationBundle } from '@jupyterlab/translation';
import { Message } from '@lumino/messaging';
import { Poll } from '@lumino/polling';
import { Widget } from '@lumino/widgets';

import { APIError, listPlots, proxyURL, summary } from '../api/client';
import { groupLabel, KEY_PLOTS } from '../api/plots';
import { IPlot, ISummary } from '../api/types';
import { IPlotPanes, MimeTypes } from '../tokens';
import { makeDockDraggable, wasDragged } from '../ui/dnd';
import { element } from '../ui/dom';
import { formatBytes, formatCount } from '../ui/format';
import { IClientData, memoryLimit, readClientData } from './data';
import { groupPlots } from './groups';

/** How often a visible repr asks for fresh numbers (ms); it backs off while the scheduler is gone. */
const REFRESH_INTERVAL = 3000;

/** Dask's own worker table ("Scheduler Info"), which Dask's repr links to. */
const WORKERS_PAGE = '/info/main/workers.html';

/**
 * dashdock's repr of a Dask client or cluster in a notebook: the scheduler's live numbers, its
 * dashboard link and chips that open the key plots as panes (click) or where they are dropped (drag).
 *
 * #### Notes
 * "More plots" unfolds the dashboard's other plots, grouped as in the sidebar; "Worker details"
 * opens Dask's own worker table in a browser tab, as Dask's repr does.
 */
export class ClientRepr extends Widget implements IRenderMime.IRenderer {
  constructor(options: ClientRepr.IOptions) {
    super();
    this.addClass('jp-dashdock-ClientRepr');
    this._panes = options.panes;
    this._trans = options.trans;
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this._data = readClientData(model.data[MimeTypes.client]);
    this._build();
    if (this._data && !this._poll) {
      this._poll = new Poll({
        factory: () => this._refresh(),
        frequency: { interval: REFRESH_INTERVAL, backoff: true, max: 30_000 },
        standby: () => !this.isVisible || document.hidden,
        name: 'dashdock:client-repr'
      });
    }
    return Promise.resolve();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll?.dispose();
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this._poll?.refresh();
  }

  private _build(): void {
    const trans = this._trans;
    const data = this._data;
    this.node.textContent = '';
    if (!data) {
      this.node.textContent = trans.__(
        'This Dask output cannot be shown (its data is not valid).'
      );
      return;
    }
    const header = element('div', 'jp-dashdock-ClientRepr-header', this.node);
    element('span', 'jp-dashdock-ClientRepr-title', header).textContent =
      data.kind === 'cluster'
        ? (data.title || trans.__('Dask Cluster')) +
          (data.name ? ` ${data.name}` : '')
        : trans.__('Dask Client');
    this._status = element('span', 'jp-dashdock-ClientRepr-status', header);
    this._status.dataset.status = 'unknown';
    this._status.textContent = trans.__('connecting…');

    const facts = element('dl', 'jp-dashdock-ClientRepr-facts', this.node);
    const fact = (label: string, key: string) => {
      element('dt', '', facts).textContent = label;
      const value = element('dd', '', facts);
      value.dataset.fact = key;
      this._facts.set(key, value);
    };
    fact(trans.__('Scheduler'), 'scheduler');
    fact(trans.__('Workers'), 'workers');
    fact(trans.__('Threads'), 'threads');
    fact(trans.__('Memory'), 'memory');
    fact(trans.__('Tasks'), 'tasks');
    this._setFact('scheduler', data.scheduler || data.dashboard);
    this._setFact('workers', formatCount(data.workers));
    this._setFact('threads', formatCount(data.threads));
    this._setFact(
      'memory',
      data.memory !== null ? formatBytes(data.memory) : '–'
    );
    this._setFact('tasks', '–');

    const chips = element('div', 'jp-dashdock-ClientRepr-chips', this.node);
    for (const plot of KEY_PLOTS) {
      this._addChip(chips, plot.label(trans), plot.path);
    }
    const more = element(
      'button',
      'jp-dashdock-Chip jp-dashdock-Chip-all',
      chips
    );
    more.textContent = trans.__('More plots');
    more.title = trans.__(
      'Show or hide the other plots of this dashboard, by group'
    );
    more.setAttribute('aria-expanded', 'false');
    this._allPlots = element(
      'div',
      'jp-dashdock-ClientRepr-allPlots',
      this.node
    );
    this._allPlots.id = Private.listId();
    more.setAttribute('aria-controls', this._allPlots.id);
    more.addEventListener('click', () => void this._toggleAllPlots(more));

    const footer = element('div', 'jp-dashdock-ClientRepr-footer', this.node);
    element('span', '', footer).textContent = trans.__('Dashboard:') + ' ';
    this._link = element('a', 'jp-dashdock-ClientRepr-link', footer);
    this._link.target = '_blank';
    this._link.rel = 'noopener';
    this._setLink(data.dashboardLink);
    element('span', '', footer).textContent = ' · ';
    this._workersLink = element(
      'a',
      'jp-dashdock-ClientRepr-workersLink',
      footer
    );
    this._workersLink.textContent = trans.__('Worker details');
    this._workersLink.title = trans.__(
      "Open Dask's table of the workers (Scheduler Info) in a browser tab"
    );
    this._workersLink.target = '_blank';
    this._workersLink.rel = 'noopener';
    this._workersLink.href = proxyURL(this._target(), WORKERS_PAGE);
    this._message = element('div', 'jp-dashdock-ClientRepr-message', this.node);
  }

  private _addChip(
    parent: HTMLElement,
    name: string,
    path: string,
    description = ''
  ): void {
    const chip = element('button', 'jp-dashdock-Chip', parent);
    chip.textContent = name;
    chip.dataset.path = path;
    const how = this._trans.__(
      'Click to open %1 as a pane, or drag it where you want it',
      name
    );
    chip.title = description ? `${description}\n${how}` : how;
    chip.addEventListener('click', () => {
      if (!wasDragged(chip)) {
        this._panes.open({ source: this._target(), path, name });
      }
    });
    makeDockDraggable(
      chip,
      () => this._panes.create({ source: this._target(), path, name }),
      () => name
    );
  }

  /** Where plots open from: the source (which follows the notebook's cluster), else the address. */
  private _target(): string {
    return this._summary?.source?.id ?? this._data!.target;
  }

  private async _toggleAllPlots(toggle: HTMLElement): Promise<void> {
    const trans = this._trans;
    const list = this._allPlots!;
    if (toggle.getAttribute('aria-expanded') === 'true') {
      toggle.setAttribute('aria-expanded', 'false');
      list.textContent = '';
      return;
    }
    toggle.setAttribute('aria-expanded', 'true');
    const source = this._summary?.source;
    if (!source) {
      list.textContent = trans.__(
        'The plot list needs this dashboard as a source; it is not one yet.'
      );
      return;
    }
    let plots: IPlot[];
    try {
      plots = await listPlots(source.id);
    } catch (error) {
      list.textContent =
        error instanceof APIError ? error.message : String(error);
      return;
    }
    // Bail if the list was folded again while its plots were asked for.
    if (toggle.getAttribute('aria-expanded') !== 'true') {
      return;
    }
    list.textContent = '';
    const shown = new Set(KEY_PLOTS.map(plot => plot.path));
    for (const [group, members] of groupPlots(plots, shown)) {
      const section = element('div', 'jp-dashdock-ClientRepr-group', list);
      section.setAttribute('role', 'group');
      const label = element(
        'div',
        'jp-dashdock-ClientRepr-groupLabel',
        section
      );
      label.id = `${list.id}-${group}`;
      label.textContent = groupLabel(group, trans);
      section.setAttribute('aria-labelledby', label.id);
      const chips = element(
        'div',
        'jp-dashdock-ClientRepr-groupChips',
        section
      );
      for (const plot of members) {
        this._addChip(chips, plot.name, plot.path, plot.description);
      }
    }
  }

  private async _refresh(): Promise<void> {
    const data = this._data!;
    let result: ISummary;
    try {
      result = await summary(data.dashboard, data.kernelId);
    } catch (error) {
      this._showStatus('error', this._trans.__('not available'));
      this._message!.textContent =
        error instanceof APIError ? error.message : String(error);
      // A dashboard this server may not reach: its plots could not open either.
      const refused =
        error instanceof APIError &&
        (error.status === 403 || error.status === 400);
      this.node
        .querySelectorAll<HTMLButtonElement>('.jp-dashdock-Chip')
        .forEach(chip => {
          chip.disabled = refused;
        });
      return;
    }
    this._summary = result;
    if (result.source) {
      this._setLink(proxyURL(result.source.id, '/status'));
      this._workersLink!.href = proxyURL(result.source.id, WORKERS_PAGE);
    }
    const counts = result.counts;
    if (!counts) {
      this._showStatus('gone', this._trans.__('scheduler gone'));
      this._message!.textContent = result.message;
      // Rejecting makes the poll back off while the scheduler is away.
      throw new Error(result.message);
    }
    this._showStatus('live', this._trans.__('live'));
    this._message!.textContent = '';
    this._setFact('workers', formatCount(counts.workers ?? null));
    this._setFact('threads', formatCount(counts.threads ?? null));
    if (counts.stored_bytes !== undefined) {
      const limit = memoryLimit(data, counts.workers);
      this._setFact(
        'memory',
        limit
          ? this._trans.__(
              '%1 stored of %2',
              formatBytes(counts.stored_bytes),
              formatBytes(limit)
            )
          : this._trans.__('%1 stored', formatBytes(counts.stored_bytes))
      );
    }
    if (counts.tasks !== undefined) {
      const parts = [formatCount(counts.tasks)];
      if (counts.processing) {
        parts.push(this._trans.__('%1 processing', counts.processing));
      }
      if (counts.erred) {
        parts.push(this._trans.__('%1 erred', counts.erred));
      }
      this._setFact('tasks', parts.join(' · '));
    }
  }

  private _showStatus(status: string, label: string): void {
    if (status !== 'error') {
      this.node
        .querySelectorAll<HTMLButtonElement>('.jp-dashdock-Chip')
        .forEach(chip => {
          chip.disabled = false;
        });
    }
    this._status!.dataset.status = status;
    this._status!.textContent = label;
    this.node.dataset.status = status;
  }

  private _setFact(key: string, value: string): void {
    const node = this._facts.get(key);
    if (node) {
      node.textContent = value;
    }
  }

  private _setLink(href: string): void {
    this._link!.href = href;
    this._link!.textContent = href;
  }

  private _panes: IPlotPanes;
  private _trans: TranslationBundle;
  private _data: IClientData | null = null;
  private _summary: ISummary | null = null;
  private _poll: Poll | null = null;
  private _facts = new Map<string, HTMLElement>();
  private _status: HTMLElement | null = null;
  private _message: HTMLElement | null = null;
  private _link: HTMLAnchorElement | null = null;
  private _workersLink: HTMLAnchorElement | null = null;
  private _allPlots: HTMLElement | null = null;
}

export namespace ClientRepr {
  export interface IOptions {
    panes: IPlotPanes;
    trans: TranslationBundle;
  }
}

namespace Private {
  let count = 0;

  /** An id for a repr's plot list, unique in the page. */
  export function listId(): string {
    return `jp-dashdock-ClientRepr-plots-${++count}`;
  }
}
