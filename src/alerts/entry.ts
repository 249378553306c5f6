/**
 * The alerts' entry in the Dask sidebar: a button that opens the alerts panel, with how many
 * there are (see model.ts for alerts/).
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { bellIcon } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { CommandIDs, IAlertsModel } from '../tokens';

/**
 * "Alerts (N)" in the sidebar's header, so the panel is found without the command palette.
 */
export class AlertsEntry extends Widget {
  constructor(options: AlertsEntry.IOptions) {
    super({ node: document.createElement('button') });
    this._model = options.model;
    this._commands = options.commands;
    this._trans = options.trans;
    const button = this.node as HTMLButtonElement;
    button.type = 'button';
    button.className = 'jp-Button jp-mod-minimal jp-dashdock-AlertsEntry';
    bellIcon.element({ container: button, tag: 'span', elementSize: 'small' });
    this._label = document.createElement('span');
    button.append(this._label);
    this._model.changed.connect(this._render, this);
    this._render();
  }

  handleEvent(event: Event): void {
    if (event.type === 'click') {
      void this._commands.execute(CommandIDs.openAlerts);
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
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

  private _render(): void {
    const count = this._model.alerts.length;
    this._label.textContent = count
      ? this._trans.__('Alerts (%1)', count.toLocaleString())
      : this._trans.__('Alerts');
    this.node.title = this._trans.__(
      'The recent alerts of the Dask schedulers this Lab follows'
    );
  }

  private _model: IAlertsModel;
  private _commands: CommandRegistry;
  private _trans: TranslationBundle;
  private _label: HTMLSpanElement;
}

export namespace AlertsEntry {
  export interface IOptions {
    model: IAlertsModel;
    commands: CommandRegistry;
    trans: TranslationBundle;
  }
}
