/**
 * `Section`: what every sidebar section shares: its DOM listeners while attached, the signals it
 * follows until disposed (see dnd.ts for ui/).
 */

import { Message } from '@lumino/messaging';
import { ISignal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

/**
 * A sidebar section. Subclasses say which DOM events they handle (`listen`, delivered to
 * `handleEvent` while the section is attached) and which signals they follow (`follow`,
 * connected at once, disconnected when the section is disposed).
 */
export abstract class Section extends Widget implements EventListenerObject {
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    for (const { signal, slot } of this._follows) {
      signal.disconnect(slot, this);
    }
    this._follows.length = 0;
    super.dispose();
  }

  /**
   * Handle the DOM events of the section, as `listen` asked for them.
   */
  abstract handleEvent(event: Event): void;

  /**
   * Deliver `type` events of `target` (the section's node by default) to `handleEvent` while the
   * section is attached.
   */
  protected listen(type: string, target: EventTarget = this.node): void {
    this._listeners.push({ type, target });
    if (this.isAttached) {
      target.addEventListener(type, this);
    }
  }

  /**
   * Call `slot` (on this section) whenever `signal` emits, until the section is disposed.
   */
  protected follow(signal: ISignal<any, any>, slot: () => void): void {
    signal.connect(slot, this);
    this._follows.push({ signal, slot });
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    for (const { type, target } of this._listeners) {
      target.addEventListener(type, this);
    }
  }

  protected onBeforeDetach(msg: Message): void {
    for (const { type, target } of this._listeners) {
      target.removeEventListener(type, this);
    }
    super.onBeforeDetach(msg);
  }

  private _listeners: { type: string; target: EventTarget }[] = [];
  private _follows: { signal: ISignal<any, any>; slot: () => void }[] = [];
}
