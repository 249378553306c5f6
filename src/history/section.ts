/**
 * The History section of the sidebar: recorded runs, newest first, and per source recording on or
 * off and its alerts notified or muted (see model.ts for history/).
 */

import { Dialog, showDialog } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { UUID } from '@lumino/coreutils';
import { Message } from '@lumino/messaging';

import { setSourceAlerts } from '../api/client';
import { IHistoryRun, ISource } from '../api/types';
import { CommandIDs, ISourcesModel } from '../tokens';
import { element, KeyedParts } from '../ui/dom';
import { RovingFocus } from '../ui/roving';
import { HistoryModel } from './model';
import {
  RUN_CLASS,
  runRow,
  switchRow,
  updateRunRow,
  updateSwitchRow
} from './rows';
import { Section } from '../ui/section';

const SECTION_CLASS = 'jp-dashdock-History';

/**
 * The runs list and the Record switches.
 *
 * #### Notes
 * Rows are keyed and updated in place, so the focused row keeps the focus while the poll brings
 * news. The section polls only while it is shown.
 */
export class HistorySection extends Section {
  constructor(options: HistorySection.IOptions) {
    super();
    this.addClass(SECTION_CLASS);
    this._model = options.historyModel ?? new HistoryModel();
    this._ownsModel = !options.historyModel;
    this._sources = options.model;
    this._commands = options.commands;
    this._trans = options.trans;
    const trans = this._trans;
    this.title.label = trans.__('History');

    const recording = element('div', 'jp-dashdock-Recording', this.node);
    const heading = element('h3', 'jp-dashdock-Recording-heading', recording);
    heading.id = `jp-dashdock-Recording-${UUID.uuid4()}`;
    heading.textContent = trans.__('Record');
    this._switches = element('ul', 'jp-dashdock-RecordSwitches', recording);
    this._switches.setAttribute('aria-labelledby', heading.id);
    this._error = element('div', 'jp-dashdock-History-error', this.node);
    this._error.setAttribute('role', 'alert');
    this._empty = element('p', 'jp-dashdock-History-empty', this.node);
    this._empty.textContent = trans.__(
      'Each computation of a source with a scheduler (managed clusters, notebooks’ clients) is recorded while this server runs: tasks, progress by group, worker memory, alerts. Runs appear here, and stay after their cluster is gone.'
    );
    // A tree of one level, as the sources list: a row holds its buttons, an option may not.
    this._list = element('ul', 'jp-dashdock-RunList', this.node);
    this._list.setAttribute('role', 'tree');
    this._list.setAttribute('aria-label', trans.__('Recorded runs'));
    this._roving = new RovingFocus({
      container: this._list,
      rows: () =>
        Array.from(this._list.querySelectorAll<HTMLElement>(`.${RUN_CLASS}`))
    });
    this._runs = new KeyedParts<IHistoryRun>({
      key: run => run.id,
      create: () => ({ node: runRow(this._trans) }),
      update: (part, run) => updateRunRow(part.node, run, this._trans)
    });
    this._switchParts = new KeyedParts<ISource>({
      key: source => source.id,
      create: () => ({ node: switchRow() }),
      update: (part, source) =>
        updateSwitchRow(
          part.node,
          source,
          this._model.isRecording(source.id),
          this._trans
        )
    });
    this.listen('click');
    this.listen('keydown', this._list);
    this.follow(this._model.changed, this._render);
    this.follow(this._sources.changed, this._render);
    this._render();
  }

  /** The runs this section shows. */
  get historyModel(): HistoryModel {
    return this._model;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._roving.dispose();
    if (this._ownsModel) {
      this._model.dispose();
    }
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
      case 'keydown':
        this._evtKeydown(event as KeyboardEvent);
        break;
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._model.active = true;
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this._model.active = false;
  }

  private _evtClick(event: MouseEvent): void {
    const target = event.target as HTMLElement;
    const action = target.closest<HTMLElement>('[data-action]');
    const row = target.closest<HTMLElement>(`.${RUN_CLASS}`);
    switch (action?.dataset.action) {
      case 'record':
        this._toggleRecording(action);
        return;
      case 'alerts':
        this._toggleAlerts(action);
        return;
      case 'export':
        if (row?.dataset.runId) {
          this._export(row.dataset.runId);
        }
        return;
      case 'delete':
        if (row) {
          void this._delete(row);
        }
        return;
    }
    if (row?.dataset.runId) {
      this._open(row.dataset.runId);
    }
  }

