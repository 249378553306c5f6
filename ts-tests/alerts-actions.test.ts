// What an alert offers to do, and how alerts are kept as they arrive (src/alerts/actions.ts).
/* eslint-disable jupyter/no-untranslated-string -- alert titles come from the server, not text of the frontend */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import {
  alertActions,
  alertLevel,
  historyWindow,
  mergeAlerts
} from '../src/alerts/actions';
import { IAlert } from '../src/api/types';

function alert(fields: Partial<IAlert>): IAlert {
  return {
    id: 'a1',
    source: '0123456789ab',
    kind: 'worker-lost',
    time: 1000,
    updated: 1000,
    title: 'Worker tcp://127.0.0.1:4001 left',
    detail: {},
    count: 1,
    notified: true,
    ...fields
  };
}

describe('alertActions', () => {
  it('offers a worker trouble the Workers Memory plot of its source, then its history', () => {
    const actions = alertActions(alert({ kind: 'worker-paused' }));
    assert.deepEqual(
      actions.map(a => [a.id, a.command, a.args.path]),
      [
        ['workers-memory', 'dashdock:open-plot', '/individual-workers-memory'],
        ['history', 'dashdock:open-history', undefined]
      ]
    );
    assert.equal(actions[0].args.source, '0123456789ab');
  });

  it('offers erred tasks the Exceptions plot', () => {
    const [first] = alertActions(alert({ kind: 'task-erred' }));
    assert.equal(first.id, 'exceptions');
    assert.equal(first.args.path, '/individual-exceptions');
  });

  it('offers a scheduler coming back only its history', () => {
    assert.deepEqual(
      alertActions(alert({ kind: 'scheduler-back' })).map(a => a.id),
      ['history']
    );
  });
});

describe('historyWindow', () => {
  it('spans an alert from a little before it first happened to a little after it last did', () => {
    assert.deepEqual(historyWindow(alert({ time: 1000, updated: 1200 })), {
      start: 970,
      end: 1230
    });
  });

  it('spans a finished computation from its start to its end', () => {
    const done = alert({
      kind: 'computation-done',
      detail: { start: 500, end: 800 }
    });
    assert.deepEqual(historyWindow(done), { start: 495, end: 805 });
  });
});

describe('alertLevel', () => {
  it('makes trouble an error or a warning and good news a success', () => {
    assert.equal(alertLevel('task-erred'), 'error');
    assert.equal(alertLevel('spilling'), 'warning');
    assert.equal(alertLevel('computation-done'), 'success');
  });
});

describe('mergeAlerts', () => {
  it('replaces an updated alert in place and keeps the most recently updated first', () => {
    const known = [
      alert({ id: 'b', updated: 5 }),
      alert({ id: 'a', updated: 3 })
    ];
    const merged = mergeAlerts(
      known,
      [alert({ id: 'a', updated: 9, count: 7 })],
      10
    );
    assert.deepEqual(
      merged.map(a => [a.id, a.count]),
      [
        ['a', 7],
        ['b', 1]
      ]
    );
  });

  it('keeps at most the limit', () => {
    const many = Array.from({ length: 5 }, (_, i) =>
      alert({ id: String(i), updated: i })
    );
    assert.deepEqual(
      mergeAlerts([], many, 2).map(a => a.id),
      ['4', '3']
    );
  });
});
