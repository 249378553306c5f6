/**
 * The Sources section of the sidebar: add a dashboard by URL, see the known ones with their
 * health, pick one, remove one (see model.ts for sources/).
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { Message } from '@lumino/messaging';

import { APIError, setSourceCredentials } from '../api/client';
import { ISource } from '../api/types';
import { DASHBOARD_URL_EXAMPLE } from '../api/urls';
import { ISourcesModel } from '../tokens';
import { element, KeyedParts } from '../ui/dom';
import { RovingFocus } from '../ui/roving';
import { askCredentials } from './credentials';
import {
  DISABLED_CLASS,
  disabledRow,
  SOURCE_CLASS,
  updateRow,
  usableRow
} from './rows';
import { Section } from '../ui/section';

const SECTION_CLASS = 'jp-dashdock-Sources';
const BUSY_CLASS = 'jp-mod-busy';

/**
 * The sources list and the add-a-dashboard form.
 *
 * #### Notes
 * The form is built once and the list is updated in place, so what the user types, and where the
 * focus is, survive the model's changes (a health check every few seconds).
 */
export class SourcesSection extends Section {
  constructor(options: SourcesSection.IOptions) {
    super();
    this.addClass(SECTION_CLASS);
    this._model = options.model;
    this._trans = options.trans;
    this.title.label = this._trans.__('Sources');
    this._buildForm();
    this._warnings = element('div', 'jp-dashdock-SourceWarnings', this.node);
    this._warnings.setAttribute('role', 'status');
    // A tree of one level rather than a listbox: a row holds its remove button, and an option's
    // content may hold no control.
    this._list = element('ul', 'jp-dashdock-SourceList', this.node);
    this._list.setAttribute('role', 'tree');
    this._list.setAttribute('aria-label', this._trans.__('Dashboard sources'));
    this._roving = new RovingFocus({
      container: this._list,
      rows: () =>
        Array.from(this._list.querySelectorAll<HTMLElement>(`.${SOURCE_CLASS}`))
    });
    this._items = new KeyedParts<ISource>({
      key: source => (source.disabled ? `disabled/${source.id}` : source.id),
      create: source => ({
        node: source.disabled
          ? disabledRow(source, this._trans)
          : usableRow(source, this._trans)
      }),
      update: (item, source) =>
        updateRow(
          item.node,
          source,
          source.id === this._model.selected?.id,
          this._trans
        )
    });
    this.listen('submit');
    this.listen('click');
    this.listen('keydown', this._list);
    this.listen('input', this._url);
    this.follow(this._model.changed, this._render);
    this._render();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._roving.dispose();
    super.dispose();
  }

