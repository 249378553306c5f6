import { JSONExt } from '@lumino/coreutils';
import { ISignal, Signal } from '@lumino/signaling';

import { addSource, listPlots, listSources, removeSource } from './api';
import { IPlot, ISource, ISourcesModel } from './tokens';

/**
 * The sources the server knows, cached for the sidebar; the server is the source of truth.
 */
export class SourcesModel implements ISourcesModel {
  get sources(): readonly ISource[] {
    return this._sources;
  }

  get selected(): ISource | null {
    return this._sources.find(s => s.id === this._selectedId) ?? null;
  }

  get changed(): ISignal<ISourcesModel, void> {
    return this._changed;
  }

  async refresh(): Promise<void> {
    this._update(await listSources());
  }

  async add(url: string, name?: string): Promise<ISource> {
    const source = await addSource(url, name);
    const others = this._sources.filter(s => s.id !== source.id);
    this._selectedId = source.id;
    this._update([...others, source], true);
    return source;
  }

  async remove(id: string): Promise<void> {
    await removeSource(id);
    this._update(this._sources.filter(s => s.id !== id));
  }

  select(id: string | null): void {
    if (id === this._selectedId) {
      return;
    }
    this._selectedId = id;
    this._changed.emit();
  }

  plots(id: string): Promise<IPlot[]> {
    return listPlots(id);
  }

  private _update(sources: ISource[], force = false): void {
    const selectionGone = !sources.some(s => s.id === this._selectedId);
    if (selectionGone) {
      this._selectedId = sources.length ? sources[0].id : null;
    }
    if (!force && !selectionGone && JSONExt.deepEqual(sources as any, this._sources as any)) {
      return;
    }
    this._sources = sources;
    this._changed.emit();
  }

  private _sources: ISource[] = [];
  private _selectedId: string | null = null;
  private _changed = new Signal<ISourcesModel, void>(this);
}
