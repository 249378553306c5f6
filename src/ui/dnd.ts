/**
 * ui/: the DOM and widget helpers every view shares: drag sources (this file), dashboard frames,
 * theme, visibility, formatting, icons and small DOM helpers. Imports nothing of ours (never api/):
 * whatever a view needs from the server, it passes in.
 *
 * This file: the one drag rule of dashdock.
 */

import { MimeData } from '@lumino/coreutils';
import { Drag } from '@lumino/dragdrop';
import { Widget } from '@lumino/widgets';

/**
 * The mime type under which a Lumino DockPanel accepts a widget factory on drop.
 */
export const WIDGET_FACTORY_MIME = 'application/vnd.lumino.widget-factory';

/** Pixels the pointer must travel before a press becomes a drag (a shorter move is a click). */
const DRAG_THRESHOLD = 5;

/** Set on a drag source while its drag ends, so the click that ends it is not taken for a click. */
const DRAGGED_ATTRIBUTE = 'data-dashdock-dragged';

/**
 * Make `element` a drag source: a press that travels past a small threshold starts a drag whose
 * data is created only then; a press without movement stays a click.
 *
 * #### Notes
 * A press on a disabled button does not drag. The click a drag ends with is not a click: see
 * `wasDragged`.
 */
export function makeDraggable(
  element: HTMLElement,
  options: IDragOptions
): void {
  element.addEventListener('pointerdown', (press: PointerEvent) => {
    if (press.button !== 0 || (element as HTMLButtonElement).disabled) {
      return;
    }
    const onMove = (move: PointerEvent) => {
      const dx = Math.abs(move.clientX - press.clientX);
      const dy = Math.abs(move.clientY - press.clientY);
      if (dx < DRAG_THRESHOLD && dy < DRAG_THRESHOLD) {
        return;
      }
      stop();
      const mimeData = options.mimeData();
      if (!mimeData) {
        return;
      }
      element.setAttribute(DRAGGED_ATTRIBUTE, 'true');
      const image = document.createElement('div');
      image.className = 'jp-dashdock-DragImage';
      image.textContent = options.dragImageText();
      const drag = new Drag({
        mimeData,
        dragImage: image,
        proposedAction: options.action,
        supportedActions: options.action === 'move' ? 'copy-move' : 'copy'
      });
      // The drag is this press's to end: Lumino disposes a finished drag itself, and disposing
      // it again here (a no-op then) keeps it from outliving its drag in any case.
      void drag.start(move.clientX, move.clientY).then(() => {
        drag.dispose();
        // The click that ends a drag must not also act.
        window.setTimeout(() => element.removeAttribute(DRAGGED_ATTRIBUTE), 0);
      });
    };
    const stop = () => {
      document.removeEventListener('pointermove', onMove, true);
      document.removeEventListener('pointerup', stop, true);
    };
    document.addEventListener('pointermove', onMove, true);
    document.addEventListener('pointerup', stop, true);
  });
}

/**
 * Make `element` draggable into the dock: its drag carries a factory that creates the pane only
 * when it is dropped, where it is dropped.
 */
export function makeDockDraggable(
  element: HTMLElement,
  factory: () => Widget,
  dragImageText: () => string
): void {
  makeDraggable(element, {
    action: 'move',
    dragImageText,
    mimeData: () => {
      const mimeData = new MimeData();
      mimeData.setData(WIDGET_FACTORY_MIME, factory);
      return mimeData;
    }
  });
}

/**
 * Whether this click ends a drag that started on `element` (or inside it), rather than being a click.
 */
export function wasDragged(element: HTMLElement): boolean {
  return !!element.closest(`[${DRAGGED_ATTRIBUTE}]`);
}

/**
 * What a drag source carries and how it looks while dragged.
 */
export interface IDragOptions {
  /** The drag's data, created when the drag starts; null cancels it. */
  mimeData: () => MimeData | null;
  /** The text of the image under the pointer. */
  dragImageText: () => string;
  /** 'move' offers copy too (a dock moves what it adopts); 'copy' only copies (cells into a notebook). */
  action: 'move' | 'copy';
}
