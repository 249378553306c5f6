/**
 * The frame of every dashboard page dashdock shows, docked or under a cell (see ui/dnd.ts for ui/).
 */

import { IFrame } from '@jupyterlab/ui-components';

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
 * of its relays, and the dark theme is a style of the frame element.
 */
export class DashboardFrame extends IFrame {
  constructor(options: DashboardFrame.IOptions) {
    // The sandbox is set before the page's URL, so the page never loads without it.
    super({ sandbox: DASHBOARD_FRAME_SANDBOX, referrerPolicy: 'no-referrer' });
    this.addClass(FRAME_CLASS);
    this.node.querySelector('iframe')!.title = options.title;
    this._page = options.url;
    this.url = options.url;
  }

  /** Load the page again, even when it navigated elsewhere itself (assigning `src` reloads). */
  reload(): void {
    this.url = this._page;
  }

  /** Draw the page inverted, for dark themes (Bokeh draws light plots). */
  setDark(dark: boolean): void {
    this.toggleClass(DARK_CLASS, dark);
  }

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
