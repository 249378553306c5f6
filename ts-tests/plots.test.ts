// What every Dask dashboard offers (src/api/plots.ts).
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';

import type { TranslationBundle } from '@jupyterlab/translation';

import { KEY_PLOTS, nameFromPath, PLOT_GROUPS } from '../src/api/plots';

// Compiled to build/ts-tests/ts-tests/: the repository is three levels up.
const root = resolve(__dirname, '../../..');

/** A translation bundle that marks what went through it. */
const trans = {
  __: (text: string) => `«${text}»`
} as unknown as TranslationBundle;

describe('nameFromPath', () => {
  it('names a Bokeh plot by its path', () => {
    assert.equal(nameFromPath('/individual-task-stream'), 'Task Stream');
    assert.equal(nameFromPath('/individual-progress'), 'Progress');
    assert.equal(nameFromPath('/individual-workers-memory'), 'Workers Memory');
  });

  it('names other dashboard pages by their last segment', () => {
    assert.equal(nameFromPath('/status'), 'Status');
    assert.equal(nameFromPath('/info/main/workers.html'), 'Workers');
    assert.equal(nameFromPath('/individual-progress/'), 'Progress');
  });

  it('keeps already capitalised words and digits', () => {
    assert.equal(nameFromPath('/individual-gpu-memory-2'), 'Gpu Memory 2');
    assert.equal(nameFromPath('/individual-CPU'), 'CPU');
  });

  it('names a path without a segment by the path itself, so a tab never goes blank', () => {
    assert.equal(nameFromPath('/'), '/');
    assert.equal(nameFromPath(''), '');
  });
});

describe('KEY_PLOTS', () => {
  it('lists the four plots of the default layout, in its order', () => {
    assert.deepEqual(
      KEY_PLOTS.map(plot => plot.path),
      [
        '/individual-task-stream',
        '/individual-progress',
        '/individual-workers-memory',
        '/individual-graph'
      ]
    );
  });

  it('matches the layout setting default (schema/panes.json)', () => {
    const schema = JSON.parse(
      readFileSync(resolve(root, 'schema/panes.json'), 'utf-8')
    );
    const layout = schema.properties.layout;
    assert.deepEqual(
      layout.default,
      KEY_PLOTS.map(plot => plot.path)
    );
    const pattern = new RegExp(layout.items.pattern);
    assert.ok(KEY_PLOTS.every(plot => pattern.test(plot.path)));
  });

  it('labels each plot through the translator', () => {
    assert.deepEqual(
      KEY_PLOTS.map(plot => plot.label(trans)),
      ['«Task Stream»', '«Progress»', '«Workers Memory»', '«Graph»']
    );
  });

  it('names each plot as the catalog of the server does (dashdock/sources/catalog.py)', () => {
    const catalog = readFileSync(
      resolve(root, 'dashdock/sources/catalog.py'),
      'utf-8'
    );
    // The catalog's featured plots are named by display_name; the key plots are among them.
    const featured = /^_FEATURED = \(([^)]*)\)/m.exec(catalog);
    assert.ok(featured, 'catalog.py defines _FEATURED');
    const names = [...featured[1].matchAll(/"([^"]+)"/g)].map(
      match => match[1]
    );
    const identity = {
      __: (text: string) => text
    } as unknown as TranslationBundle;
    for (const plot of KEY_PLOTS) {
      const label = plot.label(identity);
      assert.ok(names.includes(label), `${label} is not a catalog name`);
      // display_name drops "Individual" from Dask's title, as nameFromPath drops it from the path.
      assert.equal(label, nameFromPath(plot.path));
    }
  });
});

describe('PLOT_GROUPS', () => {
  it('is the sidebar order, with "other" last', () => {
    assert.deepEqual(
      [...PLOT_GROUPS],
      ['custom', 'apps', 'tasks', 'memory', 'workers', 'gpu', 'other']
    );
  });

  it('names the groups the server assigns (dashdock/sources/catalog.py)', () => {
    const catalog = readFileSync(
      resolve(root, 'dashdock/sources/catalog.py'),
      'utf-8'
    );
    const groups = /^GROUPS = \(([^)]*)\)/m.exec(catalog);
    assert.ok(groups, 'catalog.py defines GROUPS');
    assert.deepEqual(
      [...groups[1].matchAll(/"([a-z]+)"/g)].map(match => match[1]),
      [...PLOT_GROUPS]
    );
  });
});
