// A finding in the reader's language, from its kind and evidence (src/ui/findingtext.ts).
/* eslint-disable jupyter/no-untranslated-string -- the server's words are inputs and expectations here */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import type { TranslationBundle } from '@jupyterlab/translation';

import { findingWords, formatSeconds } from '../src/ui/findingtext';

// Lab's null translator: %1, %2, ... filled in; _n picks by count, its count being %1.
const fill = (text: string, args: unknown[]) =>
  text.replace(/%(\d)/g, (_: string, n: string) => String(args[Number(n) - 1]));
const trans = {
  __: (text: string, ...args: unknown[]) => fill(text, args),
  _n: (one: string, many: string, n: number, ...args: unknown[]) =>
    fill(n === 1 ? one : many, [n, ...args])
} as unknown as TranslationBundle;

const server = {
  title: 'server title',
  detail: 'server detail',
  advice: 'server advice'
};

describe('findingWords', () => {
  it("says the server's sentence for each kind, from its evidence", () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [
        'small-tasks',
        { tasks: 938, median_seconds: 0.0073, gap_seconds: 1.2 },
        "39 % of thread time went to Dask's overhead between tasks (938 tasks, median 7.3 ms)"
      ],
      [
        'straggler',
        { tail_seconds: 3.0312, tasks: [{ key: 'x' }] },
        '39 % of thread time was idle in the last 3.03 s while 1 long task ran'
      ],
      [
        'spilling',
        {
          spans: 12,
          seconds: 2.5,
          workers: ['a', 'b'],
          worker_count: 2,
          spilled_bytes: 1536
        },
        '39 % of thread time went to reading and writing spilled data: 1.5 KiB on 2 workers'
      ],
      [
        'worker-lost',
        { recomputed: 1, workers: { 'tcp://a': 'killed' } },
        '39 % of thread time went to computing again what 1 lost worker held'
      ],
      [
        'scheduler-bound',
        {
          saturated_seconds: 340.4,
          scheduler_cpu_max: 97.3,
          loop_interval_max: 0.25,
          cpu_threshold: 80,
          loop_threshold: 0.1
        },
        '39 % of thread time was idle while the scheduler was saturated for 340 s'
      ],
      [
        'low-parallelism',
        { threads: 2, mean_busy_threads: 1.1 },
        '39 % of thread time was idle: fewer tasks ran than the 2 threads could'
      ]
    ];
    for (const [kind, evidence, title] of cases) {
      const words = findingWords(trans, {
        ...server,
        kind,
        share: 0.391,
        evidence
      });
      assert.equal(words.title, title);
      assert.notEqual(words.detail, server.detail, kind);
      assert.notEqual(words.advice, server.advice, kind);
    }
  });

  it('fills in the numbers of the detail', () => {
    const words = findingWords(trans, {
      ...server,
      kind: 'scheduler-bound',
      share: 0.2,
      evidence: {
        saturated_seconds: 4,
        scheduler_cpu_max: 97.3,
        loop_interval_max: 0.25,
        cpu_threshold: 80,
        loop_threshold: 0.1
      }
    });
    assert.match(words.detail, /at 80 % of a core or more \(at most 97 %\)/);
    assert.match(words.detail, /every 100 ms or slower \(at worst 250 ms;/);
  });

  it('names the task that held the end, and the ends of several computations', () => {
    const longest = { key: "('sleep', 50)", seconds: 8, group_median: 0.1 };
    const one = findingWords(trans, {
      ...server,
      kind: 'straggler',
      share: 0.38,
      evidence: { tail_seconds: 7.98, ends: 1, long_tasks: 1, tasks: [longest] }
    });
    assert.equal(
      one.title,
      '38 % of thread time was idle in the last 7.98 s while 1 long task ran'
    );
    assert.equal(
      one.detail,
      "Idle threads at the end, while at most a quarter of them were busy. The longest: ('sleep', 50), 8.00 s against its group's median of 100.0 ms."
    );
    const two = findingWords(trans, {
      ...server,
      kind: 'straggler',
      share: 0.1,
      evidence: { tail_seconds: 12, ends: 2, long_tasks: 3, tasks: [longest] }
    });
    assert.equal(
      two.title,
      '10 % of thread time was idle at the end of 2 computations (12.00 s in all) while 3 long tasks ran'
    );
  });

  it('says "between workers" once for transfers, and counts the workers in the detail', () => {
    const words = findingWords(trans, {
      ...server,
      kind: 'transfer',
      share: 0.12,
      evidence: {
        spans: 40,
        seconds: 2.5,
        workers: ['a', 'b'],
        worker_count: 2
      }
    });
    assert.equal(
      words.title,
      '12 % of thread time went to moving data between workers'
    );
    assert.equal(
      words.detail,
      '40 transfers to tasks on 2 workers (red in the Task Stream) lasting 2.50 s in all.'
    );
  });

  it('advises on time off the CPU by the threads a worker runs', () => {
    const advice = (threads: number) =>
      findingWords(trans, {
        ...server,
        kind: 'non-cpu',
        share: 0.6,
        evidence: {
          thread_noncpu_seconds: 6,
          thread_cpu_seconds: 1,
          threads_per_worker: threads
        }
      }).advice;
    assert.match(advice(1), /^Each worker ran one task at a time/);
    assert.match(advice(4), /Use processes rather than threads/);
  });

  it("keeps the server's words for a kind it does not know, or evidence it cannot read", () => {
    const unknown = findingWords(trans, {
      ...server,
      kind: 'new-kind',
      share: 0.5,
      evidence: {}
    });
    assert.deepEqual(unknown, server);
    const partial = findingWords(trans, {
      ...server,
      kind: 'small-tasks',
      share: 0.5,
      evidence: { tasks: 'many' }
    });
    assert.equal(partial.title, server.title);
    assert.equal(partial.detail, server.detail);
    assert.notEqual(partial.advice, server.advice); // the kind's advice needs no evidence
  });
});

describe('formatSeconds', () => {
  it('writes seconds as the server does', () => {
    assert.deepEqual([0.0073, 2.5, 340.4, 0.00001, 3.0312].map(formatSeconds), [
      '7.3 ms',
      '2.50 s',
      '340 s',
      '< 0.1 ms',
      '3.03 s'
    ]);
  });
});
