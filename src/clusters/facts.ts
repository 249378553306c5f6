/**
 * What a cluster card says of its cluster, in words (pure; see card.ts for clusters/).
 */

import type { TranslationBundle } from '@jupyterlab/translation';

import type { ICluster } from '../api/types';

/**
 * The Workers fact: how many there are, and while more or fewer were asked for than have joined
 * ("2 (scaling to 3)"), what a click on Scale set going; an adaptive range says so instead.
 */
export function workersFact(
  cluster: Pick<ICluster, 'workers' | 'requested' | 'adapt'>,
  trans: Pick<TranslationBundle, '__'>
): string {
  const workers = cluster.workers ?? '—';
  if (cluster.adapt) {
    return trans.__(
      '%1 (adapting %2–%3)',
      workers,
      cluster.adapt.minimum,
      cluster.adapt.maximum
    );
  }
  const requested = cluster.requested;
  if (
    typeof requested === 'number' &&
    cluster.workers !== null &&
    requested !== cluster.workers
  ) {
    return trans.__('%1 (scaling to %2)', workers, requested);
  }
  return String(workers);
}

/** A cluster's status in words. */
export function statusLabel(
  status: string,
  trans: Pick<TranslationBundle, '__'>
): string {
  switch (status) {
    case 'running':
      return trans.__('running');
    case 'starting':
      return trans.__('starting');
    case 'closing':
      return trans.__('shutting down');
    default:
      return trans.__('stopped');
  }
}
