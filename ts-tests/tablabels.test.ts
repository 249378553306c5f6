// What a pane's tab calls its source when several are open (src/panes/tablabels.ts).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { tabSourceLabels } from '../src/panes/tablabels';

describe('tabSourceLabels', () => {
  it('calls sources on one host by their port', () => {
    const labels = tabSourceLabels(['127.0.0.1:23720', '127.0.0.1:32115']);
    assert.equal(labels.get('127.0.0.1:23720'), ':23720');
    assert.equal(labels.get('127.0.0.1:32115'), ':32115');
  });

  it('keeps whole names that share no host', () => {
    const labels = tabSourceLabels([
      '127.0.0.1:8787',
      'Cluster 1',
      'scheduler.internal:8787'
    ]);
    assert.deepEqual(
      [...labels.values()],
      ['127.0.0.1:8787', 'Cluster 1', 'scheduler.internal:8787']
    );
  });

  it('reads IPv6 hosts in brackets, and names that only look alike stay whole', () => {
    const labels = tabSourceLabels(['[::1]:8787', '[::1]:8788', 'a:b:8787']);
    assert.equal(labels.get('[::1]:8787'), ':8787');
    assert.equal(labels.get('[::1]:8788'), ':8788');
    assert.equal(labels.get('a:b:8787'), 'a:b:8787');
  });
});
