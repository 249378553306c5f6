/**
 * The parts of a cell strip, built from its data: status, group bars, details, errors, an alert's
 * row (see data.ts for notebook/).
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';

import { IAlert } from '../api/types';
import { IAlertsModel } from '../tokens';
import { formatBytes } from '../ui/format';
import { formatSeconds, ICellData, TIME_PARTS } from './celldata';
import { threadTimeLabel, timePartNames } from './timeshare';

/** Groups shown as bars; the others are counted in one line. */
const SHOWN_GROUPS = 8;

/** The strip's status: tasks, time and rate, done or so far. */
export function cellStatus(data: ICellData, trans: TranslationBundle): string {
  const { report } = data;
  const rate =
    report.wall > 0 && report.done / report.wall >= 1
      ? trans.__(
          '%1 tasks/s',
          Math.round(report.done / report.wall).toLocaleString()
        )
      : '';
  const parts = report.settled
    ? [
        report.tasks === 1
          ? trans.__('1 task')
          : trans.__('%1 tasks', report.tasks.toLocaleString()),
        formatSeconds(report.wall),
        rate
      ]
    : [
        trans.__(
          '%1 of %2 tasks',
          (report.done + report.erred).toLocaleString(),
          report.tasks.toLocaleString()
        ),
        trans.__('%1 so far', formatSeconds(report.wall)),
        rate
      ];
  return parts.filter(Boolean).join(' · ');
}

/** A bar per task group (the first few), and how many more there are. */
export function groupBars(
  data: ICellData,
  trans: TranslationBundle
): HTMLElement {
  const list = make('div', { className: 'jp-dashdock-CellStrip-groups' });
  const shown = data.report.groups.slice(0, SHOWN_GROUPS);
  for (const group of shown) {
    const row = make('div', { className: 'jp-dashdock-CellStrip-group' });
    const bar = make('div', { className: 'jp-dashdock-CellStrip-bar' });
    bar.setAttribute('role', 'progressbar');
    bar.setAttribute('aria-label', group.name);
    bar.setAttribute('aria-valuemin', '0');
    bar.setAttribute('aria-valuemax', String(group.tasks));
    bar.setAttribute('aria-valuenow', String(group.done + group.erred));
    const width = (n: number) =>
      `${group.tasks ? (100 * n) / group.tasks : 0}%`;
    const done = make('span', { className: 'jp-dashdock-CellStrip-done' });
    done.style.width = width(group.done);
    const erred = make('span', {
      className: 'jp-dashdock-CellStrip-erred'
    });
    erred.style.width = width(group.erred);
    bar.append(done, erred);
    const counts =
      `${group.done.toLocaleString()} / ${group.tasks.toLocaleString()}` +
      (group.erred
        ? ' ' + trans.__('(%1 erred)', group.erred.toLocaleString())
        : '');
    row.append(
      make('span', {
        className: 'jp-dashdock-CellStrip-name',
        textContent: group.name,
        title: group.name
      }),
      bar,
      make('span', {
        className: 'jp-dashdock-CellStrip-count',
        textContent: counts
      })
    );
    list.append(row);
  }
  const hidden = data.report.groups.length - shown.length;
  if (hidden > 0) {
    list.append(
      make('div', {
        className: 'jp-dashdock-CellStrip-note',
        textContent: trans._n('and %1 more group', 'and %1 more groups', hidden)
      })
    );
  }
  return list;
}

/** A settled cell's thread time, bytes, peak memory and cancelled tasks. */
export function cellDetails(
  data: ICellData,
  trans: TranslationBundle
): HTMLElement {
  const { report } = data;
  const names = timePartNames(trans);
  const spent = TIME_PARTS.filter(part => report.seconds[part] > 0).map(
    part => `${names[part]} ${formatSeconds(report.seconds[part])}`
  );
  const details = make('div', {
    className: 'jp-dashdock-CellStrip-details'
  });
  if (spent.length) {
    details.append(
      make('span', {
        textContent: trans.__(
          '%1: %2',
          threadTimeLabel(report, trans),
          spent.join(' · ')
        )
      })
    );
  }
  details.append(
    make('span', {
      textContent: trans.__(
        'Bytes: %1 produced · %2 moved',
        formatBytes(report.producedBytes),
        formatBytes(report.movedBytes)
      )
    }),
    make('span', {
      textContent: trans.__(
        'Peak cluster memory: %1',
        formatBytes(report.memoryPeak)
      )
    })
  );
  if (report.cancelled) {
    details.append(
      make('span', {
        textContent: trans.__(
          'Cancelled: %1',
          report.cancelled.toLocaleString()
        )
      })
    );
  }
  return details;
}