  /**
   * Handle the DOM events of the section (delegated from its root node).
   */
  handleEvent(event: Event): void {
    switch (event.type) {
      case 'submit':
        this._evtSubmit(event);
        break;
      case 'click':
        this._evtClick(event as MouseEvent);
        break;
      case 'keydown':
        this._evtKeydown(event as KeyboardEvent);
        break;
      case 'input':
        // The error was about what the box held; the user is changing it.
        this._error.textContent = '';
        break;
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this._model.refresh().catch(error => this._showError(error));
  }

  private _buildForm(): void {
    const trans = this._trans;
    const form = element('form', 'jp-dashdock-AddSource', this.node);
    this._url = element(
      'input',
      'jp-dashdock-AddSource-url jp-mod-styled',
      form
    );
    this._url.type = 'text';
    this._url.placeholder = DASHBOARD_URL_EXAMPLE;
    this._url.setAttribute('aria-label', trans.__('Dashboard URL'));
    this._url.spellcheck = false;
    const add = element(
      'button',
      'jp-dashdock-AddSource-button jp-mod-styled jp-mod-accept',
      form
    );
    add.type = 'submit';
    add.textContent = trans.__('Add');
    this._addButton = add;
    this._error = element('div', 'jp-dashdock-AddSource-error', this.node);
    this._error.setAttribute('role', 'alert');
  }

  private _evtSubmit(event: Event): void {
    event.preventDefault();
    if (this._adding) {
      return; // one check at a time: the button says it is busy
    }
    const url = this._url.value.trim();
    this._error.textContent = '';
    if (!url) {
      this._error.textContent = this._trans.__(
        'Enter the URL of a Dask dashboard, such as http://127.0.0.1:8787.'
      );
      return;
    }
    this._setAdding(true);
    this._model
      .add(url)
      .catch(error =>
        error instanceof APIError && error.reason === 'needs-credentials'
          ? this._addWithCredentials(url, error.message)
          : Promise.reject(error)
      )
      .then(() => {
        // Typed while it was checked: another URL stays for the next Add.
        if (this._url.value.trim() === url) {
          this._url.value = '';
        }
        this._error.textContent = '';
      })
      // Keep what was typed so the user can correct it.
      .catch(error => this._showError(error))
      .finally(() => this._setAdding(false));
  }

  /** While a dashboard is checked (a host that never answers takes the server's whole timeout),
   * Add says so and takes no second click; the field stays editable. */
  private _setAdding(adding: boolean): void {
    this._adding = adding;
    this.toggleClass(BUSY_CLASS, adding);
    this._addButton.setAttribute('aria-disabled', String(adding));
    this._addButton.textContent = adding
      ? this._trans.__('Checking…')
      : this._trans.__('Add');
    this._addButton.title = adding
      ? this._trans.__('Waiting for the dashboard to answer')
      : '';
    this._url.setAttribute('aria-busy', String(adding));
  }

  /** The dashboard asks for credentials: ask the user, then add it with them. */
  private async _addWithCredentials(url: string, why: string): Promise<void> {
    for (;;) {
      const credentials = await askCredentials(url, why, this._trans);
      if (!credentials) {
        throw new APIError(why, 422);
      }
      try {
        await this._model.add(url, undefined, credentials);
        return;
      } catch (error) {
        if (
          !(error instanceof APIError) ||
          error.reason !== 'needs-credentials'
        ) {
          throw error;
        }
        why = error.message; // refused: ask again, saying so
      }
    }
  }

  private _evtClick(event: MouseEvent): void {
    const target = event.target as HTMLElement;
    const action = target.closest<HTMLElement>('[data-action]');
    if (action?.dataset.action === 'remove' && action.dataset.sourceId) {
      this._remove(action.dataset.sourceId);
      return;
    }
    if (action?.dataset.action === 'credentials' && action.dataset.sourceId) {
      void this._giveCredentials(action.dataset.sourceId);
      return;
    }
    if (
      action?.dataset.action === 'dismiss-warning' &&
      action.dataset.warning !== undefined
    ) {
      this._model.dismissWarning(action.dataset.warning);
      return;
    }
    const item = target.closest<HTMLElement>(`.${SOURCE_CLASS}`);
    if (item?.dataset.sourceId && !item.classList.contains(DISABLED_CLASS)) {
      this._model.select(item.dataset.sourceId);
    }
  }

  /** Enter or Space selects the focused source, Delete removes it (what its × button does). */
  private _evtKeydown(event: KeyboardEvent): void {
    const row = event.target as HTMLElement;
    if (!row.classList.contains(SOURCE_CLASS)) {
      return;
    }
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      if (row.dataset.sourceId && !row.classList.contains(DISABLED_CLASS)) {
        this._model.select(row.dataset.sourceId);
      }
    } else if (event.key === 'Delete') {
      if (row.dataset.sourceId && row.querySelector('[data-action="remove"]')) {
        event.preventDefault();
        const rows = Array.from(
          this._list.querySelectorAll<HTMLElement>(`.${SOURCE_CLASS}`)
        );
        const index = rows.indexOf(row);
        this._remove(row.dataset.sourceId, rows[index + 1] ?? rows[index - 1]);
      }
    }
  }

  /**
   * Remove a source; from the keyboard, focus then goes to `next` rather than out of the list.
   */
  private _remove(id: string, next?: HTMLElement): void {
    void this._model
      .remove(id)
      .then(() => {
        if (next?.isConnected && !this._list.contains(document.activeElement)) {
          this._roving.focus(next);
        }
      })
      .catch(error => this._showError(error));
  }

  /** Ask for the credentials of a source whose dashboard refuses, and give them to the server. */
  private async _giveCredentials(id: string): Promise<void> {
    const source = this._model.sources.find(s => s.id === id);
    if (!source) {
      return;
    }
    const credentials = await askCredentials(
      source.url,
      source.health.message,
      this._trans
    );
    if (!credentials) {
      return;
    }
    try {
      await setSourceCredentials(id, credentials);
      await this._model.refresh();
    } catch (error) {
      this._showError(error);
    }
  }

  private _showError(error: any): void {
    this._error.textContent = String(error?.message ?? error);
  }

  private _render(): void {
    this._items.render(this._list, [
      ...this._model.sources,
      ...this._model.disabled
    ]);
    const selected = this._model.selected;
    this._roving.update(
      selected ? (this._items.get(selected.id)?.node ?? null) : null
    );
    this._renderWarnings();
  }

  /**
   * What the server says about the sources file (a file moved aside, a change not saved): these
   * would otherwise be known to its log only.
   */
  private _renderWarnings(): void {
    const trans = this._trans;
    this._warnings.replaceChildren(
      ...this._model.warnings.map(warning => {
        const message = element('p', 'jp-dashdock-SourceWarning');
        element('span', '', message).textContent = warning;
        const dismiss = element(
          'button',
          'jp-dashdock-SourceWarning-dismiss jp-Button jp-mod-minimal',
          message
        );
        dismiss.dataset.action = 'dismiss-warning';
        dismiss.dataset.warning = warning;
        dismiss.textContent = '×';
        dismiss.title = trans.__('Dismiss');
        dismiss.setAttribute('aria-label', trans.__('Dismiss this warning'));
        return message;
      })
    );
  }

  private _model: ISourcesModel;
  private _trans: TranslationBundle;
  private _url!: HTMLInputElement;
  private _addButton!: HTMLButtonElement;
  private _adding = false;
  private _error!: HTMLElement;
  private _warnings: HTMLElement;
  private _list: HTMLUListElement;
  private _items: KeyedParts<ISource>;
  private _roving: RovingFocus;
}

export namespace SourcesSection {
  export interface IOptions {
    model: ISourcesModel;
    trans: TranslationBundle;
  }
}
