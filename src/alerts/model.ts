/**
 * `AlertsModel`: the alerts the server lists, polled; what arrived since the last poll is signalled.
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { APIError, listAlerts } from '../api/client';
import { IAlert } from '../api/types';
import { IAlertsModel } from '../tokens';
import { actionLabel, alertActions, mergeAlerts } from './actions';

/** Alerts kept in the Lab (the server keeps more, with their runs). */
const KEPT = 500;

export class AlertsModel implements IAlertsModel {
  /**
   * Polls every `interval` ms, also while Lab is hidden: a computation finishing while the user is
   * elsewhere is the point of alerts.
   */
  constructor(interval = 3000) {
    this._interval = interval;
    this._poll = new Poll({
      factory: () => this._fetch(),
      frequency: { interval, backoff: true, max: 60_000 },
      standby: 'never',
      name: 'dashdock:alerts'
    });
  }

  /** The alerts known, most recently updated first. */
  get alerts(): readonly IAlert[] {
    return this._alerts;
  }

  /** Why alerts cannot be listed (history is off, the store cannot be read); '' when they can. */
  get error(): string {
    return this._error;
  }

  /** Emitted when the list or the error changed. */
  get changed(): ISignal<AlertsModel, void> {
    return this._changed;
  }

  /**
   * Alerts new or updated since the last poll. The first poll only learns what was there: it is
   * old news for someone who just opened Lab.
   */
  get arrived(): ISignal<AlertsModel, IAlert[]> {
    return this._arrived;
  }

  /** What an alert offers, labelled: the same actions its notification and the panel show. */
  actions(alert: IAlert, trans: TranslationBundle): IAlertsModel.IAction[] {
    return alertActions(alert).map(action => ({
      ...action,
      ...actionLabel(action.id, trans)
    }));
  }

  refresh(): Promise<void> {
    return this._poll.refresh();
  }

  dispose(): void {
    this._poll.dispose();
    Signal.clearData(this);
  }

  private async _fetch(): Promise<void> {
    let fresh: IAlert[];
    try {
      fresh = await listAlerts(this._since);
    } catch (error) {
      const message = error instanceof APIError ? error.message : String(error);
      if (message !== this._error) {
        this._error = message;
        this._changed.emit();
      }
      if (error instanceof APIError && error.status === 404) {
        // History is off (alerts ride on it): ask again rarely, in case the server changes.
        this._poll.frequency = { ...this._poll.frequency, interval: 60_000 };
        return;
      }
      throw error;
    }
    const first = this._since === undefined;
    // The server's clock, not ours: `since` compares with what it wrote.
    this._since = Math.max(this._since ?? 0, ...fresh.map(a => a.updated));
    const recovered = !!this._error;
    if (recovered) {
      this._error = '';
      this._poll.frequency = {
        ...this._poll.frequency,
        interval: this._interval
      };
    }
    if (!first && !fresh.length) {
      if (recovered) {
        this._changed.emit();
      }
      return;
    }
    this._alerts = mergeAlerts(this._alerts, fresh, KEPT);
    this._changed.emit();
    if (!first && fresh.length) {
      this._arrived.emit(fresh);
    }
  }

  private _interval: number;
  private _poll: Poll;
  private _alerts: IAlert[] = [];
  private _since: number | undefined = undefined;
  private _error = '';
  private _changed = new Signal<AlertsModel, void>(this);
  private _arrived = new Signal<AlertsModel, IAlert[]>(this);
}