  /** Enter or Space opens the focused run, E exports its trace, Delete deletes it. */
  private _evtKeydown(event: KeyboardEvent): void {
    const row = event.target as HTMLElement;
    if (!row.classList.contains(RUN_CLASS) || !row.dataset.runId) {
      return;
    }
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      this._open(row.dataset.runId);
    } else if (event.key === 'Delete') {
      event.preventDefault();
      void this._delete(row);
    } else if (event.key === 'e' || event.key === 'E') {
      event.preventDefault();
      this._export(row.dataset.runId);
    }
  }

  private _open(id: string): void {
    const runName = this._model.runs.find(run => run.id === id)?.name;
    void this._commands
      .execute(CommandIDs.openHistory, runName ? { id, runName } : { id })
      .catch(error => this._showError(error));
  }

  private _export(id: string): void {
    void this._commands
      .execute(CommandIDs.exportTrace, { id })
      .catch(error => this._showError(error));
  }

  private async _delete(row: HTMLElement): Promise<void> {
    const id = row.dataset.runId;
    const run = this._model.runs.find(r => r.id === id);
    if (!run) {
      return;
    }
    const trans = this._trans;
    const result = await showDialog({
      title: trans.__('Delete this run?'),
      body: run.live
        ? trans.__(
            'What was recorded of %1 is deleted, and its recording stops.',
            run.name
          )
        : trans.__('What was recorded of %1 is deleted.', run.name),
      buttons: [
        Dialog.cancelButton({ label: trans.__('Cancel') }),
        Dialog.warnButton({ label: trans.__('Delete') })
      ]
    });
    if (!result.button.accept || this.isDisposed) {
      return;
    }
    const rows = Array.from(
      this._list.querySelectorAll<HTMLElement>(`.${RUN_CLASS}`)
    );
    const index = rows.indexOf(row);
    const next = rows[index + 1] ?? rows[index - 1];
    try {
      await this._model.remove(run.id);
    } catch (error) {
      this._showError(error);
      return;
    }
    // From the keyboard, the focus stays in the list rather than falling out of it.
    if (next?.isConnected) {
      this._roving.focus(next);
    }
  }

  private _toggleRecording(button: HTMLElement): void {
    const source = button.dataset.sourceId;
    if (!source || button.getAttribute('aria-busy') === 'true') {
      return;
    }
    const enable = button.getAttribute('aria-checked') !== 'true';
    button.setAttribute('aria-busy', 'true');
    this._error.textContent = '';
    this._model
      .setRecording(source, enable)
      .catch(error => this._showError(error))
      .finally(() => {
        button.removeAttribute('aria-busy');
        this._render();
      });
  }

  /** Mute or unmute a source's alerts: they are still recorded and listed, only not notified. */
  private _toggleAlerts(button: HTMLElement): void {
    const source = button.dataset.sourceId;
    if (!source || button.getAttribute('aria-busy') === 'true') {
      return;
    }
    button.setAttribute('aria-busy', 'true');
    this._error.textContent = '';
    setSourceAlerts(source, button.getAttribute('aria-checked') !== 'true')
      .then(() => this._sources.refresh())
      .catch(error => this._showError(error))
      .finally(() => {
        button.removeAttribute('aria-busy');
        this._render();
      });
  }

  private _showError(error: any): void {
    this._error.textContent = String(error?.message ?? error);
  }

  private _render(): void {
    const runs = this._model.runs;
    this._runs.render(this._list, runs);
    this._roving.update();
    this._switchParts.render(this._switches, this._sources.sources);
    this._switches.parentElement!.hidden = !this._sources.sources.length;
    this._empty.hidden = !this._model.loaded || runs.length > 0;
    if (this._model.error) {
      this._error.textContent = this._model.error;
    }
  }

  private _model: HistoryModel;
  private _ownsModel: boolean;
  private _sources: ISourcesModel;
  private _commands: CommandRegistry;
  private _trans: TranslationBundle;
  private _switches: HTMLUListElement;
  private _error: HTMLElement;
  private _empty: HTMLElement;
  private _list: HTMLUListElement;
  private _roving: RovingFocus;
  private _runs: KeyedParts<IHistoryRun>;
  private _switchParts: KeyedParts<ISource>;
}

export namespace HistorySection {
  export interface IOptions {
    /** The sources this Lab knows: each usable one gets a Record switch. */
    model: ISourcesModel;
    commands: CommandRegistry;
    trans: TranslationBundle;
    /** The runs to show; the section makes its own when none is given. */
    historyModel?: HistoryModel;
  }
}
