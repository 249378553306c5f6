/**
 * How the sections of a sidebar share its height (see ui/dnd.ts for ui/).
 */

import type { SidePanel } from '@jupyterlab/ui-components';
import type { AccordionPanel, Widget } from '@lumino/widgets';

/** The least part of its fair share an open section keeps when sizes are shared again. */
const LEAST_OF_SHARE = 0.5;
/** The least height in pixels an open section keeps, when the sidebar has room for it. */
const LEAST_HEIGHT = 96;

/**
 * The sections of `panel`, in rank order, sharing its height by weight (a section with weight 0
 * starts collapsed, and counts as 1 once opened); every open section is kept usable.
 *
 * #### Notes
 * Lumino gives a collapsed section's height to the last open one and restores a reopened
 * section's old size by taking it from one neighbour, so after a few folds a section opened
 * again can get no height at all. Here each fold or unfold shares the height again: a section
 * opened gets its fair share (by weight, among the open ones), the others keep their proportions
 * in the rest, and none is left under half its fair share. Sizes the user drags stay until the
 * next fold or unfold.
 */
export class SharedSections {
  /**
   * Sections added before `ready` resolves (the plugins activating with the sidebar) are laid
   * out together then, before Lab restores its layout; later ones are inserted as they come.
   */
  constructor(
    panel: SidePanel,
    ready: Promise<unknown>,
    restored: Promise<unknown>
  ) {
    this._panel = panel;
    // Followed from the first moment: a title clicked before the layout is shared (a loaded
    // machine, a quick user) must not get Lumino's zero height either.
    this._accordion.expansionToggled.connect(this._onToggled, this);
    void ready.then(() => this._start());
    // Lab restores which sections were open and the sizes it saved last, which may be older than
    // the last fold: an open section restored to no height gets its room back.
    void restored.then(() => this._keepUsable());
    // A sidebar restored while hidden had no height to share: each section gets its room back
    // when the sidebar is shown (a reload with History open gave it 35 px).
    let height = 0;
    new ResizeObserver(() => {
      const shown = this._accordion.node.clientHeight;
      if (height === 0 && shown > 0 && this._started) {
        this._keepUsable();
      }
      height = shown;
    }).observe(this._accordion.node);
  }

  /**
   * Add `section` after those of lower or equal rank, with its share of the height.
   */
  add(
    section: Widget,
    options: { rank: number; weight: number; least?: number }
  ): void {
    const index = this._ranks.filter(rank => rank <= options.rank).length;
    this._ranks.splice(index, 0, options.rank);
    this._weights.set(section, options.weight);
    this._least.set(section, options.least ?? LEAST_HEIGHT);
    if (!this._started) {
      this._waiting.splice(index, 0, section);
      return;
    }
    this._panel.insertWidget(index, section);
    const accordion = this._accordion;
    // Lumino appends a section's title and node whatever its index: keep the DOM (the order of
    // tab stops and of screen readers) in the order shown.
    accordion.widgets.forEach((widget, i) =>
      accordion.node.append(accordion.titles[i], widget.node)
    );
    if (!options.weight) {
      this._adding = true;
      accordion.collapse(accordion.widgets.indexOf(section));
      this._adding = false;
    }
    this._share();
  }

  private _start(): void {
    const accordion = this._accordion;
    this._waiting.forEach(section => this._panel.addWidget(section));
    this._waiting = [];
    accordion.widgets.forEach((widget, index) => {
      if (!this._weights.get(widget)) {
        accordion.collapse(index);
      }
    });
    this._share();
    this._started = true;
  }

  private _onToggled(accordion: AccordionPanel, index: number): void {
    if (this._adding) {
      return; // a section added collapsed: `add` shares the height
    }
    this._shareAgain(index);
  }

  private _keepUsable(): void {
    this._shareAgain(-1);
  }

