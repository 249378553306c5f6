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
 * Give the sections of `panel` their shares of its height (weights: a section with weight 0
 * starts collapsed, and counts as 1 once opened), and keep every open section usable.
 *
 * #### Notes
 * Lumino gives a collapsed section's height to the last open one and restores a reopened
 * section's old size by taking it from one neighbour, so after a few folds a section opened
 * again can get no height at all. Here each fold or unfold shares the height again: a section
 * opened gets its fair share (by weight, among the open ones), the others keep their proportions
 * in the rest, and none is left under half its fair share. Sizes the user drags stay until the
 * next fold or unfold.
 */
export function shareSections(
  panel: SidePanel,
  weights: Map<Widget, number>
): void {
  const accordion = panel.content as AccordionPanel;
  accordion.widgets.forEach((widget, index) => {
    if (!weights.get(widget)) {
      accordion.collapse(index);
    }
  });
  accordion.setRelativeSizes(
    accordion.widgets.map(widget => weights.get(widget) ?? 0)
  );
  accordion.expansionToggled.connect((_, index) => {
    const open = accordion.widgets.map(widget => !widget.isHidden);
    const weight = accordion.widgets.map(widget => weights.get(widget) || 1);
    const titles = accordion.titles.reduce(
      (sum, title) => sum + title.offsetHeight,
      0
    );
    const room = accordion.node.clientHeight - titles;
    accordion.setRelativeSizes(
      shared(
        accordion.relativeSizes(),
        open,
        weight,
        index,
        room > 0 ? LEAST_HEIGHT / room : 0
      )
    );
  });
}

/**
 * Relative sizes after section `toggled` was opened or closed: `sizes` as they are, `open` which
 * sections are, `weight` their weights, `least` the least size of an open section (as a part of
 * the whole, kept when every open section can have it). Pure, so node runs it.
 */
export function shared(
  sizes: readonly number[],
  open: readonly boolean[],
  weight: readonly number[],
  toggled: number,
  least = 0
): number[] {
  const openWeight = weight.reduce((sum, w, i) => sum + (open[i] ? w : 0), 0);
  if (!openWeight) {
    return sizes.map(() => 0);
  }
  const fair = weight.map(w => w / openWeight);
  let next = sizes.map((size, i) => (open[i] ? Math.max(size, 0) : 0));
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
  const opened = open.filter(Boolean).length;
  const floor = least * opened <= 1 ? least : 0;
  next = next.map((size, i) =>
    open[i] ? Math.max(size, fair[i] * LEAST_OF_SHARE) : 0
  );
  let total = next.reduce((sum, size) => sum + size, 0);
  next = next.map(size => size / total);
  // Raise the sections under the floor to it, taking the room from those above it.
  const low = next.map((size, i) => open[i] && size < floor);
  const needed = next.reduce(
    (sum, size, i) => sum + (low[i] ? floor - size : 0),
    0
  );
  const spare = next.reduce(
    (sum, size, i) => sum + (open[i] && !low[i] ? size - floor : 0),
    0
  );
  if (needed > 0 && spare >= needed) {
    next = next.map((size, i) =>
      !open[i] ? 0 : low[i] ? floor : size - ((size - floor) / spare) * needed
    );
  }
  total = next.reduce((sum, size) => sum + size, 0);
  return next.map(size => size / total);
}
