// Unit tests for pure frontend modules: compiled by tsconfig.test.json, run by `node --test`.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { formatBytes } from '../src/ui/format';

describe('formatBytes', () => {
  it('keeps small sizes in bytes', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(1023), '1023 B');
  });

  it('switches to binary units with one decimal', () => {
    assert.equal(formatBytes(1024), '1.0 KiB');
    assert.equal(formatBytes(1536), '1.5 KiB');
    assert.equal(formatBytes(5 * 1024 ** 3), '5.0 GiB');
  });

  it('stops at the largest unit', () => {
    assert.equal(formatBytes(2048 * 1024 ** 4), '2048.0 TiB');
  });
});
