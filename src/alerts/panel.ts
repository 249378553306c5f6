/**
 * `AlertsPanel`: the recent alerts, most recently updated first, each with what it offers to do.
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { IAlert } from '../api/types';
import { element } from '../ui/dom';
import { actionLabel, alertActions, alertLevel, IAlertAction } from './actions';
import { AlertsModel } from './model';

export class AlertsPanel extends Widget {
  constructor(options: AlertsPanel.IOptions) {
    super();
    this._model = options.model;
    this._commands = options.commands;
    this._trans = options.trans;
    this._sourceName = options.sourceName;
    this.source = options.source ?? null;
    this.addClass('jp-dashdock-Alerts');
    const trans = this._trans;
    this._error = element('p', 'jp-dashdock-Alerts-error', this.node);
    this._error.setAttribute('role', 'alert');
    this._empty = element('p', 'jp-dashdock-Alerts-empty', this.node);
    this._empty.textContent = trans.__(
      'No alerts. Lost, paused or spilling workers, erring tasks, a scheduler that stops answering and long computations that finish are listed here and notified.'
    );
    this._list = element('ul', 'jp-dashdock-Alerts-list', this.node);
    this._list.setAttribute('aria-label', trans.__('Dask alerts'));
    this._model.changed.connect(this._render, this);
    this._render();
  }

  /** The source whose alerts are shown; null for every source. */
  readonly source: string | null;

  dispose(): void {
    this._model.changed.disconnect(this._render, this);
    super.dispose();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this.node.addEventListener('click', this);
  }

  protected onBeforeDetach(msg: Message): void {
    this.node.removeEventListener('click', this);
    super.onBeforeDetach(msg);
  }

  handleEvent(event: Event): void {
    const button = (event.target as HTMLElement).closest<HTMLElement>(
      'button[data-command]'
    );
    if (button && event.type === 'click') {
      void this._commands.execute(
        button.dataset.command!,
        JSON.parse(button.dataset.args!)
      );
    }
  }

  private _render(): void {
    const alerts = this._model.alerts.filter(
      alert => this.source === null || alert.source === this.source
    );
    this._error.textContent = this._model.error;
    this._error.hidden = !this._model.error;
    this._empty.hidden = alerts.length > 0 || !!this._model.error;
    this._list.replaceChildren(...alerts.map(alert => this._item(alert)));
  }

  private _item(alert: IAlert): HTMLElement {
    const trans = this._trans;
    const item = element('li', 'jp-dashdock-Alert');
    item.classList.add(`jp-mod-${alertLevel(alert.kind)}`);
    item.dataset.kind = alert.kind;
    const title = element('div', 'jp-dashdock-Alert-title', item);
    title.textContent = alert.title;
    const meta = element('div', 'jp-dashdock-Alert-meta', item);
    const first = new Date(alert.time * 1000).toLocaleString();
    const parts = [this._sourceName(alert.source), first];
    if (alert.count > 1) {
      parts.push(
        trans._n(
          '%3 time, last at %2',
          '%3 times, last at %2',
          alert.count,
          new Date(alert.updated * 1000).toLocaleTimeString(),
          alert.count.toLocaleString()
        )
      );
    }
    if (!alert.notified) {
      parts.push(trans.__('not notified'));
    }
    meta.textContent = parts.join(' · ');
    const actions = element('div', 'jp-dashdock-Alert-actions', item);
    for (const action of alertActions(alert)) {
      actions.appendChild(this._button(action, alert));
    }
    return item;
  }

  private _button(action: IAlertAction, alert: IAlert): HTMLElement {
    const trans = this._trans;
    const button = element('button', 'jp-Button jp-mod-styled jp-mod-reject');
    button.type = 'button';
    button.dataset.command = action.command;
    button.dataset.args = JSON.stringify(action.args);
    const { label, caption } = actionLabel(action.id, trans);
    button.textContent = label;
    button.title = caption;
    // The visible label is the same on every row: the accessible name says which alert it acts on.
    button.setAttribute(
      'aria-label',
      trans.__('%1: %2', button.textContent, alert.title)
    );
    return button;
  }

  private _model: AlertsModel;
  private _commands: CommandRegistry;
  private _trans: TranslationBundle;
  private _sourceName: (id: string) => string;
  private _error: HTMLElement;
  private _empty: HTMLElement;
  private _list: HTMLUListElement;
}

export namespace AlertsPanel {
  export interface IOptions {
    model: AlertsModel;
    commands: CommandRegistry;
    trans: TranslationBundle;
    sourceName: (id: string) => string;
    source?: string | null;
  }
}
