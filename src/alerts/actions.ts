/**
 * alerts/: what the recorder noticed, as Lab notifications and a panel listing them.
 *
 * Owns the alerts model (model.ts: polled from the server), the notifications (notifier.ts), the
 * panel (panel.ts) and its command (commands.ts); a source's mute switch sits beside its Record
 * switch (history/section.ts). Imports api/, ui/ and tokens.ts only, as every feature directory.
 *
 * This file is pure (no DOM, no Lab): what an alert offers to do, and how it is shown.
 */

import type { TranslationBundle } from '@jupyterlab/translation';

import { IAlert, AlertKind } from '../api/types';
import { CommandIDs } from '../tokens';

/**
 * One thing a user can do from an alert: run `command` with `args`.
 */
export interface IAlertAction {
  id: 'workers-memory' | 'exceptions' | 'history';
  command: string;
  args: { [key: string]: string | number };
}

const WORKER_KINDS: ReadonlySet<AlertKind> = new Set([
  'worker-lost',
  'worker-paused',
  'spilling'
]);

/** Seconds of history shown before and after what an alert is about. */
export const HISTORY_MARGIN = 30;

/**
 * What an alert offers: the plot that shows the trouble, and the history around it.
 */
export function alertActions(alert: IAlert): IAlertAction[] {
  const actions: IAlertAction[] = [];
  if (WORKER_KINDS.has(alert.kind)) {
    actions.push({
      id: 'workers-memory',
      command: CommandIDs.openPlot,
      args: { source: alert.source, path: '/individual-workers-memory' }
    });
  } else if (alert.kind === 'task-erred') {
    actions.push({
      id: 'exceptions',
      command: CommandIDs.openPlot,
      args: { source: alert.source, path: '/individual-exceptions' }
    });
  }
  actions.push({
    id: 'history',
    command: CommandIDs.openHistory,
    args: { source: alert.source, ...historyWindow(alert) }
  });
  return actions;
}

/**
 * An action's label and its longer caption, for people.
 */
export function actionLabel(
  id: IAlertAction['id'],
  trans: TranslationBundle
): { label: string; caption: string } {
  switch (id) {
    case 'workers-memory':
      return {
        label: trans.__('Worker Memory'),
        caption: trans.__('Open the Workers Memory plot of this source')
      };
    case 'exceptions':
      return {
        label: trans.__('Exceptions'),
        caption: trans.__('Open the Exceptions plot of this source')
      };
    case 'history':
      return {
        label: trans.__('Show in history'),
        caption: trans.__('Open the recorded history around this alert')
      };
  }
}

/**
 * The window of history around an alert: a finished computation's whole span, else from a little
 * before it first happened to a little after it last did.
 */
export function historyWindow(alert: IAlert): { start: number; end: number } {
  const { start, end } = alert.detail;
  if (
    alert.kind === 'computation-done' &&
    typeof start === 'number' &&
    typeof end === 'number'
  ) {
    return { start: start - 5, end: end + 5 };
  }
  return {
    start: alert.time - HISTORY_MARGIN,
    end: alert.updated + HISTORY_MARGIN
  };
}

/**
 * How loud a kind is, in the notification center's types.
 */
export function alertLevel(
  kind: AlertKind
): 'error' | 'warning' | 'success' | 'info' {
  switch (kind) {
    case 'worker-lost':
    case 'task-erred':
    case 'scheduler-lost':
      return 'error';
    case 'worker-paused':
    case 'spilling':
      return 'warning';
    case 'scheduler-back':
    case 'computation-done':
      return 'success';
  }
}

/**
 * Alerts merged by id (an update replaces what was known), most recently updated first, at most
 * `limit` kept.
 */
export function mergeAlerts(
  known: readonly IAlert[],
  arrived: readonly IAlert[],
  limit: number
): IAlert[] {
  const byId = new Map(known.map(alert => [alert.id, alert]));
  for (const alert of arrived) {
    byId.set(alert.id, alert);
  }
  return [...byId.values()]
    .sort((a, b) => b.updated - a.updated)
    .slice(0, limit);
}
