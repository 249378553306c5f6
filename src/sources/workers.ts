/**
 * The Workers section of the sidebar: the selected source's workers, each with the pages of its
 * own dashboard (see model.ts for sources/).
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { Message } from '@lumino/messaging';

import { APIError, listWorkers } from '../api/client';
import { IWorker } from '../api/types';
import { IPlotPanes, ISourcesModel } from '../tokens';
import { makeDockDraggable, wasDragged } from '../ui/dnd';
import { element, makeKeyboardClickable } from '../ui/dom';
import { formatBytes } from '../ui/format';
import { Section } from '../ui/section';

/** Above this many workers the section offers a filter. */
const FILTER_FROM = 8;

/**
 * The worker selector: click a worker's page to open it as a pane, drag it to dock it.
 *
 * #### Notes
 * The scheduler is asked for its workers only while the section is shown (the sidebar starts it
 * collapsed), and again when the selection changes or on refresh.
 *
 * A worker pane's proxy target is the worker's `host:port`; it follows the health of the source
 * it was opened from, so it says "reconnecting" when that scheduler goes away.
 */
export class WorkersSection extends Section {
  constructor(options: WorkersSection.IOptions) {
    super();
    this.addClass('jp-dashdock-Workers');
    this._model = options.model;
    this._panes = options.panes;
    this._trans = options.trans;
    const trans = this._trans;
    this.title.label = trans.__('Workers');
    this._header = element('div', 'jp-dashdock-Workers-header', this.node);
    this._filter = element(
      'input',
      'jp-dashdock-Workers-filter jp-mod-styled',
      this._header
    );
    this._filter.type = 'search';
    this._filter.placeholder = trans.__('Filter workers');
    this._filter.setAttribute('aria-label', trans.__('Filter workers'));
    const refresh = element(
      'button',
      'jp-dashdock-Workers-refresh jp-Button jp-mod-minimal',
      this._header
    );
    refresh.textContent = '↻';
    refresh.title = trans.__('Ask the scheduler for its workers again');
    refresh.setAttribute('aria-label', trans.__('Refresh workers'));
    this._list = element('ul', 'jp-dashdock-WorkerList', this.node);
    this.listen('click');
    this.listen('input', this._filter);
    this.follow(this._model.changed, this._onModelChanged);
    this._onModelChanged();
  }

  /**
   * Handle the DOM events of the section.
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

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    if (this._loadedFor !== this._sourceId) {
      void this._load();
    }
  }

  private _evtClick(event: MouseEvent): void {
    const target = event.target as HTMLElement;
    if (target.closest('.jp-dashdock-Workers-refresh')) {
      void this._load();
      return;
    }
    const page = target.closest<HTMLElement>('.jp-dashdock-WorkerPage');
    if (page && !wasDragged(page)) {
      const options = this._pageOptions(page);
      if (options) {
        this._panes.open(options);
      }
    }
  }

  /** Show the workers of another source (asked for now if the section is shown). */
  private _onModelChanged(): void {
    const id = this._model.selected?.id ?? null;
    if (id === this._sourceId) {
      return;
    }
    this._sourceId = id;
    this._loadedFor = null;
    this._workers = [];
    this._filter.value = '';
    this._filter.hidden = true;
    // Without a source there is nothing to refresh or filter: only the line saying what to do.
    this._header.hidden = !id;
    this._message(
      id
        ? this._trans.__('Open to ask the scheduler for its workers.')
        : this._trans.__('Pick a source under Sources to list its workers.')
    );
    if (id && this.isVisible) {
      void this._load();
    }
  }

  private async _load(): Promise<void> {
    const id = this._sourceId;
    if (!id) {
      return;
    }
    this._loadedFor = id;
    this._message(this._trans.__('Asking the scheduler…'));
    try {
      const workers = await listWorkers(id);
      if (this._sourceId !== id || this.isDisposed) {
        return; // the selection moved on
      }
      this._workers = workers;
      this._render();
    } catch (error) {
      if (this._sourceId === id) {
        this._loadedFor = null; // ask again when the section is shown again
        this._message(
          error instanceof APIError ? error.message : String(error)
        );
      }
    }
  }

