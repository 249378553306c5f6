/**
 * The plots of one source as a tree: a folding row per group, a row per plot, worked with the
 * keyboard like Lab's table of contents (see model.ts for sources/).
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { caretDownIcon } from '@jupyterlab/ui-components';

import { groupLabel, PLOT_GROUPS } from '../api/plots';
import { IPlot } from '../api/types';
import { wasDragged } from '../ui/dnd';
import { element } from '../ui/dom';
import { RovingFocus } from '../ui/roving';

const GROUP_CLASS = 'jp-dashdock-PlotGroup';
const PLOT_CLASS = 'jp-dashdock-Plot';

/**
 * The tree of plots (an ARIA tree): one tab stop, Up/Down/Home/End between the rows shown,
 * Left/Right fold, unfold and enter a group, Enter or Space folds a group or opens a plot.
 *
 * #### Notes
 * Folding only shows or hides a group, so focus stays where it was. Which groups are folded is
 * remembered while Lab runs. Dask lists its GPU plots for clusters without GPUs too: that group
 * starts folded unless the source's workers are known to report GPUs (the history's recorder reads
 * their metrics). While a filter is on, every group with a match shows unfolded and a fold lasts
 * until the next render.
 */
export class PlotTree {
  constructor(options: PlotTree.IOptions) {
    this._options = options;
    this.node = element('ul', 'jp-dashdock-PlotList');
    this.node.setAttribute('role', 'tree');
    this.node.hidden = true;
    this._roving = new RovingFocus({
      container: this.node,
      rows: () => this._shownRows()
    });
    this.node.addEventListener('click', this);
    this.node.addEventListener('keydown', this);
  }

  readonly node: HTMLUListElement;

  /** Show `plots` (already filtered: `filtering` says whether a filter is on). */
  render(
    plots: readonly IPlot[],
    label: string,
    filtering: boolean,
    gpus: number | null = null
  ): void {
    this._filtering = filtering;
    this.node.setAttribute('aria-label', label);
    const folded = (group: string) =>
      group === 'gpu' && !this._touched.has(group)
        ? !gpus
        : this._folded.has(group);
    this.node.replaceChildren(
      ...groupRows(
        plots,
        group => filtering || !folded(group),
        gpus,
        this._options.plotRow,
        this._options.trans
      )
    );
    this.node.hidden = !plots.length;
    this._roving.update();
  }

  /** An empty tree is no tree: it leaves the page and the tab order. */
  clear(): void {
    this.node.replaceChildren();
    this.node.hidden = true;
  }

  /** The first plot shown, if any. */
  firstPlot(): HTMLElement | undefined {
    return this._shownRows().find(row => row.classList.contains(PLOT_CLASS));
  }

  /** Focus the first plot shown, or the first row when `plot` is false. */
  focusFirst(plot: boolean): void {
    const row = plot ? this.firstPlot() : this._shownRows()[0];
    if (row) {
      this._roving.focus(row);
    }
  }

  handleEvent(event: Event): void {
    if (event.type === 'click') {
      this._evtClick(event as MouseEvent);
    } else if (event.type === 'keydown') {
      this._evtKeydown(event as KeyboardEvent);
    }
  }

  dispose(): void {
    this._roving.dispose();
    this.node.removeEventListener('click', this);
    this.node.removeEventListener('keydown', this);
  }

  private _evtClick(event: MouseEvent): void {
    const target = event.target as HTMLElement;
    if (target.closest(`.${GROUP_CLASS}-header`)) {
      const group = target.closest<HTMLElement>(`.${GROUP_CLASS}`)!;
      this._toggle(group);
      this._roving.focus(group);
      return;
    }
    const item = target.closest<HTMLElement>(`.${PLOT_CLASS}`);
    if (item && !wasDragged(item)) {
      this._options.open(item);
    }
  }

  /** What a row does with a key; moving between rows is the roving focus's. */
  private _evtKeydown(event: KeyboardEvent): void {
    const row = event.target as HTMLElement;
    const isGroup = row.classList.contains(GROUP_CLASS);
    if (!isGroup && !row.classList.contains(PLOT_CLASS)) {
      return;
    }
    switch (event.key) {
      case 'Enter':
      case ' ':
        if (isGroup) {
          this._toggle(row);
        } else {
          this._options.open(row);
        }
        break;
      case 'ArrowRight':
        if (!isGroup) {
          return;
        }
        if (!isExpanded(row)) {
          this._toggle(row);
        } else {
          const first = row.querySelector<HTMLElement>(`.${PLOT_CLASS}`);
          if (first) {
            this._roving.focus(first);
          }
        }
        break;
      case 'ArrowLeft':
        if (isGroup && isExpanded(row)) {
          this._toggle(row);
        } else if (!isGroup) {
          this._roving.focus(row.closest<HTMLElement>(`.${GROUP_CLASS}`)!);
        }
        break;
      default:
        return;
    }
    event.preventDefault();
  }

