/**
 * sources/: the dashboards this Lab knows and the sidebar sections that show them: the model (this
 * file), the sources list (view.ts), the selected source's plots (plots.ts) and workers
 * (workers.ts). May import api/, ui/ and tokens.ts; not the other feature directories.
 */

import { JSONExt } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { addSource, listPlots, listSources, removeSource } from '../api/client';
import { ICredentials, IPlot, ISource, ISourceListing } from '../api/types';
import { ISourcesModel } from '../tokens';

/**
 * The sources the server knows, with their health, kept fresh by one poll for the whole Lab.
 *
 * #### Notes
 * The poll asks the server to check every scheduler's cheap `/health`; it runs more often while a
 * scheduler is down (so panes come back soon after it does) and stands by while Lab is hidden.
 */
export class SourcesModel implements ISourcesModel, IDisposable {
  constructor() {
    this._poll = new Poll({
      factory: () => this._check(),
      frequency: { interval: this._checkInterval, backoff: false },
      standby: 'when-hidden',
      name: 'dashdock:sources'
    });
  }

  get sources(): readonly ISource[] {
    return this._sources;
  }

  get disabled(): readonly ISource[] {
    return this._disabled;
  }

  get warnings(): readonly string[] {
    return [...this._serverWarnings, ...this._ownWarnings].filter(
      w => !this._dismissed.has(w)
    );
  }

  get selected(): ISource | null {
    return this._sources.find(s => s.id === this._selectedId) ?? null;
  }

  get nextCheck(): number {
    return this._poll.state.timestamp + this._poll.state.interval;
  }

  get changed(): ISignal<ISourcesModel, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  dispose(): void {
    this._poll.dispose();
    Signal.clearData(this);
  }

  configure(intervals: { checkInterval: number; retryInterval: number }): void {
    this._checkInterval = intervals.checkInterval * 1000;
    this._retryInterval = intervals.retryInterval * 1000;
    this._adjustFrequency();
  }

  async refresh(): Promise<void> {
    const edits = this._edits;
    const listing = await listSources();
    this._updateUnlessEdited(listing, edits);
  }

  async add(
    url: string,
    name?: string,
    credentials?: ICredentials
  ): Promise<ISource> {
    const source = await addSource(url, name, credentials);
    this._edits++;
    const others = this._sources.filter(s => s.id !== source.id);
    this._selectedId = source.id;
    this._note(source.warning);
    this._update(
      {
        sources: [...others, source, ...this._disabled],
        warnings: this._serverWarnings
      },
      true
    );
    return source;
  }

  async remove(id: string): Promise<void> {
    const warning = await removeSource(id);
    this._edits++;
    this._note(warning);
    const kept = [...this._sources, ...this._disabled].filter(s => s.id !== id);
    this._update({ sources: kept, warnings: this._serverWarnings }, true);
  }

  dismissWarning(warning: string): void {
    this._dismissed.add(warning);
    this._changed.emit();
  }

  select(id: string | null): void {
    this._preferredId = null; // the user's choice wins over a remembered one
    if (id === this._selectedId) {
      return;
    }
    this._selectedId = id;
    this._changed.emit();
  }

  /**
   * Select `id` as soon as it is listed (now, or when the sources arrive), unless the user selects
   * another first: the selection a reload of the Lab restores.
   */
  prefer(id: string): void {
    if (this._sources.some(s => s.id === id)) {
      this.select(id);
    } else {
      this._preferredId = id;
    }
  }

  plots(id: string): Promise<IPlot[]> {
    return listPlots(id);
  }

  private async _check(): Promise<void> {
    const edits = this._edits;
    const listing = await listSources(true, this._version);
    this._updateUnlessEdited(Private.merged(listing, this._sources), edits);
  }

  /**
   * Apply a listing asked for when `edits` was the count of this Lab's changes, unless a change
   * came since: that listing would undo it until the next poll (an added source vanishing, its
   * selection lost). Dropping it is safe: the change applied its own result, the next poll is fresh.
   */
  private _updateUnlessEdited(listing: ISourceListing, edits: number): void {
    if (!this.isDisposed && edits === this._edits) {
      this._update(listing);
    }
  }

  /**
   * Keep a warning of an operation (a change the server could not save) until it is dismissed.
   */
  private _note(warning: string | undefined): void {
    if (warning) {
      this._dismissed.delete(warning);
      this._ownWarnings = [
        ...this._ownWarnings.filter(w => w !== warning),
        warning
      ];
    }
  }

  private _adjustFrequency(): void {
    const anyDown = this._sources.some(s => s.health.status === 'down');
    const interval = anyDown ? this._retryInterval : this._checkInterval;
    if (this._poll.frequency.interval !== interval) {
      this._poll.frequency = { interval, backoff: false, max: interval };
    }
  }

  private _update(listing: ISourceListing, force = false): void {
    this._version = listing.version;
    // Disabled sources are listed, never selected or used: nothing can be opened from them.
    const sources = listing.sources.filter(s => !s.disabled);
    const disabled = listing.sources.filter(s => s.disabled);
    const preferred = this._preferredId;
    if (preferred !== null && sources.some(s => s.id === preferred)) {
      this._selectedId = preferred;
      this._preferredId = null;
    }
    const selectionGone = !sources.some(s => s.id === this._selectedId);
    if (selectionGone) {
      this._selectedId = sources.length ? sources[0].id : null;
    }
    // The check time changes on every poll; only a change people can see is worth a signal.
    const visible = (list: readonly ISource[]) =>
      list.map(s => ({
        ...s,
        health: { status: s.health.status, message: s.health.message }
      }));
    const unchanged =
      JSONExt.deepEqual(
        visible(sources) as any,
        visible(this._sources) as any
      ) &&
      JSONExt.deepEqual(disabled as any, this._disabled as any) &&
      JSONExt.deepEqual(listing.warnings, this._serverWarnings);
    this._sources = sources;
    this._disabled = disabled;
    this._serverWarnings = listing.warnings;
    if (!force && !selectionGone && unchanged) {
      return;
    }
    this._adjustFrequency();
    this._changed.emit();
  }

  private _version: string | undefined = undefined;
  private _edits = 0;
  private _sources: ISource[] = [];
  private _disabled: ISource[] = [];
  private _serverWarnings: string[] = [];
  private _ownWarnings: string[] = [];
  private _dismissed = new Set<string>();
  private _selectedId: string | null = null;
  private _preferredId: string | null = null;
  private _checkInterval = 5000;
  private _retryInterval = 3000;
  private _poll: Poll;
  private _changed = new Signal<ISourcesModel, void>(this);
}

namespace Private {
  /**
   * A whole listing from a poll that got only what changed: the changed sources replace the ones
   * known, in the server's order. A listing that is whole already is returned as it is.
   */
  export function merged(
    listing: ISourceListing,
    known: readonly ISource[]
  ): ISourceListing {
    if (!listing.ids) {
      return listing;
    }
    const byId = new Map(known.map(source => [source.id, source]));
    const disabled: ISource[] = [];
    for (const source of listing.sources) {
      if (source.disabled) {
        disabled.push(source);
      } else {
        byId.set(source.id, source);
      }
    }
    const usable = listing.ids
      .map(id => byId.get(id))
      .filter((s): s is ISource => s !== undefined);
    return {
      sources: [...usable, ...disabled],
      warnings: listing.warnings,
      version: listing.version
    };
  }
}
