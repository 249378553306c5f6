/**
 * The data of a cell strip (see data.ts for notebook/), checked like every notebook output, and
 * the summary text a saved notebook keeps of it (the kernel writes the same in
 * `dashdock/kernel/cellstrip.py`). Pure, so node runs it.
 */

import type { AlertKind, IAlert } from '../api/types';

const CELL_ID = /^[0-9a-f]{32}$/;
const KERNEL_ID = /^[A-Za-z0-9-]{1,64}$/;
const DASHBOARD =
  /^https?:\/\/([A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]):(\d{1,5})$/;
const MAX_GROUPS = 50;
const MAX_TEXT = 4000;

export const TIME_PARTS = ['compute', 'transfer', 'disk', 'spill'] as const;
export type TimePart = (typeof TIME_PARTS)[number];

/** Dask's actions as people read them: its "disk-write" is any slow store of a result (a
 * spill to disk, or a worker busy elsewhere), so it is not called spilling. */
export const TIME_PART_NAMES: Record<TimePart, string> = {
  compute: 'compute',
  transfer: 'transfer',
  disk: 'read from disk',
  spill: 'storing results'
};

/** Where one task group's time went (thread-seconds, as `seconds`). */
export interface IGroupSeconds {
  name: string;
  seconds: Record<TimePart, number>;
}

export interface ICellGroup {
  name: string;
  tasks: number;
  done: number;
  erred: number;
}

export interface ICellReport {
  tasks: number;
  done: number;
  erred: number;
  cancelled: number;
  settled: boolean;
  groups: ICellGroup[];
  /** When the cell's first task reached the scheduler, in the scheduler's seconds. */
  submitted: number;
  /** Seconds from then to the last task's end (or to now while it runs). */
  wall: number;
  /** The first start and last stop of the cell's finished tasks (workers' clocks), if any. */
  ran: [number, number] | null;
  /** Thread-seconds by part: each task's time added up, so it can exceed `wall`. */
  seconds: Record<TimePart, number>;
  /** The same sums per task group. */
  groupSeconds: IGroupSeconds[];
  /** How many worker threads ran the cell's tasks. */
  threads: number;
  producedBytes: number;
  movedBytes: number;
  memoryPeak: number;
  error: { key: string; exception: string; traceback: string } | null;
}

export interface ICellData {
  cellId: string;
  label: string;
  kernelId: string | null;
  /** The dashboard of the kernel's client, for the source the strip's buttons open. */
  dashboard: string | null;
  /** The Dask span the cell's work ran under (Dask's own plots filter by it). */
  span: string;
  report: ICellReport;
}

export function readCellData(value: unknown): ICellData | null {
  const data = asObject(value);
  const report = data && readCellReport(data.report);
  const cellId = data && text(data.cell_id);
  if (!data || !report || !cellId || !CELL_ID.test(cellId)) {
    return null;
  }
  const kernel = text(data.kernel_id);
  const dashboard = text(data.dashboard);
  return {
    cellId,
    label: text(data.label).slice(0, 20),
    kernelId: KERNEL_ID.test(kernel) ? kernel : null,
    dashboard: DASHBOARD.test(dashboard) ? dashboard : null,
    span: text(data.span).slice(0, 40),
    report
  };
}

