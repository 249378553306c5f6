/**
 * history/: recorded runs and how the Lab shows them: the runs list (this file), the sidebar's
 * History section (section.ts), the History view of a run (view.ts), the panes of a window
 * (pane.ts), the views and panes kept and themed (manager.ts), the commands (commands.ts) and
 * pure window formatting (window.ts). May import api/, ui/ and tokens.ts; not the other feature
 * directories.
 */

import { JSONExt } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { deleteRun, listHistory, setRecording } from '../api/client';
import { IHistoryRun } from '../api/types';

/**
 * The server's recorded runs, newest first, polled while someone looks at them.
 *
 * #### Notes
 * The poll runs only while `active` (the History section is shown) and Lab's browser tab is
 * visible: nobody needs the list otherwise, and each poll reads the store.
 */
export class HistoryModel implements IDisposable {
  constructor(options: HistoryModel.IOptions = {}) {
    const interval = options.interval ?? 5000;
    this._poll = new Poll({
      factory: () => this._load(),
      frequency: { interval, backoff: true, max: interval * 6 },
      standby: () => !this._active || 'when-hidden',
      name: 'dashdock:history'
    });
  }

  /** The runs, newest first. */
  get runs(): readonly IHistoryRun[] {
    return this._runs;
  }

  /** Why the last listing failed, or why nothing is recorded, for people; else empty. */
  get error(): string {
    return this._error;
  }

  /** Whether the list has been loaded once. */
  get loaded(): boolean {
    return this._loaded;
  }

  /** Emitted when the runs, or the error, really changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Whether someone looks at the runs; the poll stands by otherwise. */
  get active(): boolean {
    return this._active;
  }

  set active(active: boolean) {
    if (active === this._active) {
      return;
    }
    this._active = active;
    if (active) {
      void this.refresh();
    }
  }

  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll.dispose();
    Signal.clearData(this);
  }

  /** List the runs now. */
  async refresh(): Promise<void> {
    await this._poll.refresh();
    await this._poll.tick;
  }

  /** Whether `source` is being recorded now (it has a live run). */
  isRecording(source: string): boolean {
    return this._runs.some(run => run.live && run.source === source);
  }

  /** Delete a run and what was recorded of it; a live run's source stops being recorded. */
  async remove(id: string): Promise<void> {
    await deleteRun(id);
    this._set(
      this._runs.filter(run => run.id !== id),
      ''
    );
    void this.refresh();
  }

  /** Turn the recording of a source on or off. */
  async setRecording(source: string, enabled: boolean): Promise<void> {
    await setRecording(source, enabled);
    await this.refresh();
  }

  private async _load(): Promise<void> {
    let runs: IHistoryRun[];
    let problem: string;
    try {
      const listing = await listHistory();
      runs = listing.runs;
      problem = listing.problem ?? '';
    } catch (error: any) {
      if (!this.isDisposed) {
        this._set(this._runs, String(error?.message ?? error));
      }
      throw error; // the poll backs off
    }
    if (!this.isDisposed) {
      this._loaded = true;
      // The runs stay readable when recording fails (a recorder that keeps dying): say so.
      this._set(
        [...runs].sort((a, b) => b.start - a.start),
        problem
      );
    }
  }

  private _set(runs: IHistoryRun[], error: string): void {
    const first = !this._announced && this._loaded;
    if (
      !first &&
      error === this._error &&
      JSONExt.deepEqual(runs as any, this._runs as any)
    ) {
      return;
    }
    this._announced = this._loaded;
    this._runs = runs;
    this._error = error;
    this._changed.emit();
  }

  private _poll: Poll;
  private _runs: IHistoryRun[] = [];
  private _error = '';
  private _loaded = false;
  private _announced = false;
  private _active = false;
  private _changed = new Signal<this, void>(this);
}

export namespace HistoryModel {
  export interface IOptions {
    /** Milliseconds between listings while the runs are shown (5 s by default). */
    interval?: number;
  }
}
