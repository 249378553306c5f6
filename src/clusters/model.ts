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
import {
  ICluster,
  IClusterLimits,
  IClusterListing,
  IClusterRequest
} from '../api/types';
import { IClustersModel } from '../tokens';

/** The key of a cluster being started, in `busy` and `errors`. */
const NEW = 'new';

/**
 * The managed clusters, kept fresh by a poll that stands by while Lab is hidden.
 *
 * #### Notes
 * Failures never throw to the caller, because a cluster that cannot start must leave Lab working
 * and say why: a failure to start lands in `error` (the section shows it), one of an operation on
 * a cluster in `errors` under its id (its card shows it). Any success clears the failure to start,
 * and a success on a cluster clears that cluster's.
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
    return this._errors.get(NEW) ?? '';
  }

  get errors(): ReadonlyMap<string, string> {
    return this._errors;
  }

  dismissError(id: string): void {
    if (this._errors.delete(id)) {
      this._changed.emit();
    }
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

  get gateway(): IClusterListing['gateway'] {
    return this._gateway;
  }

  async refresh(): Promise<void> {
    const operations = this._operationsEnded;
    const { clusters, limits, gateway } = await listClusters();
    // A listing asked for before an operation ended may show the cluster as it was (a shut-down
    // card would come back for a poll): the listing asked for after it decides.
    if (operations !== this._operationsEnded) {
      return;
    }
    // A cluster that is gone takes its failure with it.
    let forgot = false;
    for (const id of this._errors.keys()) {
      if (id !== NEW && !clusters.some(cluster => cluster.id === id)) {
        forgot = this._errors.delete(id);
      }
    }
    if (
      forgot ||
      !JSONExt.deepEqual(clusters as any, this._clusters as any) ||
      !JSONExt.deepEqual(limits as any, this._limits as any) ||
      !JSONExt.deepEqual(gateway as any, this._gateway as any)
    ) {
      this._clusters = clusters;
      this._limits = limits;
      this._gateway = gateway ?? null;
      this._changed.emit();
    }
  }

  async start(request: IClusterRequest = {}): Promise<ICluster | null> {
    const cluster = await this._run(NEW, () => startCluster(request));
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
    this._errors.delete(key);
    this._changed.emit();
    try {
      const result = await operation();
      this._errors.delete(NEW);
      // Done, but not as asked (a gateway held to its limit): the card says what happened instead.
      const warning = (result as { warning?: unknown } | null)?.warning;
      if (typeof warning === 'string' && warning) {
        this._errors.set(key, warning);
      }
      return result;
    } catch (error: any) {
      this._errors.set(key, String(error?.message ?? error));
      return null;
    } finally {
      this._busy.delete(key);
      this._operationsEnded++;
      await this.refresh().catch(() => undefined);
      this._changed.emit();
    }
  }

  private _clusters: ICluster[] = [];
  private _operationsEnded = 0;
  private _limits: IClusterLimits | null = null;
  private _gateway: IClusterListing['gateway'] = null;
  private _busy = new Set<string>();
  private _errors = new Map<string, string>();
  private _onStarted?: (cluster: ICluster) => void;
  private _poll: Poll;
  private _changed = new Signal<IClustersModel, void>(this);
}