  private _toggle(row: HTMLElement): void {
    const expanded = !isExpanded(row);
    setExpanded(row, expanded);
    if (!this._filtering) {
      const group = row.dataset.group ?? '';
      this._touched.add(group);
      if (expanded) {
        this._folded.delete(group);
      } else {
        this._folded.add(group);
      }
    }
    this._roving.update(row);
  }

  /** The rows shown, in order: group rows and the plots of unfolded groups. */
  private _shownRows(): HTMLElement[] {
    return Array.from(
      this.node.querySelectorAll<HTMLElement>('[role="treeitem"]')
    ).filter(row => !row.parentElement?.closest('[hidden]'));
  }

  private _options: PlotTree.IOptions;
  private _roving: RovingFocus;
  private _folded = new Set<string>();
  private _touched = new Set<string>(); // groups the user folded or unfolded
  private _filtering = false;
}

export namespace PlotTree {
  export interface IOptions {
    /** The row of one plot (its dataset says what to open; it may be made draggable). */
    plotRow: (plot: IPlot) => HTMLElement;
    /** Open the plot of a row. */
    open: (row: HTMLElement) => void;
    trans: TranslationBundle;
  }
}

/**
 * The group rows, each holding its plots, in the sidebar's group order; `expanded(group)` says
 * which start unfolded. A group the client does not know yet is shown under "other", not dropped.
 */
function groupRows(
  plots: readonly IPlot[],
  expanded: (group: string) => boolean,
  gpus: number | null,
  plotRow: (plot: IPlot) => HTMLElement,
  trans: TranslationBundle
): HTMLElement[] {
  const groupOf = (plot: IPlot) =>
    PLOT_GROUPS.includes(plot.group) ? plot.group : 'other';
  return PLOT_GROUPS.map(group => ({
    group,
    members: plots.filter(plot => groupOf(plot) === group)
  }))
    .filter(({ members }) => members.length)
    .map(({ group, members }) => {
      const row = element('li', GROUP_CLASS);
      row.dataset.group = group;
      row.setAttribute('role', 'treeitem');
      const label = groupLabel(group, trans);
      const note = group === 'gpu' ? gpuNote(gpus, trans) : '';
      const count = trans._n('%1 plot', '%1 plots', members.length);
      row.setAttribute(
        'aria-label',
        [label, count, note].filter(Boolean).join(', ')
      );
      const header = element('div', `${GROUP_CLASS}-header`, row);
      header.title =
        group === 'gpu' && !gpus
          ? trans.__(
              '%1: Dask lists these plots for every cluster; they show data only when the workers have NVIDIA GPUs. Enter or click to fold.',
              label
            )
          : trans.__('%1: Enter or click to fold or unfold', label);
      caretDownIcon.element({
        container: element('span', `${GROUP_CLASS}-caret`, header),
        elementSize: 'small'
      });
      element('h3', '', header).textContent = label;
      element('span', `${GROUP_CLASS}-count`, header).textContent = String(
        members.length
      );
      if (note) {
        element('span', `${GROUP_CLASS}-note`, header).textContent = note;
      }
      const list = element('ul', '', row);
      list.setAttribute('role', 'group');
      list.append(...members.map(plotRow));
      setExpanded(row, expanded(group));
      return row;
    });
}

/** Fold or unfold a group row. */
function setExpanded(row: HTMLElement, expanded: boolean): void {
  row.setAttribute('aria-expanded', String(expanded));
  row.querySelector<HTMLElement>(':scope > ul')!.hidden = !expanded;
}

function isExpanded(row: HTMLElement): boolean {
  return row.getAttribute('aria-expanded') === 'true';
}

/** What the GPU group says of the workers: how many report GPUs, or that it needs some. */
function gpuNote(gpus: number | null, trans: TranslationBundle): string {
  return gpus
    ? trans._n(
        '%2 worker with a GPU',
        '%2 workers with GPUs',
        gpus,
        gpus.toLocaleString()
      )
    : trans.__('needs NVIDIA GPUs on the workers');
}
