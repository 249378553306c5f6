/**
 * BokehJS for the dashboard pages the Lab frames, from the Lab's own origin.
 *
 * A framed page runs in an opaque origin, for which the browser keeps no cache that outlives the
 * page, so each pane opened would download BokehJS (about 1 MB) again. The proxy leaves such a
 * page's scripts inert, and its page script asks its parent for BokehJS (proxy/page/loader.js).
 * This answers: it fetches each file once from this server, where the browser caches it for good
 * (its URL names its content), and posts it back as a Blob (shared, not copied, with each page,
 * which runs it from a blob: URL, compiled off the main thread like any loaded script). Ten panes
 * restored after a reload cost one download, or none.
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';

import { AnswerBudget, IBokehJSFile, requestedFiles } from './bokehjsrequests';

/** Bokeh versions kept in memory (a Lab sees one, maybe two after an upgrade). */
const MAX_CACHED = 16;

/** Answers framed pages' requests for BokehJS; one per Lab, listening on the window. */
export class BokehJSProvider implements IDisposable {
  constructor(settings: ServerConnection.ISettings) {
    this._settings = settings;
    window.addEventListener('message', this);
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    window.removeEventListener('message', this);
    this._sources.clear();
  }

  handleEvent(event: Event): void {
    const message = event as MessageEvent;
    const frame = message.source;
    const files = requestedFiles(message.data);
    if (
      !files ||
      !isFramedHere(frame) ||
      !this._budget.take(frame, Date.now())
    ) {
      return;
    }
    // The page's origin is opaque, so no target origin can name it; the files are public.
    frame.postMessage({ type: 'dashdock:bokehjs-pending' }, '*');
    for (const file of files) {
      void this._source(file).then(source => {
        frame.postMessage({ type: 'dashdock:bokehjs', ...file, source }, '*');
      });
    }
  }

  /** The file, fetched once (null when this server has not this file). */
  private _source(file: IBokehJSFile): Promise<Blob | null> {
    const key = `${file.name}?v=${file.version}`;
    let source = this._sources.get(key);
    if (!source) {
      const url =
        URLExt.join(this._settings.baseUrl, 'dashdock/bokehjs', file.name) +
        `?v=${file.version}`;
      // The browser's cache is the point here: Lab's API requests default to no-store.
      source = ServerConnection.makeRequest(
        url,
        { cache: 'default' },
        this._settings
      )
        .then(response => (response.ok ? response.blob() : null))
        .catch(() => null);
      if (this._sources.size >= MAX_CACHED) {
        this._sources.delete(this._sources.keys().next().value as string);
      }
      this._sources.set(key, source);
      // A failure is not kept: the next page asks the server again.
      void source.then(blob => {
        if (blob === null) {
          this._sources.delete(key);
        }
      });
    }
    return source;
  }

  private _settings: ServerConnection.ISettings;
  private _sources = new Map<string, Promise<Blob | null>>();
  private _budget = new AnswerBudget<Window>();
  private _isDisposed = false;
}

/** Whether `source` is the window of a frame in the Lab's document (a pane, an inline plot). */
function isFramedHere(source: MessageEventSource | null): source is Window {
  if (!source || source === window) {
    return false;
  }
  for (const frame of document.querySelectorAll('iframe')) {
    if (frame.contentWindow === source) {
      return true;
    }
  }
  return false;
}
