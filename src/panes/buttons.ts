/**
 * Native controls for a pane's toolbar: buttons and the update-rate select (see pane.ts for panes/).
 *
 * Lab's ToolbarButton renders a `jp-button` custom element that always carries `aria-pressed`,
 * which axe reports as an ARIA attribute its role does not allow, and its label cannot change
 * after creation. A native `<button>` styled like Lab's toolbar buttons has neither problem, and
 * the browser makes Enter and Space press it.
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { RATES } from './rates';

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

/**
 * The update-rate select: live, every 1 s, every 5 s; `onChange` gets the seconds (0 is live).
 */
export function rateSelect(options: {
  trans: TranslationBundle;
  rate: number;
  onChange: (rate: number) => void;
}): Widget {
  const { trans } = options;
  const select = document.createElement('select');
  select.className = 'jp-dashdock-PaneRate jp-mod-styled';
  select.setAttribute('aria-label', trans.__('Update rate'));
  select.title = trans.__('How often this plot redraws');
  // Not "Live": the Rewind select beside it reads "Live" until a user rewinds.
  const labels = [
    trans.__('Real time'),
    trans.__('Every 1 s'),
    trans.__('Every 5 s')
  ];
  RATES.forEach((rate, index) => {
    const option = document.createElement('option');
    option.value = String(rate);
    option.textContent = labels[index];
    select.appendChild(option);
  });
  select.value = String(options.rate);
  // The select lives and dies with the pane's toolbar, and its listener with it.
  select.addEventListener('change', () =>
    options.onChange(Number(select.value))
  );
  return new Widget({ node: select });
}
