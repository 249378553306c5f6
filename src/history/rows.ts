/**
 * The rows of the History section: a recorded run, a source's Record and alerts switches
 * (see model.ts for history/).
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { bellIcon } from '@jupyterlab/ui-components';

import { IHistoryRun, ISource } from '../api/types';
import { element } from '../ui/dom';
import { formatCount, formatTasks } from '../ui/format';
import { formatDuration } from './window';

export const RUN_CLASS = 'jp-dashdock-Run';
const SWITCH_CLASS = 'jp-dashdock-RecordSwitch';
const ALERTS_SWITCH_CLASS = 'jp-dashdock-AlertSwitch';
const LIVE_CLASS = 'jp-mod-live';

/** A run's row: name, "recording", details, missed tasks, a problem; export and delete. */
export function runRow(trans: TranslationBundle): HTMLElement {
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

/** Bring a run's row up to date. */
export function updateRunRow(
  item: HTMLElement,
  run: IHistoryRun,
  trans: TranslationBundle
): void {
  item.dataset.runId = run.id;
  item.dataset.source = run.source;
  item.classList.toggle(LIVE_CLASS, run.live);
  // A 24-hour clock, as the History view's window and its plots' axes show times.
  const when = new Date(run.start * 1000).toLocaleString([], {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23'
  });
  const tasks = formatTasks(run.tasks, trans);
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
  item.querySelector<HTMLElement>('.jp-dashdock-Run-live')!.hidden = !run.live;
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

/** A source's Record switch and alerts switch. */
export function switchRow(): HTMLElement {
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

/** Bring a source's switches up to date (`recording`: whether its runs are recorded). */
export function updateSwitchRow(
  item: HTMLElement,
  source: ISource,
  recording: boolean,
  trans: TranslationBundle
): void {
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