  private _render(): void {
    const trans = this._trans;
    this._filter.hidden = this._workers.length < FILTER_FROM;
    const query = this._filter.value.trim().toLowerCase();
    const shown = this._workers.filter(w =>
      `${w.name} ${w.address}`.toLowerCase().includes(query)
    );
    if (!shown.length) {
      this._message(
        this._workers.length
          ? trans.__('No worker matches the filter.')
          : trans.__('The scheduler has no workers.')
      );
      return;
    }
    this._list.replaceChildren(
      ...shown.map(worker => this._workerItem(worker))
    );
  }

  private _workerItem(worker: IWorker): HTMLElement {
    const trans = this._trans;
    const item = element('li', 'jp-dashdock-Worker');
    item.dataset.address = worker.address;
    const heading = element('div', 'jp-dashdock-Worker-name', item);
    heading.textContent = Private.workerLabel(worker, trans);
    heading.title = worker.address;
    const parts = [worker.address];
    if (worker.threads !== null) {
      parts.push(trans._n('%1 thread', '%1 threads', worker.threads));
    }
    if (worker.memory_limit) {
      parts.push(formatBytes(worker.memory_limit));
    }
    element('div', 'jp-dashdock-Worker-facts', item).textContent =
      parts.join(' · ');
    if (!worker.reachable) {
      item.classList.add('jp-mod-unreachable');
      element('div', 'jp-dashdock-Worker-reason', item).textContent =
        worker.reason;
      return item;
    }
    const pages = element('ul', 'jp-dashdock-WorkerPages', item);
    for (const page of worker.pages) {
      const pageItem = element('li', 'jp-dashdock-WorkerPage', pages);
      pageItem.dataset.path = page.path;
      pageItem.dataset.name = page.name;
      pageItem.textContent = Private.pageLabel(page.name, trans);
      pageItem.title = trans.__('Enter or click to open, drag to dock');
      makeKeyboardClickable(pageItem);
      makeDockDraggable(
        pageItem,
        () => this._panes.create(this._pageOptions(pageItem)!),
        () => this._pageOptions(pageItem)?.name ?? page.name
      );
    }
    return item;
  }

  /** What opens the page of `pageItem`: its worker's dashboard, following the selected source. */
  private _pageOptions(pageItem: HTMLElement): IPlotPanes.IOptions | null {
    const address = pageItem.closest<HTMLElement>('.jp-dashdock-Worker')
      ?.dataset.address;
    const worker = this._workers.find(w => w.address === address);
    if (!worker?.dashboard) {
      return null;
    }
    const trans = this._trans;
    return {
      source: worker.dashboard,
      path: pageItem.dataset.path ?? '',
      follows: this._sourceId ?? undefined,
      name: trans.__(
        '%1 of %2',
        Private.pageLabel(pageItem.dataset.name ?? '', trans),
        Private.workerLabel(worker, trans)
      )
    };
  }

  private _message(text: string): void {
    const message = element('li', 'jp-dashdock-WorkerList-message');
    message.textContent = text;
    this._list.replaceChildren(message);
  }

  private _model: ISourcesModel;
  private _panes: IPlotPanes;
  private _trans: TranslationBundle;
  /** Undefined until the first model change, so the section starts with its no-source line. */
  private _sourceId: string | null | undefined = undefined;
  private _loadedFor: string | null = null;
  private _workers: IWorker[] = [];
  private _header: HTMLElement;
  private _filter: HTMLInputElement;
  private _list: HTMLUListElement;
}

export namespace WorkersSection {
  export interface IOptions {
    model: ISourcesModel;
    panes: IPlotPanes;
    trans: TranslationBundle;
  }
}

namespace Private {
  /** LocalCluster numbers its workers: "worker 0" reads better than "0". */
  export function workerLabel(
    worker: IWorker,
    trans: TranslationBundle
  ): string {
    if (!worker.name || worker.name === worker.address) {
      return worker.address;
    }
    return /^\d+$/.test(worker.name)
      ? trans.__('worker %1', worker.name)
      : worker.name;
  }

  /** The server names worker pages in English; these are the names people read. */
  export function pageLabel(name: string, trans: TranslationBundle): string {
    switch (name) {
      case 'Status':
        return trans.__('Status');
      case 'System':
        return trans.__('System');
      case 'Profile':
        return trans.__('Profile');
      case 'Profile Server':
        return trans.__('Profile Server');
      case 'Counters':
        return trans.__('Counters');
      default:
        return name;
    }
  }
}
