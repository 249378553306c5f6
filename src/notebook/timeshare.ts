/**
 * Where one cell's time went, group by group (see data.ts for notebook/).
 */

import { TranslationBundle } from '@jupyterlab/translation';

import { formatSeconds, ICellReport, TIME_PARTS, TimePart } from './celldata';

/** Pixels of a share bar for the whole cell's time. */
const SHARE_BAR_WIDTH = 80;

/** The parts of a cell's time as the strip names them (see TIME_PART_NAMES). */
export function timePartNames(
  trans: TranslationBundle
): Record<TimePart, string> {
  return {
    compute: trans.__('compute'),
    transfer: trans.__('transfer'),
    disk: trans.__('read from disk'),
    spill: trans.__('storing results')
  };
}

/** The label of the strip's time sums: thread time, which can exceed the cell's wall time. */
export function threadTimeLabel(
  report: ICellReport,
  trans: TranslationBundle
): string {
  return report.threads > 1
    ? trans.__(
        'Thread time, summed over %1 threads',
        report.threads.toLocaleString()
      )
    : trans.__('Thread time');
}

/**
 * The cell's own thread time by task group and part, each group's share of it, and how busy the
 * threads that ran it were with it.
 *
 * #### Notes
 * The sums come from each of the cell's tasks (the ledger adds up their spans), so they are this
 * cell's only; Dask's Fine Performance Metrics are cluster-wide and its spans own whole task
 * groups, which later cells join.
 */
export function timeShare(
  report: ICellReport,
  trans: TranslationBundle
): HTMLElement {
  const region = document.createElement('div');
  region.className = 'jp-dashdock-CellStrip-time';
  region.setAttribute('role', 'region');
  region.setAttribute('aria-label', trans.__("Where this cell's time went"));
  const total = sum(report.seconds);
  const line = document.createElement('p');
  region.append(line);
  if (total <= 0) {
    line.textContent = trans.__(
      'No time counted yet: none of this cell’s tasks has finished.'
    );
    return region;
  }
  const capacity = report.threads * report.wall;
  line.textContent =
    capacity > 0
      ? trans.__(
          '%1 of thread time on %2 worker threads in %3: they spent %4% of that time on this cell.',
          formatSeconds(total),
          report.threads.toLocaleString(),
          formatSeconds(report.wall),
          Math.round(Math.min(1, total / capacity) * 100).toLocaleString()
        )
      : trans.__('%1 of thread time.', formatSeconds(total));
  region.append(table(report, total, trans));
  return region;
}

function table(
  report: ICellReport,
  total: number,
  trans: TranslationBundle
): HTMLTableElement {
  const names = timePartNames(trans);
  const parts = TIME_PARTS.filter(part => report.seconds[part] > 0);
  const table = document.createElement('table');
  const head = table.createTHead().insertRow();
  for (const title of [
    trans.__('Task group'),
    ...parts.map(part => names[part]),
    trans.__('Share of the cell')
  ]) {
    const cell = document.createElement('th');
    cell.scope = 'col';
    cell.textContent = title;
    head.append(cell);
  }
  const body = table.createTBody();
  const groups = [...report.groupSeconds].sort(
    (a, b) => sum(b.seconds) - sum(a.seconds)
  );
  for (const group of groups) {
    const row = body.insertRow();
    const name = document.createElement('th');
    name.scope = 'row';
    name.textContent = group.name;
    row.append(name);
    for (const part of parts) {
      row.insertCell().textContent = formatSeconds(group.seconds[part]);
    }
    const share = sum(group.seconds) / total;
    const cell = row.insertCell();
    const bar = document.createElement('span');
    bar.className = 'jp-dashdock-CellStrip-share';
    bar.style.width = `${Math.round(share * SHARE_BAR_WIDTH)}px`;
    cell.append(
      bar,
      document.createTextNode(
        trans.__('%1%', Math.round(share * 100).toLocaleString())
      )
    );
  }
  return table;
}

function sum(seconds: Record<TimePart, number>): number {
  return TIME_PARTS.reduce((total, part) => total + seconds[part], 0);
}
