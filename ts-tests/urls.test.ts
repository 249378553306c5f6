// Proxy URLs and dashboard links (src/api/urls.ts).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { hostAndPort, joinProxyURL, parseDashboardLink } from '../src/api/urls';

describe('joinProxyURL', () => {
  it('puts a source id below the proxy of the base URL', () => {
    assert.equal(
      joinProxyURL('/', '0123456789ab', '/individual-progress'),
      '/dashdock/proxy/0123456789ab/individual-progress'
    );
  });

  it('works under a JupyterHub base URL, with or without its trailing slash', () => {
    const url = '/user/alice/dashdock/proxy/0123456789ab/status';
    assert.equal(joinProxyURL('/user/alice/', '0123456789ab', '/status'), url);
    assert.equal(joinProxyURL('/user/alice', '0123456789ab', '/status'), url);
    assert.equal(
      joinProxyURL(
        'https://hub.example.org/user/alice/',
        '0123456789ab',
        '/status'
      ),
      'https://hub.example.org/user/alice/dashdock/proxy/0123456789ab/status'
    );
  });

  it('keeps host:port and [v6]:port targets raw: an encoded colon would not be a target', () => {
    assert.equal(
      joinProxyURL('/', '127.0.0.1:8787', '/status'),
      '/dashdock/proxy/127.0.0.1:8787/status'
    );
    assert.equal(
      joinProxyURL('/', '[::1]:8787', '/status'),
      '/dashdock/proxy/[::1]:8787/status'
    );
    assert.equal(
      joinProxyURL('/', 'dask-worker-3.cluster.local:40123', '/status'),
      '/dashdock/proxy/dask-worker-3.cluster.local:40123/status'
    );
  });

  it('ties the page to a pane through the query, encoded', () => {
    assert.equal(
      joinProxyURL('/', '0123456789ab', '/individual-graph', 'dashdock-plot-1'),
      '/dashdock/proxy/0123456789ab/individual-graph?dashdock-pane=dashdock-plot-1'
    );
    assert.equal(
      joinProxyURL('/', '0123456789ab', '/status', 'a&b=c#d'),
      '/dashdock/proxy/0123456789ab/status?dashdock-pane=a%26b%3Dc%23d'
    );
    assert.equal(
      joinProxyURL('/', '0123456789ab', '/status', ''),
      '/dashdock/proxy/0123456789ab/status'
    );
  });

  it('keeps any other source one encoded segment', () => {
    assert.equal(
      joinProxyURL('/', 'evil.com/@127.0.0.1:8787', '/status'),
      '/dashdock/proxy/evil.com%2F%40127.0.0.1%3A8787/status'
    );
    assert.equal(
      joinProxyURL('/', 'a%2fb', '/status'),
      '/dashdock/proxy/a%252fb/status'
    );
    assert.equal(
      joinProxyURL('/', 'user@127.0.0.1:8787', '/status'),
      '/dashdock/proxy/user%40127.0.0.1%3A8787/status'
    );
    assert.equal(
      joinProxyURL('/', 'a?b#c', '/status'),
      '/dashdock/proxy/a%3Fb%23c/status'
    );
  });

  it('never makes a URL with another scheme, whatever the source', () => {
    const url = joinProxyURL('/', 'javascript:alert(1)', '/status');
    assert.equal(url, '/dashdock/proxy/javascript%3Aalert(1)/status');
    assert.ok(
      joinProxyURL('', 'javascript:', '').startsWith('/dashdock/proxy/')
    );
  });

  it('refuses a dot segment, which the browser would resolve out of the proxy', () => {
    for (const [source, path] of [
      ['..', '/status'],
      ['.', '/status'],
      ['0123456789ab', '/../../api/contents'],
      ['0123456789ab', '/individual-progress/..'],
      ['0123456789ab', '/%2e%2e/api'],
      ['0123456789ab', '/.%2E/api'],
      ['0123456789ab', '/..\\..\\api']
    ]) {
      assert.throws(
        () => joinProxyURL('/user/alice/', source, path),
        /cannot name/,
        `${source} ${path}`
      );
    }
  });

  it('still accepts dots inside names', () => {
    assert.equal(
      joinProxyURL('/', '0123456789ab', '/info/main/workers.html'),
      '/dashdock/proxy/0123456789ab/info/main/workers.html'
    );
    assert.equal(
      joinProxyURL('/', '...', '/status'),
      '/dashdock/proxy/.../status'
    );
  });
});