export function readCellReport(value: unknown): ICellReport | null {
  const report = asObject(value);
  if (!report || typeof report.settled !== 'boolean') {
    return null;
  }
  const counts = ['tasks', 'done', 'erred', 'cancelled'].map(name =>
    count(report[name])
  );
  if (counts.some(value => value === null)) {
    return null;
  }
  const [tasks, done, erred, cancelled] = counts as number[];
  const seconds = asObject(report.seconds) ?? {};
  const error = asObject(report.error);
  return {
    tasks,
    done,
    erred,
    cancelled,
    settled: report.settled,
    groups: (Array.isArray(report.groups) ? report.groups : [])
      .slice(0, MAX_GROUPS)
      .map(readGroup)
      .filter((group): group is ICellGroup => group !== null),
    submitted: number(report.submitted),
    wall: number(report.wall),
    ran: readRan(report.ran),
    seconds: Object.fromEntries(
      TIME_PARTS.map(part => [part, number(seconds[part])])
    ) as Record<TimePart, number>,
    groupSeconds: (Array.isArray(report.group_seconds)
      ? report.group_seconds
      : []
    )
      .slice(0, MAX_GROUPS)
      .map(readGroupSeconds)
      .filter((group): group is IGroupSeconds => group !== null),
    threads: count(report.threads) ?? 0,
    producedBytes: count(report.produced_bytes) ?? 0,
    movedBytes: count(report.moved_bytes) ?? 0,
    memoryPeak: count(report.memory_peak) ?? 0,
    error: error
      ? {
          key: text(error.key),
          exception: text(error.exception),
          traceback: text(error.traceback)
        }
      : null
  };
}

/**
 * The plain-text summary of a strip, line by line, as the kernel writes it: what a saved
 * notebook shows where dashdock does not run.
 */
export function summaryLines(data: ICellData): string[] {
  const { report } = data;
  const tasks = plural(report.tasks);
  let head = `Dask, cell ${data.label}: `;
  if (report.settled) {
    const rate =
      report.wall > 0 && report.done / report.wall >= 1
        ? `, ${Math.round(report.done / report.wall).toLocaleString('en-US')} tasks/s`
        : '';
    head += `${tasks} in ${formatSeconds(report.wall)}${rate}`;
  } else {
    head += `${(report.done + report.erred).toLocaleString('en-US')} of ${tasks} done, ${formatSeconds(report.wall)} so far`;
  }
  const lines = [head];
  if (report.groups.length) {
    const groups = report.groups.map(
      g =>
        `${g.name} ${g.done.toLocaleString('en-US')}/${g.tasks.toLocaleString('en-US')}`
    );
    lines.push(`Groups: ${groups.join(', ')}`);
  }
  const spent = TIME_PARTS.filter(part => report.seconds[part] >= 0.0005).map(
    part => `${TIME_PART_NAMES[part]} ${formatSeconds(report.seconds[part])}`
  );
  if (spent.length) {
    const label =
      report.threads > 1
        ? `Thread time, summed over ${report.threads.toLocaleString('en-US')} threads`
        : 'Thread time';
    lines.push(`${label}: ${spent.join(', ')}`);
  }
  lines.push(
    `Bytes: ${bytes(report.producedBytes)} produced, ${bytes(report.movedBytes)} moved; ` +
      `cluster memory peak ${bytes(report.memoryPeak)}`
  );
  if (report.cancelled) {
    lines.push(`Cancelled: ${plural(report.cancelled)}`);
  }
  if (report.erred) {
    const first = report.error
      ? `: ${report.error.exception} in ${report.error.key}`
      : '';
    lines.push(`Errors: ${plural(report.erred)} erred${first}`);
  }
  return lines;
}

/**
 * Seconds after a cell's work ended during which an alert is still the cell's: the recorder
 * notices trouble at its next read of the scheduler (every second), or a little later when it has
 * just begun following a kernel's new cluster.
 */
export const ALERT_GRACE = 10;

/** The kinds a strip lists: trouble. The cell's own end is what the strip already says. */
const CELL_ALERT_KINDS: ReadonlySet<AlertKind> = new Set([
  'worker-lost',
  'worker-paused',
  'spilling',
  'task-erred',
  'scheduler-lost'
]);

/**
 * The alerts of `source` that belong to a cell, oldest first. Failed tasks are the cell's when its
 * own tasks of that group failed, and are counted as the cell's own (an alert merged across cells
 * counts them all): the ledger says which tasks are the cell's. Trouble of the cluster (a worker
 * lost or paused, spilling, the scheduler gone) is the cell's when it was raised or updated while
 * the cell's work ran: from its first task to its last one's end (`now` while it runs, in Unix
 * seconds) and `ALERT_GRACE` after.
 */
