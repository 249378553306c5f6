// The data of dashdock's notebook outputs, as a kernel (anyone's notebook) sends it
// (src/notebook/data.ts).
/* eslint-disable jupyter/no-untranslated-string -- the titles here are kernels' output, not text of dashdock's own */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import {
  IClientData,
  memoryLimit,
  readClientData,
  readPlotData
} from '../src/notebook/data';

const KERNEL = '5e1b3c4d-0a1b-4c2d-9e8f-0123456789ab';

/** What dashdock's kernel side displays for a LocalCluster (dashdock/kernel/reprs.py). */
function clusterOutput(): Record<string, unknown> {
  return {
    version: 1,
    kind: 'cluster',
    title: 'LocalCluster',
    name: 'a1b2c3',
    kernel_id: KERNEL,
    scheduler: 'tcp://127.0.0.1:36789',
    dashboard: 'http://127.0.0.1:8787',
    dashboard_link: '/user/alice/dashdock/proxy/127.0.0.1:8787/status',
    workers: 4,
    threads: 8,
    memory: 17179869184
  };
}

/** What `dashdock.show()` displays for a plot (dashdock/kernel/show.py). */
function plotOutput(): Record<string, unknown> {
  return {
    version: 1,
    dashboard: 'http://127.0.0.1:8787',
    path: '/individual-progress',
    title: 'Progress',
    height: 320,
    kernel_id: KERNEL
  };
}

