/**
 * The frame of every dashboard page dashdock shows, docked or under a cell (see ui/dnd.ts for ui/).
 */

import { IFrame } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';

import { pageTheme } from './theme';

/**
 * The sandbox exceptions of every frame that shows a dashboard's page. They match the `sandbox`
 * policy the server sends with each proxied response: without `allow-same-origin` the page runs
 * in an opaque origin, so it can neither use the user's Jupyter session nor reach the Lab window.
 */
export const DASHBOARD_FRAME_SANDBOX: IFrame.SandboxExceptions[] = [
  'allow-scripts',
  'allow-popups',
  'allow-downloads'
];

const FRAME_CLASS = 'jp-dashdock-PlotFrame';
const DARK_CLASS = 'jp-mod-dark';

/**
 * Lab's sandboxed `IFrame` on a proxied dashboard page, sent no referrer.
 *
 * #### Notes
 * The Lab controls a page only from outside: pause, rate and hidden suspend are server-side state
 * of its relays. The one message it sends in is the theme: in a dark theme, the colours dashdock's
 * page script gives to what Bokeh draws (after every load, and when the theme changes).
 */
export class DashboardFrame extends IFrame {
  constructor(options: DashboardFrame.IOptions) {
    // The sandbox is set before the page's URL, so the page never loads without it.
    super({ sandbox: DASHBOARD_FRAME_SANDBOX, referrerPolicy: 'no-referrer' });
    this.addClass(FRAME_CLASS);
    this._iframe = this.node.querySelector('iframe')!;
    this._title = options.title;
    this._page = options.url;
    // Named at once, a deferred frame too: a screen reader says what the pane will show while
    // it waits for its spare (seconds on a loaded machine). Until then its frame has no page
    // (no `src`); the spare that replaces it takes the name.
    this._iframe.title = this._title;
    if (!options.deferred) {
      this.reload();
    }
  }

  /**
   * Show a page in `spare`, a frame that has run BokehJS already (see panes/spares.ts), in place
   * of this widget's own frame, once this widget is in the document; `page` is null when the page
   * could not be had that way, and the frame then loads it the usual way. Only for a `deferred` frame.
   */
  adopt(spare: HTMLIFrameElement, page: IFramePage | null): void {
    this._adoption?.spare.remove();
    if (this._loadsItself) {
      // Loaded the usual way meanwhile (the pane reloaded while the spare's page was fetched, as
      // when dashdock starts drawing the plot): that load is current, the fetched page may not be.
      spare.remove();
      this._adoption = null;
      return;
    }
    this._adoption = { spare, page };
    if (this.isAttached) {
      this._adoptNow();
    }
  }

  /** Load the page again, even when it navigated elsewhere itself (assigning `src` reloads). */
  reload(): void {
    this._adoption?.spare.remove();
    this._adoption = null;
    this._loadsItself = true;
    this._iframe.title = this._title;
    this.url = this._page;
  }

  /** Load another page in this frame (one the Lab chose, as `url` was). */
  navigate(url: string): void {
    this._page = url;
    this.reload();
  }

  /** Draw the page in the Lab's dark colours, or in the dashboard's own. */
  setDark(dark: boolean): void {
    this.toggleClass(DARK_CLASS, dark);
    this._postTheme();
  }

  handleEvent(event: Event): void {
    if (event.type === 'load') {
      this._postTheme();
    }
  }

  dispose(): void {
    this._adoption?.spare.remove();
    this._adoption = null;
    super.dispose();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._iframe.addEventListener('load', this);
    if (this._adoption) {
      this._adoptNow();
    }
    this._postTheme();
  }

  protected onBeforeDetach(msg: Message): void {
    this._iframe.removeEventListener('load', this);
    super.onBeforeDetach(msg);
  }

  /** Move the spare in without reloading it (a moved frame keeps its page), and hand it the page. */
  private _adoptNow(): void {
    const { spare, page } = this._adoption!;
    this._adoption = null;
    const own = this._iframe;
    const node = this.node as HTMLElement & Partial<IMovable>;
    if (!page || !node.moveBefore || !spare.isConnected) {
      spare.remove();
      this.reload();
      return;
    }
    own.removeEventListener('load', this);
    node.moveBefore(spare, own);
    own.remove();
    spare.title = this._title;
    spare.removeAttribute('aria-hidden');
    spare.removeAttribute('tabindex');
    delete spare.dataset.ready;
    this._iframe = spare;
    spare.addEventListener('load', this);
    // The page's origin is opaque, so no target origin can name it; it asked for this page.
    spare.contentWindow?.postMessage({ type: 'dashdock:show', ...page }, '*');
  }

  private _postTheme(): void {
    const dark = this.hasClass(DARK_CLASS);
    // The page's origin is opaque, so no target origin can name it; the message holds colours only.
    this._iframe.contentWindow?.postMessage(
      { type: 'dashdock:theme', theme: dark ? pageTheme(this.node) : null },
      '*'
    );
  }

  private _iframe: HTMLIFrameElement;
  private _loadsItself = false; // the frame loads its page itself: a spare comes too late
  private _page: string;
  private _title: string;
  private _adoption: {
    spare: HTMLIFrameElement;
    page: IFramePage | null;
  } | null = null;
}

/** A page for a spare frame: its HTML, and its path and query below its view URL. */
export interface IFramePage {
  html: string;
  below: string;
}

/** `Element.moveBefore` (moves a frame without reloading it), where the browser has it. */
interface IMovable {
  moveBefore(node: Node, child: Node | null): void;
}

export namespace DashboardFrame {
  export interface IOptions {
    /** A proxied page (see api/urls.ts). */
    url: string;
    /** The frame's accessible name; tests and people find a plot by it. */
    title: string;
    /** Load nothing yet: the owner calls `adopt` (or `reload`). */
    deferred?: boolean;
  }
}
