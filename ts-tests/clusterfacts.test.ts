// What a cluster card says of its cluster (src/clusters/facts.ts).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import type { TranslationBundle } from '@jupyterlab/translation';

import { workersFact } from '../src/clusters/facts';

const trans = {
  __: (text: string, ...args: unknown[]) =>
    text.replace(/%(\d)/g, (_: string, n: string) =>
      String(args[Number(n) - 1])
    )
} as unknown as TranslationBundle;

describe('workersFact', () => {
  it('says what a Scale set going until the workers have joined', () => {
    const cluster = { workers: 2, requested: 3, adapt: null };
    assert.equal(workersFact(cluster, trans), '2 (scaling to 3)');
    assert.equal(workersFact({ ...cluster, workers: 3 }, trans), '3');
  });

  it('gives an adaptive range instead, and a bare count when nothing more is known', () => {
    const adapting = {
      workers: 2,
      requested: 4,
      adapt: { minimum: 1, maximum: 4 }
    };
    assert.equal(workersFact(adapting, trans), '2 (adapting 1–4)');
    assert.equal(workersFact({ workers: 2, adapt: null }, trans), '2');
    assert.equal(
      workersFact({ workers: null, requested: 2, adapt: null }, trans),
      '—'
    );
  });
});
