/**
 * The History section of the sidebar: recorded runs, newest first, and per source recording on or
 * off and its alerts notified or muted (see model.ts for history/).
 */

import { Dialog, showDialog } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { bellIcon } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { UUID } from '@lumino/coreutils';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { setSourceAlerts } from '../api/client';
import { IHistoryRun, ISource } from '../api/types';
import { CommandIDs, ISourcesModel } from '../tokens';
import { element, KeyedParts } from '../ui/dom';
import { formatCount } from '../ui/format';
import { RovingFocus } from '../ui/roving';
import { HistoryModel } from './model';
import { formatDuration } from './window';

const SECTION_CLASS = 'jp-dashdock-History';
const RUN_CLASS = 'jp-dashdock-Run';
const SWITCH_CLASS = 'jp-dashdock-RecordSwitch';
const ALERTS_SWITCH_CLASS = 'jp-dashdock-AlertSwitch';
const LIVE_CLASS = 'jp-mod-live';

/**
 * The runs list and the Record switches.
 *
 * #### Notes
 * Rows are keyed and updated in place, so the focused row keeps the focus while the poll brings
 * news. The section polls only while it is shown.
 */
export class HistorySection extends Widget {
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
      create: () => ({ node: this._runItem() }),
      update: (part, run) => this._updateRun(part.node, run)
    });
    this._switchParts = new KeyedParts<ISource>({
      key: source => source.id,
      create: () => ({ node: this._switchItem() }),
      update: (part, source) => this._updateSwitch(part.node, source)
    });
    this._model.changed.connect(this._render, this);
    this._sources.changed.connect(this._render, this);
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
    this._model.changed.disconnect(this._render, this);
    this._sources.changed.disconnect(this._render, this);
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

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this.node.addEventListener('click', this);
    this._list.addEventListener('keydown', this);
  }

  protected onBeforeDetach(msg: Message): void {
    this.node.removeEventListener('click', this);
    this._list.removeEventListener('keydown', this);
    super.onBeforeDetach(msg);
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

  private _runItem(): HTMLElement {
    const trans = this._trans;
    const item = element('li', RUN_CLASS);
    item.setAttribute('role', 'treeitem');
    item.setAttribute('aria-keyshortcuts', 'Enter E Delete');
    const text = element('div', 'jp-dashdock-Run-text', item);
    const title = element('div', 'jp-dashdock-Run-title', text);
    element('span', 'jp-dashdock-Run-name', title);
    const live = element('span', 'jp-dashdock-Run-live', title);
    live.textContent = trans.__('recording');
    element('div', 'jp-dashdock-Run-details', text);
    const missed = element('div', 'jp-dashdock-Run-missed', text);
    missed.hidden = true;
    const problem = element('div', 'jp-dashdock-Run-problem', text);
    problem.hidden = true;
    for (const [action, label, tooltip] of [
      ['export', '⤓', trans.__('Download the Chrome trace of this run (E)')],
      ['delete', '×', trans.__('Delete this run (Delete)')]
    ]) {
      const button = element(
        'button',
        `jp-dashdock-Run-${action} jp-Button jp-mod-minimal`,
        item
      );
      button.type = 'button';
      button.dataset.action = action;
      button.textContent = label;
      button.title = tooltip;
      // One tab stop per list: the keyboard uses the row's keys.
      button.tabIndex = -1;
    }
    return item;
  }

  private _updateRun(item: HTMLElement, run: IHistoryRun): void {
    const trans = this._trans;
    item.dataset.runId = run.id;
    item.dataset.source = run.source;
    item.classList.toggle(LIVE_CLASS, run.live);
    const when = new Date(run.start * 1000).toLocaleString([], {
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit'
    });
    const tasks = trans.__('%1 tasks', formatCount(run.tasks));
    // A run being recorded has no length yet (one shown would be stale between polls).
    const details = run.end
      ? trans.__(
          '%1 · %2 · %3',
          when,
          formatDuration(run.end - run.start, trans),
          tasks
        )
      : trans.__('since %1 · %2', when, tasks);
    const missed = run.missed
      ? trans.__('missed %1', formatCount(run.missed))
      : '';
    item.querySelector('.jp-dashdock-Run-name')!.textContent = run.name;
    item.querySelector<HTMLElement>('.jp-dashdock-Run-live')!.hidden =
      !run.live;
    item.querySelector('.jp-dashdock-Run-details')!.textContent = details;
    const missedNode = item.querySelector<HTMLElement>(
      '.jp-dashdock-Run-missed'
    )!;
    missedNode.hidden = !run.missed;
    missedNode.textContent = missed;
    // What went wrong reading this source's scheduler (a reply too big, a recorder that died).
    const problemNode = item.querySelector<HTMLElement>(
      '.jp-dashdock-Run-problem'
    )!;
    problemNode.hidden = !run.problem;
    problemNode.textContent = run.problem ?? '';
    missedNode.title = run.missed
      ? trans.__(
          'The scheduler dropped %1 tasks before they could be read; the History view marks where.',
          formatCount(run.missed)
        )
      : '';
    item.title = trans.__(
      '%1\nEnter or click to open its History view',
      run.name
    );
    // Named here, not from its content, which would read the buttons' symbols too.
    const parts = [run.name, run.live ? trans.__('recording') : '', details];
    item.setAttribute(
      'aria-label',
      [...parts.filter(Boolean), missed].filter(Boolean).join(', ')
    );
    item
      .querySelector('.jp-dashdock-Run-export')!
      .setAttribute('aria-label', trans.__('Export the trace of %1', run.name));
    item
      .querySelector('.jp-dashdock-Run-delete')!
      .setAttribute('aria-label', trans.__('Delete %1', run.name));
  }

  private _switchItem(): HTMLElement {
    const item = element('li', 'jp-dashdock-RecordSwitches-item');
    const label = element('div', 'jp-dashdock-RecordSwitches-label', item);
    element('span', 'jp-dashdock-RecordSwitches-name', label);
    element('div', 'jp-dashdock-RecordSwitches-why', label).hidden = true;
    const alerts = element('button', `${ALERTS_SWITCH_CLASS} jp-Button`, item);
    alerts.type = 'button';
    alerts.setAttribute('role', 'switch');
    alerts.dataset.action = 'alerts';
    bellIcon.element({ container: alerts, tag: 'span' });
    const button = element('button', `${SWITCH_CLASS} jp-Button`, item);
    button.type = 'button';
    button.setAttribute('role', 'switch');
    button.dataset.action = 'record';
    element('span', 'jp-dashdock-RecordSwitch-track', button);
    return item;
  }

  private _updateSwitch(item: HTMLElement, source: ISource): void {
    const trans = this._trans;
    const recording = this._model.isRecording(source.id);
    item.querySelector('.jp-dashdock-RecordSwitches-name')!.textContent =
      source.name;
    // A source the history cannot record says why, and offers no switch that could not act.
    const why = item.querySelector<HTMLElement>(
      '.jp-dashdock-RecordSwitches-why'
    )!;
    why.textContent = source.unrecorded ?? '';
    why.hidden = !source.unrecorded;
    for (const control of item.querySelectorAll<HTMLElement>('button')) {
      control.hidden = !!source.unrecorded;
    }
    const button = item.querySelector<HTMLElement>(`.${SWITCH_CLASS}`)!;
    button.dataset.sourceId = source.id;
    if (button.getAttribute('aria-busy') !== 'true') {
      button.setAttribute('aria-checked', String(recording));
    }
    button.setAttribute('aria-label', trans.__('Record %1', source.name));
    button.title = recording
      ? trans.__('Recording %1: click to stop', source.name)
      : trans.__('Not recording %1: click to record it', source.name);
    const alerts = item.querySelector<HTMLElement>(`.${ALERTS_SWITCH_CLASS}`)!;
    alerts.dataset.sourceId = source.id;
    const notifying = source.alerts !== false;
    if (alerts.getAttribute('aria-busy') !== 'true') {
      alerts.setAttribute('aria-checked', String(notifying));
    }
    alerts.setAttribute(
      'aria-label',
      trans.__('Notify alerts of %1', source.name)
    );
    alerts.title = notifying
      ? trans.__(
          'Alerts of %1 notify: click to mute them (they are still listed)',
          source.name
        )
      : trans.__('Alerts of %1 are muted: click to notify them', source.name);
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
