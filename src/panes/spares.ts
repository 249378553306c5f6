/**
 * Spare frames: a hidden frame per recently used source with its view's spare page loaded, BokehJS
 * run, so that the next pane of that source draws without loading and parsing BokehJS again (see
 * proxy/page/spare.py for the page's side).
 */

import { IDisposable } from '@lumino/disposable';

import { proxyURL } from '../api/client';
import { fetchViewPage, viewHolds } from '../api/views';
import { DASHBOARD_FRAME_SANDBOX, DashboardFrame } from '../ui/frame';

const SPARE_PATH = '/.dashdock/spare';
const HOLDER_CLASS = 'jp-dashdock-SpareFrames';
/** A view URL's path as a spare says it (api/views.ts `viewHolds` checks it is this server's). */
const VIEW_PATH = /^\/[^?#]*\/dashdock\/view\/[^/?#]+\/[^/?#]+$/;

/**
 * A spare older than this is replaced rather than used: the view link it was loaded under must
 * stay valid while the pane it becomes is open (view links live an hour by default).
 */
const MAX_AGE_MS = 10 * 60_000;

/** A page longer than this (characters) loads the usual way rather than in a spare frame. */
const MAX_PAGE_LENGTH = 4 * 1024 * 1024;

/** Wait this long after a pane opens before loading its source's next spare: the pane goes first. */
const PREPARE_DELAY_MS = 700;

/**
 * Load the next spare by then even if the Lab never looks idle: Lab's polls and a drawing pane
 * kept it from idling for seconds, so panes opened a few seconds apart found no spare.
 */
const PREPARE_IDLE_TIMEOUT_MS = 1000;

/**
 * A pane takes a spare that is still running BokehJS and waits this long for it (it is ahead of
 * a frame that starts loading now, on a loaded machine too); one not ready by then is given up and
 * the page loads the usual way. A spare's page is the view handler's own, so that is rare.
 */
const READY_WAIT_MS = 5000;

interface ISpare {
  frame: HTMLIFrameElement;
  created: number;
  /** Its view URL's path, as its page said once ready (BokehJS run); empty until then. */
  view: string;
  /** Told the view when the spare says it is ready (set while a pane waits for that). */
  onReady?: (view: string) => void;
}

/**
 * The spare frames of this Lab: at most `max`, one per source, the least recently used dropped first.
 *
 * #### Notes
 * A spare is loaded only after a pane of its source was opened, and when the browser is idle. It
 * lives offscreen, inert and hidden from assistive technology, until a pane takes it. Only its own
 * page may call it ready: a message from any other frame is ignored.
 */
export class SpareFrames implements IDisposable {
  constructor(max: number) {
    this._max = max;
    window.addEventListener('message', this);
  }

  /** Whether this browser can move a frame without reloading it (`Element.moveBefore`). */
  static get supported(): boolean {
    return (
      typeof (Element.prototype as { moveBefore?: unknown }).moveBefore ===
      'function'
    );
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** How many spares may be kept (0: none). */
  set max(max: number) {
    this._max = max;
    while (this._spares.size > max) {
      this._drop(this._spares.keys().next().value as string);
    }
  }

  /**
   * The frame of a new pane of `source` showing `url` (a proxy URL): its page shown in a ready spare
   * of that source when there is one (the Lab fetches the page, and the frame hands it to the
   * spare once both are in the document), else loaded the usual way. The source's next spare is
   * readied.
   */
  frame(source: string, url: string, title: string): DashboardFrame {
    const spare = this._take(source);
    const frame = new DashboardFrame({ url, title, deferred: spare !== null });
    if (spare) {
      // A spare under a link that no longer holds could not open its plot's websocket.
      const holds = this._ready(spare).then(view =>
        view ? viewHolds(view) : false
      );
      void Promise.all([fetchViewPage(url, MAX_PAGE_LENGTH), holds]).then(
        ([page, holds]) => {
          if (frame.isDisposed) {
            spare.frame.remove();
          } else {
            frame.adopt(spare.frame, holds ? page : null);
          }
        }
      );
    }
    if (!source.includes(':')) {
      this.prepare(source); // a source's, not a literal target's (a worker's page)
    }
    return frame;
  }

  /** A spare of `source`, ready or still loading, now the caller's to move into its pane, or null. */
  private _take(source: string): ISpare | null {
    const spare = this._spares.get(source);
    if (!spare || Date.now() - spare.created > MAX_AGE_MS) {
      return null;
    }
    this._spares.delete(source);
    return spare;
  }

  /** The spare's view path once it is ready; empty when it is not within `READY_WAIT_MS`. */
  private _ready(spare: ISpare): Promise<string> {
    if (spare.view) {
      return Promise.resolve(spare.view);
    }
    this._waiting.add(spare);
    return new Promise(resolve => {
      const done = (view: string) => {
        window.clearTimeout(timer);
        this._waiting.delete(spare);
        spare.onReady = undefined;
        resolve(view);
      };
      const timer = window.setTimeout(() => done(''), READY_WAIT_MS);
      spare.onReady = done;
    });
  }

  /** Have a spare of `source` ready for its next pane, loaded when the browser is idle. */
  prepare(source: string): void {
    if (!SpareFrames.supported || this._max < 1 || this._isDisposed) {
      return;
    }
    const spare = this._spares.get(source);
    if (spare && Date.now() - spare.created < MAX_AGE_MS) {
      this._spares.delete(source); // most recently used goes last
      this._spares.set(source, spare);
      return;
    }
    window.clearTimeout(this._timers.get(source));
    const timer = window.setTimeout(() => {
      this._timers.delete(source);
      requestIdleCallback(() => this._load(source), {
        timeout: PREPARE_IDLE_TIMEOUT_MS
      });
    }, PREPARE_DELAY_MS);
    this._timers.set(source, timer);
  }

  /** Drop the spares of sources not in `sources` (removed, or shut down). */
  retain(sources: Set<string>): void {
    for (const source of [...this._spares.keys()]) {
      if (!sources.has(source)) {
        this._drop(source);
      }
    }
  }

  handleEvent(event: Event): void {
    const message = event as MessageEvent;
    const data = message.data as { type?: unknown; view?: unknown } | null;
    if (
      data?.type !== 'dashdock:spare-ready' ||
      typeof data.view !== 'string' ||
      !VIEW_PATH.test(data.view)
    ) {
      return;
    }
    for (const spare of [...this._spares.values(), ...this._waiting]) {
      if (
        message.source !== null &&
        spare.frame.contentWindow === message.source
      ) {
        spare.view = data.view;
        spare.frame.dataset.ready = 'true'; // for people and tests looking at the DOM
        spare.onReady?.(data.view);
      }
    }
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    window.removeEventListener('message', this);
    this._timers.forEach(timer => window.clearTimeout(timer));
    this._timers.clear();
    [...this._spares.keys()].forEach(source => this._drop(source));
    [...this._waiting].forEach(spare => spare.onReady?.('')); // their panes load the usual way
    this._holder?.remove();
  }

  private _load(source: string): void {
    if (this._isDisposed || this._max < 1) {
      return;
    }
    this._drop(source);
    while (this._spares.size >= this._max) {
      this._drop(this._spares.keys().next().value as string);
    }
    const frame = document.createElement('iframe');
    // As every dashboard frame (ui/frame.ts): set before the URL, so the page never loads without it.
    frame.setAttribute('sandbox', DASHBOARD_FRAME_SANDBOX.join(' '));
    frame.setAttribute('referrerpolicy', 'no-referrer');
    frame.setAttribute('aria-hidden', 'true');
    frame.tabIndex = -1;
    frame.style.width = '100%';
    frame.style.height = '100%';
    frame.src = proxyURL(source, SPARE_PATH);
    this._holderNode().appendChild(frame);
    this._spares.set(source, { frame, created: Date.now(), view: '' });
  }

  private _drop(source: string): void {
    this._spares.get(source)?.frame.remove();
    this._spares.delete(source);
  }

  /** Where spares wait: offscreen, with a pane's usual size so a page lays out as it will. */
  private _holderNode(): HTMLElement {
    if (!this._holder) {
      this._holder = document.createElement('div');
      this._holder.className = HOLDER_CLASS;
      this._holder.inert = true;
      this._holder.setAttribute('aria-hidden', 'true');
      document.body.appendChild(this._holder);
    }
    return this._holder;
  }

  private _max: number;
  private _spares = new Map<string, ISpare>();
  private _timers = new Map<string, number>();
  /** Spares taken by a pane before they were ready, until they are or it gives them up. */
  private _waiting = new Set<ISpare>();
  private _holder: HTMLElement | null = null;
  private _isDisposed = false;
}