/** How many tasks erred, the first one's exception and traceback. */
export function cellErrors(
  data: ICellData,
  trans: TranslationBundle
): HTMLElement {
  const { report } = data;
  const box = make('div', { className: 'jp-dashdock-CellStrip-error' });
  const first = report.error;
  const text = first
    ? trans._n(
        '%4 task erred. First: %2 in %3',
        '%4 tasks erred. First: %2 in %3',
        report.erred,
        first.exception,
        first.key,
        report.erred.toLocaleString()
      )
    : trans._n(
        '%2 task erred',
        '%2 tasks erred',
        report.erred,
        report.erred.toLocaleString()
      );
  box.append(make('div', { textContent: text }));
  if (first?.traceback) {
    const details = make('details');
    details.append(
      make('summary', { textContent: trans.__('Traceback') }),
      make('pre', { textContent: first.traceback })
    );
    box.append(details);
  }
  return box;
}

/** One alert's row: its title, count and actions (the focused action keeps the focus). */
export function alertRow(
  row: HTMLElement,
  alert: IAlert,
  alerts: IAlertsModel,
  commands: CommandRegistry,
  trans: TranslationBundle
): void {
  row.dataset.kind = alert.kind;
  const title = make('span', {
    className: 'jp-dashdock-CellStrip-alertTitle',
    textContent: alert.title,
    title: alert.title
  });
  const count = make('span', {
    className: 'jp-dashdock-CellStrip-count',
    textContent:
      alert.count > 1
        ? trans._n(
            '%2 time',
            '%2 times',
            alert.count,
            alert.count.toLocaleString()
          )
        : ''
  });
  const buttons = alerts.actions(alert, trans).map(action => {
    const button = make('button', {
      className: 'jp-Button jp-mod-minimal jp-dashdock-CellStrip-button',
      textContent: action.label,
      title: action.caption,
      type: 'button'
    });
    // The same label on every row: the accessible name says which alert it acts on.
    button.setAttribute(
      'aria-label',
      trans.__('%1: %2', action.label, alert.title)
    );
    button.dataset.action = action.id;
    button.addEventListener('click', () => {
      void commands.execute(action.command, action.args);
    });
    return button;
  });
  const focused = row.contains(document.activeElement)
    ? (document.activeElement as HTMLElement).dataset.action
    : undefined;
  row.replaceChildren(title, count, ...buttons);
  if (focused) {
    buttons.find(button => button.dataset.action === focused)?.focus();
  }
}

/** A strip's button named `name` (its `data-action`), calling `action` when clicked. */
export function stripButton(
  name: string,
  label: string,
  title: string,
  action: () => void
): HTMLButtonElement {
  const button = make('button', {
    className: 'jp-Button jp-mod-minimal jp-dashdock-CellStrip-button',
    textContent: label,
    title,
    type: 'button'
  });
  button.dataset.action = name;
  button.addEventListener('click', action);
  return button;
}

/** The settled summary as HTML, for the output's `text/html` (what other frontends show). */
export function summaryHTML(lines: readonly string[]): string {
  const html = make('div', { className: 'dashdock-cell-summary' });
  html.style.cssText = 'font-size: 12px; line-height: 1.5';
  lines.forEach(line => html.append(make('div', { textContent: line })));
  return html.outerHTML;
}

/** A new element with these properties (class, text, title...). */
export function make<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  properties: Partial<HTMLElementTagNameMap[K]> = {}
): HTMLElementTagNameMap[K] {
  return Object.assign(document.createElement(tag), properties);
}
