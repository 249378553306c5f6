/**
 * Numbers as people read them (see ui/dnd.ts for ui/). Pure: node runs these.
 */

import type { TranslationBundle } from '@jupyterlab/translation';

/** 1536 -> '1.5 KiB'; a value that would round to 1024 of a unit is shown in the next one. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  const shown = (value: number, unit: number) => value.toFixed(unit ? 1 : 0);
  let value = bytes;
  let unit = 0;
  while (Number(shown(value, unit)) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${shown(value, unit)} ${units[unit]}`;
}

/** A count in the reader's locale, or a dash when it is not known. */
export function formatCount(value: number | null): string {
  return value === null ? '–' : value.toLocaleString();
}

/** "1 task", "12,345 tasks": a count of tasks, in the reader's locale and language. */
export function formatTasks(
  count: number,
  trans: Pick<TranslationBundle, '_n'>
): string {
  return trans._n('%2 task', '%2 tasks', count, formatCount(count));
}