describe('parseDashboardLink', () => {
  it('reads a source id from a proxied link', () => {
    const link = '/user/alice/dashdock/proxy/0123456789ab/status';
    assert.deepEqual(parseDashboardLink(link), {
      source: '0123456789ab',
      url: link
    });
  });

  it('reads a host:port target as a URL to add, as kernels link dashboards', () => {
    assert.deepEqual(
      parseDashboardLink('/user/alice/dashdock/proxy/127.0.0.1:8787/status'),
      { url: 'http://127.0.0.1:8787' }
    );
    assert.deepEqual(
      parseDashboardLink(
        'https://hub.example.org/user/bob/dashdock/proxy/scheduler.local:8787/status?x=1'
      ),
      { url: 'http://scheduler.local:8787' }
    );
  });

  it('reads a bracketed IPv6 target, percent-encoded or not', () => {
    assert.deepEqual(parseDashboardLink('/dashdock/proxy/[::1]:8787/status'), {
      url: 'http://[::1]:8787'
    });
    assert.deepEqual(
      parseDashboardLink('/dashdock/proxy/%5B::1%5D%3A8787/status'),
      { url: 'http://[::1]:8787' }
    );
  });

  it("passes a scheduler's own URL through as the URL to add", () => {
    assert.deepEqual(parseDashboardLink('http://127.0.0.1:8787/status'), {
      url: 'http://127.0.0.1:8787/status'
    });
    assert.deepEqual(parseDashboardLink(''), { url: '' });
  });

  it('does not read a proxy path from the query or fragment', () => {
    const link =
      'http://127.0.0.1:8787/status?next=/dashdock/proxy/0123456789ab/x';
    assert.deepEqual(parseDashboardLink(link), { url: link });
    const hash = 'http://127.0.0.1:8787/status#/dashdock/proxy/evil.com:80/';
    assert.deepEqual(parseDashboardLink(hash), { url: hash });
  });

  it('leaves a segment that is neither an id nor a target to the server to refuse', () => {
    for (const segment of [
      '..',
      '.',
      '%2e%2e',
      'evil.com%2f@127.0.0.1:8787',
      'user@127.0.0.1:8787',
      'evil.com%2F127.0.0.1:8787',
      '127.0.0.1:8787%2f..',
      '127.0.0.1:99999',
      '127.0.0.1:',
      '::1:8787',
      'javascript:alert(1)',
      '%E0%A4%A',
      'a b',
      'x'.repeat(81)
    ]) {
      const link = `/user/alice/dashdock/proxy/${segment}/status`;
      assert.deepEqual(parseDashboardLink(link), { url: link }, segment);
    }
  });

  it('passes a javascript: link through unread (never as a source or an http URL)', () => {
    const link = 'javascript:alert(document.cookie)';
    assert.deepEqual(parseDashboardLink(link), { url: link });
  });

  it('handles over-long links without reading a target out of them', () => {
    const host = `${'a'.repeat(300)}.example`;
    const link = `/dashdock/proxy/${host}:8787/status`;
    assert.deepEqual(parseDashboardLink(link), { url: link });
    const huge = `/dashdock/proxy/${'%'.repeat(200_000)}`;
    const started = Date.now();
    assert.deepEqual(parseDashboardLink(huge), { url: huge });
    assert.ok(Date.now() - started < 1000);
  });
});

describe('hostAndPort', () => {
  it('names the port a credential goes to, also when the URL implies it', () => {
    assert.equal(hostAndPort('http://127.0.0.1:8787/status'), '127.0.0.1:8787');
    assert.equal(
      hostAndPort('https://dash.example.org/status'),
      'dash.example.org:443'
    );
    assert.equal(
      hostAndPort('http://dash.example.org?x=1'),
      'dash.example.org:80'
    );
    assert.equal(hostAndPort('http://[::1]:8787/'), '[::1]:8787');
    assert.equal(hostAndPort('http://user@host:9/'), 'host:9');
  });
});
