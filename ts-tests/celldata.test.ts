// A cell strip's data, checked, and the summary a saved notebook keeps (src/notebook/celldata.ts).
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { AlertKind, IAlert } from '../src/api/types';
import {
  cellAlerts,
  ICellReport,
  readCellData,
  summaryLines
} from '../src/notebook/celldata';

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

describe('cellAlerts', () => {
  const SOURCE = 'abcdef012345';

  function report(
    submitted: number,
    wall: number,
    groups: [string, number, number, number][]
  ): ICellReport {
    const base = readCellData(output(CASES[0].report))!.report;
    const erred = groups.reduce((sum, group) => sum + group[3], 0);
    return {
      ...base,
      submitted,
      wall,
      settled: true,
      erred,
      groups: groups.map(([name, tasks, done, failed]) => ({
        name,
        tasks,
        done,
        erred: failed
      }))
    };
  }

  function alert(
    kind: AlertKind,
    time: number,
    updated: number,
    count: number,
    group = ''
  ): IAlert {
    return {
      id: `${kind}-${time}`,
      source: SOURCE,
      kind,
      time,
      updated,
      title: group ? `${group}: ${count} tasks erred` : `${kind} at ${time}`,
      detail: group ? { group } : {},
      count,
      notified: true
    };
  }

  it('leaves failures out of a clean cell run just before the failing one', () => {
    const clean = report(1000, 2, [['inc', 50, 50, 0]]);
    const failing = report(1003, 2, [['explode', 10, 0, 10]]);
    const failed = alert('task-erred', 1004, 1005, 10, 'explode');
    assert.deepEqual(cellAlerts([failed], SOURCE, clean, 2000), []);
    const shown = cellAlerts([failed], SOURCE, failing, 2000);
    assert.equal(shown.length, 1);
    assert.equal(shown[0].title, 'explode: 10 tasks erred');
  });

  it("counts a group's failures merged across cells as each cell's own", () => {
    const first = report(1000, 5, [['explode', 3, 0, 3]]);
    const between = report(1010, 5, [['inc', 8, 8, 0]]);
    const last = report(1020, 5, [['explode', 5, 0, 5]]);
    const merged = alert('task-erred', 1001, 1022, 8, 'explode');
    const [own] = cellAlerts([merged], SOURCE, first, 2000);
    assert.equal(own.count, 3);
    assert.equal(own.title, 'explode: 3 tasks erred');
    assert.equal(own.id, merged.id); // its actions act on the server's alert
    assert.deepEqual(cellAlerts([merged], SOURCE, between, 2000), []);
    assert.equal(cellAlerts([merged], SOURCE, last, 2000)[0].count, 5);
  });

  it("lists the cluster's trouble raised while the cell's work ran", () => {
    const cell = report(1000, 5, [['inc', 8, 8, 0]]);
    const during = alert('worker-lost', 1003, 1003, 1);
    const longAfter = alert('worker-lost', 1100, 1100, 1);
    const elsewhere = { ...alert('worker-lost', 1003, 1003, 1), source: 'x' };
    assert.deepEqual(
      cellAlerts([longAfter, during, elsewhere], SOURCE, cell, 2000),
      [during]
    );
  });
});
