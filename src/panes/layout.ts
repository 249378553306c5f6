/**
 * Where panes go in the main area: pure functions (type-only imports), so node runs them.
 */

import type { IPanePlacement } from '../tokens';

/**
 * A plot pane on screen: its id and its size.
 */
export interface IPaneBox {
  id: string;
  width: number;
  height: number;
  /** The height its plot needs to be read (`plotMinHeight`), when more than the rule's minimum. */
  minHeight?: number;
}

/**
 * The smallest pane a plot stays readable in, and what a split costs besides halving.
 */
export interface ISizeRule {
  minWidth: number;
  minHeight: number;
  /** Pixels a side-by-side split takes between the halves (the splitter). */
  gapX: number;
  /** Pixels a top-and-bottom split takes: the splitter plus the new pane's tab bar. */
  gapY: number;
}

/**
 * Whether splitting `box` by `mode` leaves both halves at least the minimum size, and at least
 * the height each half's plot needs: `box`'s own, and `incoming` (the new plot's).
 */
export function canHalve(
  box: IPaneBox,
  mode: 'split-right' | 'split-bottom',
  rule: ISizeRule,
  incoming = 0
): boolean {
  const height = Math.max(rule.minHeight, box.minHeight ?? 0, incoming);
  return mode === 'split-right'
    ? (box.width - rule.gapX) / 2 >= rule.minWidth && box.height >= height
    : (box.height - rule.gapY) / 2 >= height && box.width >= rule.minWidth;
}

/**
 * How `box` can be halved with both halves usable (`canHalve`): along its longer side first, the
 * other way when only that fits; null when neither split keeps both halves usable.
 */
export function halving(
  box: IPaneBox,
  rule: ISizeRule,
  incoming = 0
): 'split-right' | 'split-bottom' | null {
  const wide = box.width >= box.height;
  const order: ('split-right' | 'split-bottom')[] = wide
    ? ['split-right', 'split-bottom']
    : ['split-bottom', 'split-right'];
  return order.find(mode => canHalve(box, mode, rule, incoming)) ?? null;
}

/**
 * Where a clicked plot goes, given the plot panes on screen (`visible`) and the active one
 * (`last`, when it is on screen).
 *
 * - No pane on screen: beside whatever the main area shows.
 * - Else the active pane is halved, so a run of clicks tiles instead of thinning panes out,
 * - unless that leaves a half below the minimum, or below what its plot needs (`incoming` is the
 *   new plot's height, a box's `minHeight` its own): then the largest pane on screen is halved,
 * - and when no pane can be halved, the plot opens as a tab beside the largest pane, so no pane
 *   on screen ever gets smaller than the minimum.
 */
export function placePlot(
  visible: readonly IPaneBox[],
  last: IPaneBox | null,
  rule: ISizeRule,
  incoming = 0
): IPanePlacement {
  if (!visible.length) {
    return { mode: 'split-right' };
  }
  const lastMode = last ? halving(last, rule, incoming) : null;
  if (last && lastMode) {
    return { mode: lastMode, ref: last.id };
  }
  const largest = visible.reduce((best, box) =>
    box.width * box.height > best.width * best.height ? box : best
  );
  const mode = halving(largest, rule, incoming);
  return { mode: mode ?? 'tab-after', ref: largest.id };
}

/**
 * One plot of the default layout: which of its plots (`index`), and where it goes against an
 * earlier one (`ref`, an index) or, when `ref` is null, where a clicked plot would go.
 */
export interface IGridStep {
  index: number;
  mode: 'split-right' | 'split-bottom';
  ref: number | null;
}

/**
 * How the default layout docks its first `count` plots as a grid, in opening order: the first top
 * left, the third to its right, the second below the first, the fourth below the third.
 *
 * #### Notes
 * A plot beyond the fourth has no step: it tiles as a clicked plot does (`placePlot`), and so does
 * a step whose pane cannot be halved (`halving`). Every `ref` names a plot opened by an earlier
 * step.
 */
export function gridSteps(count: number): IGridStep[] {
  const grid: IGridStep[] = [
    { index: 0, mode: 'split-right', ref: null },
    { index: 2, mode: 'split-right', ref: 0 },
    { index: 1, mode: 'split-bottom', ref: 0 },
    { index: 3, mode: 'split-bottom', ref: 2 }
  ];
  return grid.filter(step => step.index < count);
}
