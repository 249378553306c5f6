/**
 * The plot picker: every usable source's plots in a dialog, filtered as one types (see pane.ts for
 * panes/).
 */

import { Dialog, showDialog } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { UUID } from '@lumino/coreutils';
import { Widget } from '@lumino/widgets';

import { ISourcesModel } from '../tokens';

/**
 * A plot of a source, as the picker offers it.
 */
export interface IPlotChoice {
  source: string;
  sourceName: string;
  path: string;
  name: string;
}

/**
 * Ask for a plot of any usable source; null when the user cancels or there is none.
 *
 * #### Notes
 * The selected source's plots come first. A source whose plots cannot be listed now (its
 * scheduler is down) is left out rather than failing the whole list.
 */
export async function pickPlot(
  model: ISourcesModel,
  trans: TranslationBundle
): Promise<IPlotChoice | null> {
  const selected = model.selected?.id;
  const sources = [...model.sources].sort(
    (a, b) => Number(b.id === selected) - Number(a.id === selected)
  );
  const lists = await Promise.all(
    sources.map(source =>
      model
        .plots(source.id)
        .then(plots =>
          plots.map(plot => ({
            source: source.id,
            sourceName: source.name,
            path: plot.path,
            name: plot.name
          }))
        )
        .catch(() => [] as IPlotChoice[])
    )
  );
  const result = await showDialog({
    title: trans.__('Open a Dask Plot'),
    body: new PlotPicker(lists.flat(), trans),
    buttons: [
      Dialog.cancelButton({ label: trans.__('Cancel') }),
      Dialog.okButton({ label: trans.__('Open') })
    ],
    focusNodeSelector: 'input'
  });
  return result.button.accept ? result.value : null;
}

/**
 * The picker's body: a filter box and the matching plots as a listbox the arrow keys move
 * through (the filter keeps the focus; the active option is its `aria-activedescendant`).
 */
export class PlotPicker
  extends Widget
  implements Dialog.IBodyWidget<IPlotChoice | null>
{
  constructor(choices: IPlotChoice[], trans: TranslationBundle) {
    super();
    this.addClass('jp-dashdock-PlotPicker');
    this._choices = choices;
    this._trans = trans;
    const listId = `jp-dashdock-PlotPicker-${UUID.uuid4()}`;
    this._input.type = 'text';
    this._input.className = 'jp-dashdock-PlotPicker-filter jp-mod-styled';
    this._input.placeholder = trans.__('Type to filter plots');
    this._input.title = trans.__(
      'Type to filter, arrow keys to choose, Enter to open'
    );
    this._input.setAttribute('role', 'combobox');
    this._input.setAttribute('aria-label', trans.__('Filter plots'));
    this._input.setAttribute('aria-autocomplete', 'list');
    this._input.setAttribute('aria-expanded', 'true');
    this._input.setAttribute('aria-controls', listId);
    this._list.id = listId;
    this._list.className = 'jp-dashdock-PlotPicker-list';
    this._list.setAttribute('role', 'listbox');
    this._list.setAttribute('aria-label', trans.__('Plots'));
    this._empty.className = 'jp-dashdock-PlotPicker-empty';
    this._empty.setAttribute('role', 'status');
    this.node.append(this._input, this._list, this._empty);
    // The nodes live and die with this widget, and their listeners with them.
    this._input.addEventListener('input', () => this._filter());
    this._input.addEventListener('keydown', event => this._onKeydown(event));
    this._list.addEventListener('click', event => this._onClick(event));
    this._filter();
  }

  getValue(): IPlotChoice | null {
    return this._shown[this._active] ?? null;
  }

  /** Show the choices whose "plot · source" holds every word typed. */
  private _filter(): void {
    const words = this._input.value.toLowerCase().split(/\s+/).filter(Boolean);
    this._shown = this._choices.filter(choice => {
      const text = `${choice.name} ${choice.sourceName}`.toLowerCase();
      return words.every(word => text.includes(word));
    });
    this._list.replaceChildren(
      ...this._shown.map((choice, index) => {
        const option = document.createElement('li');
        option.id = `${this._list.id}-${index}`;
        option.className = 'jp-dashdock-PlotPicker-option';
        option.setAttribute('role', 'option');
        option.dataset.index = String(index);
        option.textContent = this._trans.__(
          '%1 · %2',
          choice.name,
          choice.sourceName
        );
        return option;
      })
    );
    this._empty.textContent = this._shown.length
      ? ''
      : this._choices.length
        ? this._trans.__('No plot matches.')
        : this._trans.__(
            'No dashboard source yet: add one in the Dask sidebar first.'
          );
    this._setActive(0);
  }

  private _setActive(index: number): void {
    this._active = Math.max(0, Math.min(index, this._shown.length - 1));
    const options = this._list.children;
    for (let i = 0; i < options.length; i++) {
      options[i].setAttribute('aria-selected', String(i === this._active));
      options[i].classList.toggle('jp-mod-active', i === this._active);
    }
    const active = options[this._active];
    if (active) {
      this._input.setAttribute('aria-activedescendant', active.id);
      active.scrollIntoView({ block: 'nearest' });
    } else {
      this._input.removeAttribute('aria-activedescendant');
    }
  }

  private _onKeydown(event: KeyboardEvent): void {
    const moves: Record<string, number> = {
      ArrowDown: this._active + 1,
      ArrowUp: this._active - 1,
      PageDown: this._active + 10,
      PageUp: this._active - 10
    };
    if (event.key in moves) {
      event.preventDefault();
      this._setActive(moves[event.key]);
    }
  }

  private _onClick(event: MouseEvent): void {
    const option = (event.target as HTMLElement).closest<HTMLElement>(
      '[role="option"]'
    );
    if (option) {
      this._setActive(Number(option.dataset.index));
      this._input.focus();
    }
  }

  private _choices: IPlotChoice[];
  private _shown: IPlotChoice[] = [];
  private _active = 0;
  private _trans: TranslationBundle;
  private _input = document.createElement('input');
  private _list = document.createElement('ul');
  private _empty = document.createElement('p');
}
