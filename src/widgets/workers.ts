import { TranslationBundle } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';

import { APIError, listWorkers } from '../api';
import { makeDockDraggable } from '../dnd';
import { formatBytes } from '../format';
import { IPlotPanes, ISource, IWorker } from '../tokens';

/** Above this many workers the section offers a filter. */
const FILTER_FROM = 8;

/**
 * The sidebar's worker selector: the selected source's workers (loaded when the section is
 * opened), each with the pages of its own dashboard; click opens a page as a pane, drag docks it.
 *
 * #### Notes
 * A worker pane's proxy target is the worker's `host:port`; it follows the health of the source
 * it was opened from, so it says "reconnecting" when that scheduler goes away.
 */
export class WorkersSection implements IDisposable {
  constructor(options: WorkersSection.IOptions) {
    this._panes = options.panes;
    this._trans = options.trans;
    const trans = this._trans;
    this.node = document.createElement('details');
    this.node.className = 'jp-dashdock-Workers';
    const summary = document.createElement('summary');
    summary.className = 'jp-dashdock-Workers-header';
    summary.textContent = trans.__('Workers');
    this._refresh = document.createElement('button');
    this._refresh.className = 'jp-dashdock-Workers-refresh jp-Button jp-mod-minimal';
    this._refresh.textContent = '↻';
    this._refresh.title = trans.__('Ask the scheduler for its workers again');
    this._refresh.setAttribute('aria-label', trans.__('Refresh workers'));
    summary.appendChild(this._refresh);
    this._filter = document.createElement('input');
    this._filter.type = 'search';
    this._filter.className = 'jp-dashdock-Workers-filter jp-mod-styled';
    this._filter.placeholder = trans.__('Filter workers');
    this._filter.setAttribute('aria-label', trans.__('Filter workers'));
    this._list = document.createElement('ul');
    this._list.className = 'jp-dashdock-WorkerList';
    this.node.append(summary, this._filter, this._list);
    this.node.addEventListener('toggle', this._onToggle);
    this._refresh.addEventListener('click', this._onRefresh);
    this._filter.addEventListener('input', this._render);
    this.setSource(null);
  }

  readonly node: HTMLDetailsElement;

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this.node.removeEventListener('toggle', this._onToggle);
    this._refresh.removeEventListener('click', this._onRefresh);
    this._filter.removeEventListener('input', this._render);
  }

  /** Show the workers of another source (loaded now if the section is open). */
  setSource(source: ISource | null): void {
    if (source?.id === this._source?.id) {
      return;
    }
    this._source = source;
    this._workers = [];
    this.node.hidden = !source;
    this._filter.value = '';
    this._message(this._trans.__('Open to ask the scheduler for its workers.'));
    if (source && this.node.open) {
      void this._load();
    }
  }

  private _onToggle = (): void => {
    if (this.node.open && !this._workers.length) {
      void this._load();
    }
  };

  private _onRefresh = (event: MouseEvent): void => {
    event.preventDefault(); // a click in the summary would also close the section
    this.node.open = true;
    void this._load();
  };

  private async _load(): Promise<void> {
    const source = this._source;
    if (!source) {
      return;
    }
    this._message(this._trans.__('Asking the scheduler…'));
    try {
      const workers = await listWorkers(source.id);
      if (this._source?.id !== source.id) {
        return; // the selection moved on
      }
      this._workers = workers;
      this._render();
    } catch (error) {
      if (this._source?.id === source.id) {
        this._message(error instanceof APIError ? error.message : String(error));
      }
    }
  }

  private _render = (): void => {
    const trans = this._trans;
    this._filter.hidden = this._workers.length < FILTER_FROM;
    const query = this._filter.value.trim().toLowerCase();
    const shown = this._workers.filter(w => `${w.name} ${w.address}`.toLowerCase().includes(query));
    if (!shown.length) {
      this._message(
        this._workers.length ? trans.__('No worker matches the filter.') : trans.__('The scheduler has no workers.')
      );
      return;
    }
    this._list.replaceChildren(...shown.map(worker => this._workerItem(worker)));
  };

  private _workerItem(worker: IWorker): HTMLElement {
    const trans = this._trans;
    const item = document.createElement('li');
    item.className = 'jp-dashdock-Worker';
    item.dataset.address = worker.address;
    const named = worker.name && worker.name !== worker.address;
    // LocalCluster numbers its workers: "worker 0" reads better than "0".
    const label = !named ? worker.address : /^\d+$/.test(worker.name) ? trans.__('worker %1', worker.name) : worker.name;
    const heading = document.createElement('div');
    heading.className = 'jp-dashdock-Worker-name';
    heading.textContent = label;
    heading.title = worker.address;
    const facts = document.createElement('div');
    facts.className = 'jp-dashdock-Worker-facts';
    const parts = [worker.address];
    if (worker.threads !== null) {
      parts.push(trans._n('%1 thread', '%1 threads', worker.threads));
    }
    if (worker.memory_limit) {
      parts.push(formatBytes(worker.memory_limit));
    }
    facts.textContent = parts.join(' · ');
    item.append(heading, facts);
    if (!worker.reachable) {
      item.classList.add('jp-mod-unreachable');
      const reason = document.createElement('div');
      reason.className = 'jp-dashdock-Worker-reason';
      reason.textContent = worker.reason;
      item.appendChild(reason);
      return item;
    }
    const pages = document.createElement('ul');
    pages.className = 'jp-dashdock-WorkerPages';
    for (const page of worker.pages) {
      const pageItem = document.createElement('li');
      pageItem.className = 'jp-dashdock-WorkerPage';
      pageItem.dataset.path = page.path;
      pageItem.textContent = Private.pageLabel(page.name, trans);
      pageItem.title = trans.__('Click to open, drag to dock');
      const options = (): IPlotPanes.IOptions => ({
        source: worker.dashboard!,
        path: page.path,
        follows: this._source?.id,
        name: trans.__('%1 of %2', Private.pageLabel(page.name, trans), label)
      });
      pageItem.addEventListener('click', () => {
        if (!pageItem.dataset.dashdockDragged) {
          this._panes.open(options());
        }
      });
      makeDockDraggable(pageItem, () => this._panes.create(options()), () => options().name ?? page.name);
      pages.appendChild(pageItem);
    }
    item.appendChild(pages);
    return item;
  }

  private _message(text: string): void {
    const message = document.createElement('li');
    message.className = 'jp-dashdock-WorkerList-message';
    message.textContent = text;
    this._list.replaceChildren(message);
  }

  private _panes: IPlotPanes;
  private _trans: TranslationBundle;
  private _source: ISource | null = null;
  private _workers: IWorker[] = [];
  private _filter: HTMLInputElement;
  private _refresh: HTMLButtonElement;
  private _list: HTMLUListElement;
  private _isDisposed = false;
}

export namespace WorkersSection {
  export interface IOptions {
    panes: IPlotPanes;
    trans: TranslationBundle;
  }
}

namespace Private {
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
