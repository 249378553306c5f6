/**
 * clusters/: Dask clusters this Jupyter server manages: the model (this file), the sidebar section
 * and its cards (view.ts, card.ts) and the code that connects a notebook (code.ts). May import
 * api/, ui/ and tokens.ts; not the other feature directories.
 */

import { JSONExt } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import {
  changeCluster,
  listClusters,
  restartCluster,
  startCluster,
  stopCluster
} from '../api/client';
import { ICluster, IClusterLimits } from '../api/types';
import { IClustersModel } from '../tokens';

/**
 * The managed clusters, kept fresh by a poll that stands by while Lab is hidden.
 *
 * #### Notes
 * Failures never throw to the caller: they land in `error`, which the sidebar shows, because a
 * cluster that cannot start must leave Lab working and say why.
 */
export class ClustersModel implements IClustersModel, IDisposable {
  constructor(options: { onStarted?: (cluster: ICluster) => void } = {}) {
    this._onStarted = options.onStarted;
    this._poll = new Poll({
      factory: () => this.refresh(),
      frequency: { interval: 5000, backoff: true, max: 30000 },
      standby: 'when-hidden',
      name: 'dashdock:clusters'
    });
  }

  get clusters(): readonly ICluster[] {
    return this._clusters;
  }

  get limits(): IClusterLimits | null {
    return this._limits;
  }

  get busy(): ReadonlySet<string> {
    return this._busy;
  }

  get error(): string {
    return this._error;
  }

  get changed(): ISignal<IClustersModel, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  dispose(): void {
    this._poll.dispose();
    Signal.clearData(this);
  }

  async refresh(): Promise<void> {
    const { clusters, limits } = await listClusters();
    if (
      !JSONExt.deepEqual(clusters as any, this._clusters as any) ||
      !JSONExt.deepEqual(limits as any, this._limits as any)
    ) {
      this._clusters = clusters;
      this._limits = limits;
      this._changed.emit();
    }
  }

  async start(): Promise<ICluster | null> {
    const cluster = await this._run('new', () => startCluster());
    if (cluster) {
      this._onStarted?.(cluster);
    }
    return cluster;
  }

  async scale(id: string, workers: number): Promise<void> {
    await this._run(id, () => changeCluster(id, { workers }));
  }

  async adapt(id: string, minimum: number, maximum: number): Promise<void> {
    await this._run(id, () =>
      changeCluster(id, { adapt: { minimum, maximum } })
    );
  }

  async restart(id: string): Promise<void> {
    await this._run(id, () => restartCluster(id));
  }

  async stop(id: string): Promise<void> {
    await this._run(id, () => stopCluster(id));
  }

  private async _run<T>(
    key: string,
    operation: () => Promise<T>
  ): Promise<T | null> {
    this._busy.add(key);
    this._error = '';
    this._changed.emit();
    try {
      return await operation();
    } catch (error: any) {
      this._error = String(error?.message ?? error);
      return null;
    } finally {
      this._busy.delete(key);
      await this.refresh().catch(() => undefined);
      this._changed.emit();
    }
  }

  private _clusters: ICluster[] = [];
  private _limits: IClusterLimits | null = null;
  private _busy = new Set<string>();
  private _error = '';
  private _onStarted?: (cluster: ICluster) => void;
  private _poll: Poll;
  private _changed = new Signal<IClustersModel, void>(this);
}
