/**
 * The alerts' entry in the Dask sidebar: a button that opens the alerts panel, with how many
 * there are (see model.ts for alerts/).
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { bellIcon } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';

import { CommandIDs, IAlertsModel } from '../tokens';
import { Section } from '../ui/section';

/**
 * The bell and how many alerts there are (named "Alerts (N)") in the sidebar's header, so the panel is found without the command palette. A
 * `Section` for its plumbing: the click while attached, the model until disposed.
 */
export class AlertsEntry extends Section {
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
    this.listen('click');
    this.follow(this._model.changed, this._render);
    this._render();
  }

  handleEvent(event: Event): void {
    if (event.type === 'click') {
      void this._commands.execute(CommandIDs.openAlerts);
    }
  }

  private _render(): void {
    const count = this._model.alerts.length;
    const name = count
      ? this._trans.__('Alerts (%1)', count.toLocaleString())
      : this._trans.__('Alerts');
    // With alerts, the bell and their number: "Alerts (1,234)" would push the sidebar's name out
    // of a sidebar of Lab's default width ("DASK DASHBO…").
    this._label.textContent = count ? count.toLocaleString() : name;
    this.node.setAttribute('aria-label', name);
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
