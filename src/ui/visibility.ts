/**
 * The one rule for plots out of sight (see ui/dnd.ts for ui/).
 */

import { IDisposable } from '@lumino/disposable';

/**
 * Suspends a plot hidden for longer than a grace period, and resumes it as soon as it is seen.
 *
 * #### Notes
 * Hidden means its widget is not shown (behind another tab, scrolled out of view: `isShown`
 * says, and the owner calls `update` when that may have changed) or Lab itself is in a background
 * browser tab (followed here). What suspend
 * and resume do (pause the pane's relays on the server, reload the page) is the owner's.
 */
export class HiddenSuspender implements IDisposable {
  constructor(options: HiddenSuspender.IOptions) {
    this._grace = options.grace;
    this._isShown = options.isShown;
    this._onSuspend = options.onSuspend;
    this._onResume = options.onResume;
    document.addEventListener('visibilitychange', this);
  }

  /** Whether the plot is suspended now. */
  get suspended(): boolean {
    return this._suspended;
  }

  /** Seconds hidden before the plot is suspended; applies from the next time it is hidden. */
  get grace(): number {
    return this._grace;
  }

  set grace(seconds: number) {
    this._grace = seconds;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Look again whether the plot is in sight: suspend it after the grace, or resume it now. */
  update(): void {
    const visible = this._isShown() && document.visibilityState === 'visible';
    window.clearTimeout(this._timer);
    if (!visible) {
      if (!this._suspended) {
        this._timer = window.setTimeout(() => {
          this._suspended = true;
          this._onSuspend();
        }, this._grace * 1000);
      }
      return;
    }
    if (this._suspended) {
      this._suspended = false;
      this._onResume();
    }
  }

  /** Handle the document's `visibilitychange`. */
  handleEvent(): void {
    this.update();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    window.clearTimeout(this._timer);
    document.removeEventListener('visibilitychange', this);
  }

  private _grace: number;
  private _onSuspend: () => void;
  private _onResume: () => void;
  private _isShown: () => boolean;
  private _suspended = false;
  private _timer = 0;
  private _isDisposed = false;
}

export namespace HiddenSuspender {
  export interface IOptions {
    /** Seconds hidden before `onSuspend`. */
    grace: number;
    /** Whether the plot's own widget is in sight, apart from the browser tab. */
    isShown: () => boolean;
    onSuspend: () => void;
    onResume: () => void;
  }
}