export function cellAlerts(
  alerts: readonly IAlert[],
  source: string,
  report: ICellReport,
  now: number
): IAlert[] {
  const start = report.submitted;
  if (start <= 0) {
    return [];
  }
  const end =
    (report.settled ? start + report.wall : Math.max(now, start)) + ALERT_GRACE;
  const during = (alert: IAlert) => alert.time <= end && alert.updated >= start;
  const shown: IAlert[] = [];
  for (const alert of alerts) {
    if (alert.source !== source || !CELL_ALERT_KINDS.has(alert.kind)) {
      continue;
    }
    if (alert.kind !== 'task-erred') {
      if (during(alert)) {
        shown.push(alert);
      }
      continue;
    }
    const group = alert.detail.group;
    const own = typeof group === 'string' ? erredOf(report, group) : 0;
    // Past the groups a report lists (MAX_GROUPS in kernel/ledger.py), the rest are summed as
    // "other": failures there, while the alert grew, may be this group's.
    const other =
      own === 0 && report.groups.length > MAX_LISTED_GROUPS && during(alert)
        ? Math.min(erredOf(report, OTHER_GROUP), alert.count)
        : 0;
    const count = own || other;
    if (count > 0) {
      shown.push({
        ...alert,
        title: `${group as string}: ${plural(count)} erred`,
        count
      });
    }
  }
  return shown.sort((a, b) => a.time - b.time);
}

/** The groups a cell's report lists before summing the rest as `OTHER_GROUP` (kernel/ledger.py). */
const MAX_LISTED_GROUPS = 12;
const OTHER_GROUP = 'other';

function erredOf(report: ICellReport, group: string): number {
  return report.groups.find(listed => listed.name === group)?.erred ?? 0;
}

/** 0.04 -> '40 ms', 2.63 -> '2.6 s', 150 -> '2.5 min' (as the kernel writes them). */
export function formatSeconds(seconds: number): string {
  if (seconds < 1) {
    return `${(seconds * 1000).toFixed(0)} ms`;
  }
  if (seconds < 120) {
    return `${seconds.toFixed(1)} s`;
  }
  return `${(seconds / 60).toFixed(1)} min`;
}

function bytes(count: number): string {
  let value = count;
  for (const unit of ['B', 'KiB', 'MiB', 'GiB']) {
    if (value < 1024 || unit === 'GiB') {
      return unit === 'B'
        ? `${value.toFixed(0)} B`
        : `${value.toFixed(1)} ${unit}`;
    }
    value /= 1024;
  }
  return `${value.toFixed(1)} GiB`;
}

function plural(count: number): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? 'task' : 'tasks'}`;
}

function readGroup(value: unknown): ICellGroup | null {
  if (!Array.isArray(value) || value.length !== 4) {
    return null;
  }
  const [name, tasks, done, erred] = value;
  const numbers = [tasks, done, erred].map(count);
  if (typeof name !== 'string' || numbers.some(n => n === null)) {
    return null;
  }
  return {
    name: name.slice(0, 200),
    tasks: numbers[0]!,
    done: numbers[1]!,
    erred: numbers[2]!
  };
}

function asObject(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.slice(0, MAX_TEXT) : '';
}

function readGroupSeconds(value: unknown): IGroupSeconds | null {
  if (!Array.isArray(value) || value.length !== TIME_PARTS.length + 1) {
    return null;
  }
  const [name, ...parts] = value;
  if (typeof name !== 'string') {
    return null;
  }
  return {
    name: name.slice(0, 200),
    seconds: Object.fromEntries(
      TIME_PARTS.map((part, i) => [part, number(parts[i])])
    ) as Record<TimePart, number>
  };
}

function readRan(value: unknown): [number, number] | null {
  if (!Array.isArray(value) || value.length !== 2) {
    return null;
  }
  const [first, last] = value.map(number);
  return first > 0 && first <= last ? [first, last] : null;
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
    ? value
    : null;
}

function number(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
    ? value
    : 0;
}
