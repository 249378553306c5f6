/**
 * Native buttons for a pane's toolbar (see pane.ts for panes/).
 *
 * Lab's ToolbarButton renders a `jp-button` custom element that always carries `aria-pressed`,
 * which axe reports as an ARIA attribute its role does not allow, and its label cannot change
 * after creation. A native `<button>` styled like Lab's toolbar buttons has neither problem, and
 * the browser makes Enter and Space press it.
 */

import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

/**
 * A toolbar button: an icon with an accessible name, or a text label; the tooltip says what it does.
 */
export function toolbarButton(options: {
  className?: string;
  icon?: LabIcon;
  /** The accessible name of an icon button, or the visible text of a text button. */
  label: string;
  tooltip: string;
  onClick: () => void;
}): Widget {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = `jp-ToolbarButtonComponent jp-Button jp-mod-minimal ${options.className ?? ''}`;
  button.title = options.tooltip;
  if (options.icon) {
    button.setAttribute('aria-label', options.label);
    button.appendChild(
      options.icon.element({ tag: 'span', stylesheet: 'toolbarButton' })
    );
  } else {
    button.textContent = options.label;
  }
  // The button lives and dies with the toolbar, and its listener with it.
  button.addEventListener('click', options.onClick);
  return new Widget({ node: button });
}
