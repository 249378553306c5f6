// The repr's plot list, grouped as the sidebar groups it (src/notebook/groups.ts).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import type { TranslationBundle } from '@jupyterlab/translation';

import { groupLabel, PLOT_GROUPS } from '../src/api/plots';
import type { IPlot } from '../src/api/types';
import { groupPlots } from '../src/notebook/groups';

const trans = {
  __: (text: string) => `«${text}»`
} as unknown as TranslationBundle;

function plot(name: string, group: string): IPlot {
  const path = `/individual-${name.toLowerCase().replace(/ /g, '-')}`;
  return { name, group, path, description: '', url: path };
}

describe('groupPlots', () => {
  const plots = [
    plot('Task Stream', 'tasks'),
    plot('GPU Memory', 'gpu'),
    plot('Workers Memory', 'memory'),
    plot('Exceptions', 'tasks'),
    plot('Cluster Map', 'other'),
    plot('Something New', 'brand-new'),
    plot('CPU', 'workers')
  ];

  it('orders groups as the sidebar does and keeps the order within one', () => {
    const groups = groupPlots(plots, new Set());
    assert.deepEqual(
      groups.map(([group]) => group),
      ['tasks', 'memory', 'workers', 'gpu', 'other']
    );
    assert.deepEqual(
      groups[0][1].map(p => p.name),
      ['Task Stream', 'Exceptions']
    );
  });

  it('puts a group it does not know under "other"', () => {
    const other = groupPlots(plots, new Set()).find(([g]) => g === 'other');
    assert.deepEqual(
      other?.[1].map(p => p.name),
      ['Cluster Map', 'Something New']
    );
  });

  it('leaves out the plots already shown as chips, and groups left empty', () => {
    const shown = new Set(['/individual-workers-memory', '/individual-cpu']);
    const groups = groupPlots(plots, shown);
    assert.deepEqual(
      groups.map(([group]) => group),
      ['tasks', 'gpu', 'other']
    );
    assert.ok(
      groups.every(([, members]) => members.every(p => !shown.has(p.path)))
    );
  });
});

describe('groupLabel', () => {
  it('names every group the sidebar orders, through the translator', () => {
    assert.deepEqual(
      PLOT_GROUPS.map(group => groupLabel(group, trans)),
      [
        '«Custom»',
        '«Apps»',
        '«Tasks»',
        '«Memory»',
        '«Workers and system»',
        '«GPU»',
        '«Other»'
      ]
    );
    assert.equal(groupLabel('brand-new', trans), '«Other»');
  });
});
