// A cell strip's data, checked, and the summary a saved notebook keeps (src/notebook/celldata.ts).
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { readCellData, summaryLines } from '../src/notebook/celldata';

interface ICase {
  meta: { label: string };
  report: Record<string, unknown>;
  lines: string[];
}

// Written by dashdock/kernel/cellstrip.py (tests/test_cell_summary.py checks it still is).
const CASES: ICase[] = JSON.parse(
  readFileSync(
    join(
      __dirname,
      '..',
      '..',
      '..',
      'ts-tests',
      'fixtures',
      'cell-summaries.json'
    ),
    'utf8'
  )
);
const CELL_ID = '0123456789abcdef0123456789abcdef';

function output(report: unknown, extra: Record<string, unknown> = {}): unknown {
  return {
    version: 1,
    cell_id: CELL_ID,
    label: '[7]',
    kernel_id: 'k-1',
    dashboard: 'http://127.0.0.1:8787',
    span: 'cell [7]',
    report,
    ...extra
  };
}

describe('summaryLines', () => {
  for (const [index, item] of CASES.entries()) {
    it(`says what the kernel says (case ${index + 1})`, () => {
      const data = readCellData(output(item.report));
      assert.ok(data);
      assert.deepEqual(summaryLines(data), item.lines);
    });
  }
});

describe('readCellData', () => {
  const report = CASES[0].report;

  it('reads a well-formed strip', () => {
    const data = readCellData(output(report));
    assert.equal(data?.report.tasks, 1234);
    assert.deepEqual(data?.report.groups[1], {
      name: 'boom',
      tasks: 34,
      done: 33,
      erred: 1
    });
    assert.equal(data?.kernelId, 'k-1');
  });

  it('refuses what a forged notebook may hold', () => {
    assert.equal(readCellData(output(report, { cell_id: '../x' })), null);
    assert.equal(readCellData(output({ ...report, tasks: -1 })), null);
    assert.equal(readCellData(output({ ...report, settled: 'yes' })), null);
    assert.equal(readCellData(null), null);
    const odd = readCellData(
      output(report, {
        kernel_id: '../../api/kernels',
        dashboard: 'javascript:alert(1)'
      })
    );
    assert.equal(odd?.kernelId, null);
    assert.equal(odd?.dashboard, null);
  });

  it('drops malformed groups and bounds texts', () => {
    const data = readCellData(
      output({
        ...report,
        groups: [['ok', 1, 1, 0], ['bad', 'x', 1, 0], 'nope'],
        error: { key: 'k'.repeat(10_000), exception: 1, traceback: null }
      })
    );
    assert.deepEqual(
      data?.report.groups.map(g => g.name),
      ['ok']
    );
    assert.equal(data?.report.error?.key.length, 4000);
    assert.equal(data?.report.error?.exception, '');
  });
});
