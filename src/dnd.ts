import { MimeData } from '@lumino/coreutils';
import { Drag } from '@lumino/dragdrop';
import { Widget } from '@lumino/widgets';

/**
 * The mime type under which a Lumino DockPanel accepts a widget factory on drop.
 */
export const WIDGET_FACTORY_MIME = 'application/vnd.lumino.widget-factory';

/** Pixels the pointer must travel before a press becomes a drag (a shorter move is a click). */
const DRAG_THRESHOLD = 5;

/**
 * Make `element` draggable into the dock: a drag past a small threshold carries a factory that
 * creates the pane only when it is dropped; a press without movement stays a click.
 */
export function makeDockDraggable(
  element: HTMLElement,
  factory: () => Widget,
  dragImageText: () => string
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
      element.dataset.dashdockDragged = 'true';
      const image = document.createElement('div');
      image.className = 'jp-dashdock-DragImage';
      image.textContent = dragImageText();
      const mimeData = new MimeData();
      mimeData.setData(WIDGET_FACTORY_MIME, factory);
      const drag = new Drag({
        mimeData,
        dragImage: image,
        proposedAction: 'move',
        supportedActions: 'copy-move'
      });
      void drag.start(move.clientX, move.clientY).then(() => {
        // The click that ends a drag must not also open the plot.
        window.setTimeout(() => delete element.dataset.dashdockDragged, 0);
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