  /** Share the height again after section `index` was toggled (-1: none, only keep them usable). */
  private _shareAgain(index: number): void {
    const accordion = this._accordion;
    const open = accordion.widgets.map(widget => !widget.isHidden);
    const weight = accordion.widgets.map(
      widget => this._weights.get(widget) || 1
    );
    const titles = accordion.titles.reduce(
      (sum, title) => sum + title.offsetHeight,
      0
    );
    const room = accordion.node.clientHeight - titles;
    const least = accordion.widgets.map(widget =>
      room > 0 ? (this._least.get(widget) ?? LEAST_HEIGHT) / room : 0
    );
    accordion.setRelativeSizes(
      shared(accordion.relativeSizes(), open, weight, index, least)
    );
  }

  /** Every section its weight's share; an open one with weight 0 (opened by the user) counts 1. */
  private _share(): void {
    const accordion = this._accordion;
    accordion.setRelativeSizes(
      accordion.widgets.map(widget =>
        widget.isHidden ? 0 : this._weights.get(widget) || 1
      )
    );
  }

  private get _accordion(): AccordionPanel {
    return this._panel.content as AccordionPanel;
  }

  private _panel: SidePanel;
  private _started = false;
  private _adding = false;
  private _waiting: Widget[] = [];
  private _ranks: number[] = [];
  private _weights = new Map<Widget, number>();
  private _least = new Map<Widget, number>();
}

/**
 * Relative sizes after section `toggled` was opened or closed: `sizes` as they are, `open` which
 * sections are, `weight` their weights, `least` the least size of an open section, or of each
 * (as a part of the whole; cut in proportion when they do not fit together). Pure, so node runs it.
 */
export function shared(
  sizes: readonly number[],
  open: readonly boolean[],
  weight: readonly number[],
  toggled: number,
  least: number | readonly number[] = 0
): number[] {
  const openWeight = weight.reduce((sum, w, i) => sum + (open[i] ? w : 0), 0);
  if (!openWeight) {
    return sizes.map(() => 0);
  }
  const fair = weight.map(w => w / openWeight);
  // Lumino reports NaN sizes for an accordion not laid out yet (a sidebar restored hidden).
  let next = sizes.map((size, i) =>
    open[i] && Number.isFinite(size) ? Math.max(size, 0) : 0
  );
  if (open[toggled]) {
    // The opened section takes its fair share; the others share the rest as they were.
    const others = next.reduce(
      (sum, size, i) => sum + (i === toggled ? 0 : size),
      0
    );
    const rest = 1 - fair[toggled];
    next = next.map((size, i) =>
      i === toggled
        ? fair[toggled]
        : !open[i]
          ? 0
          : others > 0
            ? (size / others) * rest
            : fair[i]
    );
  }
  const wanted = sizes.map((_, i) =>
    open[i] ? (typeof least === 'number' ? least : (least[i] ?? 0)) : 0
  );
  // Floors that do not fit together are cut in proportion: a section that needs more keeps more.
  const wantedTotal = wanted.reduce((sum, w) => sum + w, 0);
  const floors = wanted.map(w => (wantedTotal > 1 ? w / wantedTotal : w));
  next = next.map((size, i) =>
    open[i] ? Math.max(size, fair[i] * LEAST_OF_SHARE) : 0
  );
  let total = next.reduce((sum, size) => sum + size, 0);
  next = next.map(size => size / total);
  // Raise the sections under their floor to it, taking the room from those above theirs.
  const low = next.map((size, i) => open[i] && size < floors[i]);
  const needed = next.reduce(
    (sum, size, i) => sum + (low[i] ? floors[i] - size : 0),
    0
  );
  const spare = next.reduce(
    (sum, size, i) => sum + (open[i] && !low[i] ? size - floors[i] : 0),
    0
  );
  // (Floors cut to fill the whole leave exactly the room needed: allow for rounding.)
  if (needed > 0 && spare > 0 && spare >= needed - 1e-9) {
    next = next.map((size, i) =>
      !open[i]
        ? 0
        : low[i]
          ? floors[i]
          : size - ((size - floors[i]) / spare) * needed
    );
  }
  total = next.reduce((sum, size) => sum + size, 0);
  return next.map(size => size / total);
}
