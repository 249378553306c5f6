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
    this._iframe.title = options.title;
    this._page = options.url;
    this.url = options.url;
  }

  /** Load the page again, even when it navigated elsewhere itself (assigning `src` reloads). */
  reload(): void {
    this.url = this._page;
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

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._iframe.addEventListener('load', this);
    this._postTheme();
  }

  protected onBeforeDetach(msg: Message): void {
    this._iframe.removeEventListener('load', this);
    super.onBeforeDetach(msg);
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
  private _page: string;
}

export namespace DashboardFrame {
  export interface IOptions {
    /** A proxied page (see api/urls.ts). */
    url: string;
    /** The frame's accessible name; tests and people find a plot by it. */
    title: string;
  }
}
