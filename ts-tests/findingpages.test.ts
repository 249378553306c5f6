// Where a finding is shown: its page, and the window brushed for it (src/history/findingpages.ts).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import type { IFinding } from '../src/api/types';
import { findingWindow, pageOf } from '../src/history/findingpages';

const finding = (kind: string, start: number, end: number): IFinding =>
  ({ kind, start, end }) as unknown as IFinding;

describe('findingWindow', () => {
  it("widens a short memory finding to the recorder's samples, about its middle", () => {
    // 0.4 s of disk writes: the memory page, sampled once a second, would be empty.
    const spilling = finding('spilling', 100, 100.4);
    assert.equal(pageOf(spilling), 'memory');
    assert.deepEqual(findingWindow(spilling), { start: 97.7, end: 102.7 });
  });

  it('keeps the stretch of a finding the Task Stream shows, and of a long one', () => {
    assert.deepEqual(findingWindow(finding('straggler', 100, 100.4)), {
      start: 100,
      end: 100.4
    });
    assert.deepEqual(findingWindow(finding('memory-pause', 100, 130)), {
      start: 100,
      end: 130
    });
  });
});
