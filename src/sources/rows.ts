/**
 * The rows of the Sources section: a usable source, a disabled one, kept up to date in place
 * (see model.ts for sources/).
 */

import { TranslationBundle } from '@jupyterlab/translation';

import { ISource } from '../api/types';
import { element } from '../ui/dom';

export const SOURCE_CLASS = 'jp-dashdock-Source';
const SELECTED_CLASS = 'jp-mod-selected';
export const DISABLED_CLASS = 'jp-mod-disabled';

/** A usable source's row: status, name, "not saved", Credentials… and (for a URL) remove. */
export function usableRow(
  source: ISource,
  trans: TranslationBundle
): HTMLElement {
  const item = element('li', SOURCE_CLASS);
  item.setAttribute('role', 'treeitem');
  element('span', 'jp-dashdock-Source-status', item);
  element('span', 'jp-dashdock-Source-name', item);
  const unsaved = element('span', 'jp-dashdock-Source-unsaved', item);
  unsaved.textContent = trans.__('not saved');
  // Shown while its dashboard refuses: the way to give (other) credentials.
  const credentials = element(
    'button',
    'jp-dashdock-Source-credentials jp-mod-styled',
    item
  );
  credentials.type = 'button';
  credentials.dataset.action = 'credentials';
  credentials.dataset.sourceId = source.id;
  credentials.textContent = trans.__('Credentials…');
  credentials.hidden = true;
  // Notebooks' clients and managed clusters go when they close: there is nothing to remove.
  if (source.kind === 'url') {
    item.appendChild(removeButton(source, trans));
  }
  return item;
}

/**
 * A saved source that cannot be used now: listed with its reason so nothing vanishes unexplained,
 * not selectable, and removable.
 */
export function disabledRow(
  source: ISource,
  trans: TranslationBundle
): HTMLElement {
  // Focusable but not selectable: there is nothing to show; Delete or its button removes it.
  const item = element('li', `${SOURCE_CLASS} ${DISABLED_CLASS}`);
  item.setAttribute('role', 'treeitem');
  item.setAttribute('aria-disabled', 'true');
  const status = element(
    'span',
    'jp-dashdock-Source-status jp-mod-disabled',
    item
  );
  status.title = trans.__('Disabled');
  const text = element('span', 'jp-dashdock-Source-name', item);
  element('span', '', text);
  element('span', 'jp-dashdock-Source-reason', text);
  item.appendChild(removeButton(source, trans));
  return item;
}

/** Bring a row up to date with its source (`selected`: whether it is the selected one). */
export function updateRow(
  item: HTMLElement,
  source: ISource,
  selected: boolean,
  trans: TranslationBundle
): void {
  item.dataset.sourceId = source.id;
  item.dataset.kind = source.kind;
  item
    .querySelector('.jp-dashdock-Source-remove')
    ?.setAttribute('aria-label', trans.__('Remove %1', source.name));
  if (source.kind === 'url' || source.disabled) {
    item.setAttribute('aria-keyshortcuts', 'Delete');
  }
  if (source.disabled) {
    item.title = source.url
      ? trans.__('%1 (disabled: %2)', source.url, source.disabled)
      : trans.__('Disabled: %1', source.disabled);
    const [name, reason] = Array.from(
      item.querySelector('.jp-dashdock-Source-name')!.children
    );
    name.textContent = source.name;
    reason.textContent = source.disabled;
    item.setAttribute(
      'aria-label',
      trans.__('%1, disabled: %2', source.name, source.disabled)
    );
    return;
  }
  const credentials = item.querySelector<HTMLButtonElement>(
    '.jp-dashdock-Source-credentials'
  );
  if (credentials) {
    credentials.hidden = !source.needsCredentials;
    credentials.setAttribute(
      'aria-label',
      trans.__('Give the credentials of %1', source.name)
    );
    credentials.title = source.health.message;
  }
  item.classList.toggle(SELECTED_CLASS, selected);
  item.setAttribute('aria-selected', String(selected));
  item.title = trans.__(
    '%1\nEnter or click to show its plots',
    kindLabel(source, trans)
  );
  // Named here, not from its content: that would read the status dot and the × button too.
  item.setAttribute(
    'aria-label',
    source.warning
      ? trans.__('%1, %2, not saved', source.name, statusLabel(source, trans))
      : trans.__('%1, %2', source.name, statusLabel(source, trans))
  );
  const status = item.querySelector<HTMLElement>('.jp-dashdock-Source-status')!;
  status.className = `jp-dashdock-Source-status jp-mod-${source.health.status}`;
  status.title = statusLabel(source, trans);
  item.querySelector('.jp-dashdock-Source-name')!.textContent = source.name;
  const unsaved = item.querySelector<HTMLElement>(
    '.jp-dashdock-Source-unsaved'
  )!;
  unsaved.hidden = !source.warning;
  unsaved.title = source.warning ?? '';
}

function removeButton(source: ISource, trans: TranslationBundle): HTMLElement {
  const remove = element(
    'button',
    'jp-dashdock-Source-remove jp-Button jp-mod-minimal'
  );
  remove.dataset.action = 'remove';
  remove.dataset.sourceId = source.id;
  remove.textContent = '×';
  remove.title = trans.__('Remove this source (Delete)');
  // One tab stop per list: the keyboard removes the focused row with Delete.
  remove.tabIndex = -1;
  return remove;
}

/** What a source is, for its row's tooltip. */
function kindLabel(source: ISource, trans: TranslationBundle): string {
  switch (source.kind) {
    case 'kernel':
      return trans.__(
        '%1 (a Dask client in notebook %2)',
        source.url,
        source.name
      );
    case 'cluster':
      return trans.__('%1 (a cluster this server manages)', source.url);
    default:
      return source.url;
  }
}

/** Its health, for people. */
function statusLabel(source: ISource, trans: TranslationBundle): string {
  switch (source.health.status) {
    case 'up':
      return trans.__('Scheduler reachable');
    case 'down':
      return trans.__('Scheduler unreachable: %1', source.health.message);
    default:
      return trans.__('Not checked yet');
  }
}
