/**
 * Where panes go in the main area: pure functions (type-only imports), so node runs them.
 */

import type { IPanePlacement } from '../tokens';

/**
 * The pane a new one is placed against: its id and its size on screen.
 */
export interface IPaneBox {
  id: string;
  width: number;
  height: number;
}

/**
 * Where a clicked plot goes: beside the main area's content when there is no pane on screen to
 * place it against, else by halving the last active pane along its longer side, so panes tile
 * instead of thinning out.
 */
export function tilePlacement(last: IPaneBox | null): IPanePlacement {
  if (!last) {
    return { mode: 'split-right' };
  }
  return {
    mode: last.width >= last.height ? 'split-right' : 'split-bottom',
    ref: last.id
  };
}

/**
 * One plot of the default layout: which of its plots (`index`), and where it goes against an
 * earlier one (`ref`, an index) or, when `ref` is null, against the main area.
 */
export interface IGridStep {
  index: number;
  mode: IPanePlacement['mode'];
  ref: number | null;
}

/**
 * How the default layout docks its first `count` plots as a grid, in opening order: the first top
 * left, the third to its right, the second below the first, the fourth below the third.
 *
 * #### Notes
 * A plot beyond the fourth has no step: it tiles as a clicked plot does (`tilePlacement`). Every
 * `ref` names a plot opened by an earlier step.
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