describe('readClientData', () => {
  it("reads a cluster's repr", () => {
    assert.deepEqual(readClientData(clusterOutput()), {
      kind: 'cluster',
      title: 'LocalCluster',
      name: 'a1b2c3',
      kernelId: KERNEL,
      scheduler: 'tcp://127.0.0.1:36789',
      dashboard: 'http://127.0.0.1:8787',
      target: '127.0.0.1:8787',
      dashboardLink: '/user/alice/dashdock/proxy/127.0.0.1:8787/status',
      workers: 4,
      threads: 8,
      memory: 17179869184
    });
  });

  it('reads a client with only its dashboard, the rest unknown', () => {
    assert.deepEqual(readClientData({ dashboard: 'http://localhost:8787' }), {
      kind: 'client',
      title: '',
      name: '',
      kernelId: null,
      scheduler: '',
      dashboard: 'http://localhost:8787',
      target: 'localhost:8787',
      dashboardLink: 'http://localhost:8787/status',
      workers: null,
      threads: null,
      memory: null
    });
  });

  it('reads IPv6 dashboards as [v6]:port targets', () => {
    const data = readClientData({ dashboard: 'http://[::1]:8787' });
    assert.equal(data?.target, '[::1]:8787');
    assert.equal(data?.dashboardLink, 'http://[::1]:8787/status');
  });

  it('rejects what is not an object', () => {
    for (const value of [
      null,
      undefined,
      0,
      'x',
      true,
      [],
      [clusterOutput()]
    ]) {
      assert.equal(readClientData(value), null, JSON.stringify(value));
    }
  });

  it('rejects an output without a usable dashboard', () => {
    for (const dashboard of [
      undefined,
      null,
      8787,
      '',
      'http://127.0.0.1',
      'http://127.0.0.1:8787/status',
      'http://127.0.0.1:0',
      'http://127.0.0.1:65536',
      'http://127.0.0.1:123456',
      'ftp://127.0.0.1:8787',
      'javascript:alert(1)//:8787',
      'http://user@127.0.0.1:8787',
      'http://evil.com/@127.0.0.1:8787',
      'http://127.0.0.1:8787 ',
      'http://127.0.0.1:8787\n',
      `http://${'a'.repeat(254)}:8787`,
      ['http://127.0.0.1:8787']
    ]) {
      const output = { ...clusterOutput(), dashboard };
      assert.equal(readClientData(output), null, String(dashboard));
    }
  });

  it('accepts the highest port and the longest host name', () => {
    assert.equal(
      readClientData({ dashboard: 'http://127.0.0.1:65535' })?.target,
      '127.0.0.1:65535'
    );
    const host = 'a'.repeat(253);
    assert.equal(
      readClientData({ dashboard: `http://${host}:1` })?.target,
      `${host}:1`
    );
  });

  it('never keeps a dashboard link that could run script or leave for another host unsaid', () => {
    for (const link of [
      'javascript:alert(1)',
      'JAVASCRIPT:alert(1)',
      ' javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:x',
      '//evil.com/status',
      '/\\evil.com/status',
      'status',
      42,
      null
    ]) {
      const data = readClientData({ ...clusterOutput(), dashboard_link: link });
      assert.equal(
        data?.dashboardLink,
        'http://127.0.0.1:8787/status',
        String(link)
      );
    }
    const https = 'https://dask.example.org/status';
    assert.equal(
      readClientData({ ...clusterOutput(), dashboard_link: https })
        ?.dashboardLink,
      https
    );
  });

  it('turns numbers that are not counts into unknowns', () => {
    for (const bad of [
      '4',
      -1,
      2.5,
      NaN,
      Infinity,
      -Infinity,
      1e308,
      Number.MAX_SAFE_INTEGER + 2,
      true,
      {},
      [4]
    ]) {
      const data = readClientData({
        ...clusterOutput(),
        workers: bad,
        threads: bad,
        memory: bad
      });
      assert.ok(data, String(bad));
      assert.equal(data.workers, null, String(bad));
      assert.equal(data.threads, null, String(bad));
      assert.equal(data.memory, null, String(bad));
    }
    const zero = readClientData({ ...clusterOutput(), workers: 0 });
    assert.equal(zero?.workers, 0);
  });

  it('turns texts of the wrong type into empty texts and cuts long ones', () => {
    const data = readClientData({
      ...clusterOutput(),
      title: 42,
      name: { toString: () => 'x' },
      scheduler: 'tcp://' + 'x'.repeat(10_000)
    });
    assert.equal(data?.title, '');
    assert.equal(data?.name, '');
    assert.equal(data?.scheduler.length, 500);
  });

  it('reads any other kind as a client', () => {
    for (const kind of ['client', 'Cluster', 'server', undefined, 1]) {
      assert.equal(
        readClientData({ ...clusterOutput(), kind })?.kind,
        'client',
        String(kind)
      );
    }
  });

  it('keeps only kernel ids of the shape Jupyter makes', () => {
    for (const id of ['../x', 'a/b', '', 'a'.repeat(65), 7, 'id with space']) {
      assert.equal(
        readClientData({ ...clusterOutput(), kernel_id: id })?.kernelId,
        null,
        String(id)
      );
    }
  });

  it('drops extra fields, __proto__ included, and pollutes nothing', () => {
    const output = JSON.parse(
      JSON.stringify({
        ...clusterOutput(),
        extra: 'x',
        constructor: 'y'
      }).replace(
        /^\{/,
        '{"__proto__":{"polluted":true,"dashboard":"http://evil.com:80"},'
      )
    );
    const data = readClientData(output) as unknown as Record<string, unknown>;
    assert.deepEqual(Object.keys(data).sort(), [
      'dashboard',
      'dashboardLink',
      'kernelId',
      'kind',
      'memory',
      'name',
      'scheduler',
      'target',
      'threads',
      'title',
      'workers'
    ]);
    assert.equal(data.dashboard, 'http://127.0.0.1:8787');
    assert.equal(Object.getPrototypeOf(data), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('does not take a dashboard from the prototype of an output', () => {
    const output = JSON.parse(
      '{"__proto__": {"dashboard": "http://127.0.0.1:8787"}}'
    );
    assert.equal(readClientData(output), null);
  });
});

describe('readPlotData', () => {
  it('reads a plot output', () => {
    assert.deepEqual(readPlotData(plotOutput()), {
      dashboard: 'http://127.0.0.1:8787',
      target: '127.0.0.1:8787',
      path: '/individual-progress',
      title: 'Progress',
      height: 320,
      kernelId: KERNEL
    });
  });

  it('names the plot by its path and sizes it by default when the output does not', () => {
    const data = readPlotData({
      dashboard: 'http://127.0.0.1:8787',
      path: '/individual-task-stream'
    });
    assert.equal(data?.title, '/individual-task-stream');
    assert.equal(data?.height, 320);
    assert.equal(data?.kernelId, null);
  });

  it('keeps the height between 120 and 2000 pixels', () => {
    const height = (value: unknown) =>
      readPlotData({ ...plotOutput(), height: value })?.height;
    assert.equal(height(10), 120);
    assert.equal(height(0), 120);
    assert.equal(height(500), 500);
    assert.equal(height(1e9), 2000);
    assert.equal(height(1e308), 320);
    assert.equal(height(-5), 320);
    assert.equal(height('500'), 320);
    assert.equal(height(NaN), 320);
    assert.equal(height(Infinity), 320);
  });

  it('accepts only Bokeh plot paths of the dashboard', () => {
    for (const path of [
      undefined,
      '',
      '/status',
      'individual-progress',
      '/individual-progress/../../api',
      '/individual-../x',
      '/individual-Progress',
      '/individual-progress?x=1',
      '//evil.com/individual-progress',
      '/individual-progress\n',
      `/individual-${'a'.repeat(81)}`,
      ['/individual-progress']
    ]) {
      assert.equal(readPlotData({ ...plotOutput(), path }), null, String(path));
    }
    assert.equal(
      readPlotData({ ...plotOutput(), path: `/individual-${'a'.repeat(80)}` })
        ?.path.length,
      92
    );
  });

  it('rejects a plot without a usable dashboard, or no object at all', () => {
    assert.equal(
      readPlotData({ ...plotOutput(), dashboard: 'http://[::1]' }),
      null
    );
    assert.equal(readPlotData({ ...plotOutput(), dashboard: 7 }), null);
    assert.equal(readPlotData(null), null);
    assert.equal(readPlotData('/individual-progress'), null);
    assert.equal(readPlotData([plotOutput()]), null);
  });

  it('drops extra fields', () => {
    const data = readPlotData({
      ...plotOutput(),
      script: '<script>',
      src: 'x'
    });
    assert.deepEqual(Object.keys(data ?? {}).sort(), [
      'dashboard',
      'height',
      'kernelId',
      'path',
      'target',
      'title'
    ]);
  });
});

describe('memoryLimit', () => {
  const data = (workers: number | null, memory: number | null) =>
    ({ ...readClientData(clusterOutput())!, workers, memory }) as IClientData;

  it("scales the snapshot's per-worker limit to the live number of workers", () => {
    assert.equal(memoryLimit(data(4, 16 * 2 ** 30), 4), 16 * 2 ** 30);
    assert.equal(memoryLimit(data(4, 16 * 2 ** 30), 6), 24 * 2 ** 30);
    assert.equal(memoryLimit(data(4, 16 * 2 ** 30), 1), 4 * 2 ** 30);
  });

  it('is zero when no worker is left', () => {
    assert.equal(memoryLimit(data(4, 1000), 0), 0);
  });

  it('is unknown without a snapshot of workers and memory, or a live count', () => {
    assert.equal(memoryLimit(data(0, 1000), 2), null);
    assert.equal(memoryLimit(data(null, 1000), 2), null);
    assert.equal(memoryLimit(data(4, 0), 2), null);
    assert.equal(memoryLimit(data(4, null), 2), null);
    assert.equal(memoryLimit(data(4, 1000), undefined), null);
  });
});
