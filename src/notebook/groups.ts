/**
 * The plots a client's repr lists under its key chips, grouped as the sidebar groups them (see
 * data.ts for notebook/). Pure (type imports only), so node runs it.
 */

import { PLOT_GROUPS } from '../api/plots';
import type { IPlot } from '../api/types';

/**
 * `plots` in the sidebar's group order, in the server's order within a group, without the plots
 * at `shown` (the chips above the list); a group the server adds later goes under "other".
 */
export function groupPlots(
  plots: readonly IPlot[],
  shown: ReadonlySet<string>
): [string, IPlot[]][] {
  const groups = new Map<string, IPlot[]>(
    PLOT_GROUPS.map(group => [group, []])
  );
  for (const plot of plots) {
    if (!shown.has(plot.path)) {
      const group = groups.has(plot.group) ? plot.group : 'other';
      groups.get(group)!.push(plot);
    }
  }
  return [...groups].filter(([, members]) => members.length > 0);
}
