// Numbers as people read them (src/ui/format.ts).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import type { TranslationBundle } from '@jupyterlab/translation';

import { formatBytes, formatCount, formatTasks } from '../src/ui/format';

describe('formatBytes', () => {
  it('keeps small sizes in bytes', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(1023), '1023 B');
  });

  it('switches to binary units with one decimal', () => {
    assert.equal(formatBytes(1024), '1.0 KiB');
    assert.equal(formatBytes(1536), '1.5 KiB');
    assert.equal(formatBytes(5 * 1024 ** 3), '5.0 GiB');
    assert.equal(formatBytes(16 * 1024 ** 3 + 512 * 1024 ** 2), '16.5 GiB');
  });

  it('never shows 1024 of a unit: that is one of the next', () => {
    assert.equal(formatBytes(1024 ** 2 - 1), '1.0 MiB');
    assert.equal(formatBytes(1024 ** 2 - 60), '1023.9 KiB');
    assert.equal(formatBytes(1024 ** 3 - 1), '1.0 GiB');
  });

  it('stops at the largest unit', () => {
    assert.equal(formatBytes(1024 ** 4), '1.0 TiB');
    assert.equal(formatBytes(2048 * 1024 ** 4), '2048.0 TiB');
  });
});

describe('formatCount', () => {
  it('shows a dash when the count is not known', () => {
    assert.equal(formatCount(null), '–');
  });

  it('shows a count in the locale, zero included', () => {
    assert.equal(formatCount(0), '0');
    assert.equal(formatCount(7), '7');
    assert.equal(formatCount(1234567), (1234567).toLocaleString());
    assert.match(formatCount(1234567), /^1\D?234\D?567$/);
  });
});

describe('formatTasks', () => {
  // Gettext's rule for English: %1 is the count, %2 the count as shown.
  const trans = {
    _n: (one: string, many: string, n: number, shown: string) =>
      (n === 1 ? one : many).replace('%1', String(n)).replace('%2', shown)
  } as unknown as TranslationBundle;

  it('says one task, not "1 tasks"', () => {
    assert.equal(formatTasks(1, trans), '1 task');
    assert.equal(formatTasks(0, trans), '0 tasks');
    assert.equal(
      formatTasks(12345, trans),
      `${(12345).toLocaleString()} tasks`
    );
  });
});
