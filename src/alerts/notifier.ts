/**
 * `AlertNotifier`: alerts as notifications in Lab's notification center, one per alert, updated in
 * place as it grows; a finished computation also on the desktop while Lab is in the background.
 */

import { Notification } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';

import { putAlertSettings } from '../api/client';
import { AlertKind, IAlert } from '../api/types';
import { actionLabel, alertActions, alertLevel, IAlertAction } from './actions';
import { AlertsModel } from './model';

/** What Lab shows of a notification's message (it cuts longer ones). */
const MESSAGE_LENGTH = 140;
/** Alerts whose notification is remembered, to update it in place. */
const SHOWN_KEPT = 1000;

export class AlertNotifier {
  constructor(options: AlertNotifier.IOptions) {
    this._model = options.model;
    this._commands = options.commands;
    this._trans = options.trans;
    this._sourceName = options.sourceName;
    this._model.arrived.connect(this._onArrived, this);
  }

  /** Whether a finished computation is also a desktop notification (when the browser allows it). */
  desktop = false;

  /** How long a toast about trouble stays on screen (0: until dismissed); good news goes in 8 s. */
  toastSeconds = 30;

  dispose(): void {
    this._model.arrived.disconnect(this._onArrived, this);
  }

  private _onArrived(_: AlertsModel, alerts: IAlert[]): void {
    for (const alert of alerts) {
      if (alert.notified) {
        this._notify(alert);
      }
    }
  }

  private _notify(alert: IAlert): void {
    const message = this._message(alert);
    const options = {
      actions: alertActions(alert).map(action => this._action(action)),
      // Each goes by itself, so toasts never pile over the panes; the notification center and
      // the alerts panel keep every alert.
      autoClose:
        alertLevel(alert.kind) === 'success'
          ? 8000
          : this.toastSeconds > 0
            ? this.toastSeconds * 1000
            : (false as const)
    };
    const type = alertLevel(alert.kind);
    const shown = this._shown.get(alert.id);
    if (
      shown === undefined ||
      !Notification.update({ id: shown, message, type, ...options })
    ) {
      this._shown.set(alert.id, Notification.emit(message, type, options));
      if (this._shown.size > SHOWN_KEPT) {
        // The oldest first: a notification that old is long gone from the center anyway.
        this._shown.delete(this._shown.keys().next().value!);
      }
    }
    if (alert.kind === 'computation-done') {
      this._desktop(alert, message);
    }
  }

  private _message(alert: IAlert): string {
    const text = `${this._sourceName(alert.source)}: ${alert.title}`;
    return text.length > MESSAGE_LENGTH
      ? `${text.slice(0, MESSAGE_LENGTH - 1)}…`
      : text;
  }

  private _action(action: IAlertAction): Notification.IAction {
    return {
      ...actionLabel(action.id, this._trans),
      callback: () => {
        void this._commands.execute(action.command, action.args);
      }
    };
  }

  private _desktop(alert: IAlert, message: string): void {
    const Desktop = window.Notification;
    if (
      !this.desktop ||
      !document.hidden ||
      Desktop === undefined ||
      Desktop.permission !== 'granted'
    ) {
      return;
    }
    const shown = new Desktop(this._trans.__('Dask computation finished'), {
      body: message,
      tag: `dashdock-${alert.id}`
    });
    shown.onclick = () => {
      window.focus();
      shown.close();
    };
  }

  private _model: AlertsModel;
  private _commands: CommandRegistry;
  private _trans: TranslationBundle;
  private _sourceName: (id: string) => string;
  private _shown = new Map<string, string>(); // alert id -> notification id
}

export namespace AlertNotifier {
  export interface IOptions {
    model: AlertsModel;
    commands: CommandRegistry;
    trans: TranslationBundle;
    /** A source's name for people (its id when it is gone). */
    sourceName: (id: string) => string;
  }
}

/**
 * Apply the alert settings now and whenever they change: desktop notifications (asking the
 * browser's permission), and the kinds and threshold the server records and notifies with.
 */
export function followAlertSettings(
  settings: ISettingRegistry.ISettings,
  notifier: AlertNotifier
): void {
  const apply = () => {
    notifier.desktop = settings.get('desktop').composite as boolean;
    notifier.toastSeconds = settings.get('toastSeconds').composite as number;
    if (notifier.desktop && window.Notification?.permission === 'default') {
      void window.Notification.requestPermission();
    }
    // The server records with the threshold and says which kinds notify.
    void putAlertSettings({
      kinds: settings.get('kinds').composite as AlertKind[],
      computationSeconds: settings.get('computationSeconds').composite as number
    }).catch(error => console.warn('dashdock: alert settings', error));
  };
  apply();
  settings.changed.connect(apply);
}
