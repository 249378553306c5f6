/**
 * How the sections of a sidebar share its height (see ui/dnd.ts for ui/).
 */

import type { SidePanel } from '@jupyterlab/ui-components';
import type { AccordionPanel, Widget } from '@lumino/widgets';

/**
 * Give the sections of `panel` their first shares of its height; a section with share 0 starts
 * collapsed.
 *
 * #### Notes
 * A section collapsed before its first layout has no size to come back to, and Lumino would
 * expand it to nothing: when that happens it gets an even share, taken from the others in
 * proportion to their sizes.
 */
export function shareSections(
  panel: SidePanel,
  shares: Map<Widget, number>
): void {
  const accordion = panel.content as AccordionPanel;
  accordion.widgets.forEach((widget, index) => {
    if (!shares.get(widget)) {
      accordion.collapse(index);
    }
  });
  accordion.setRelativeSizes(
    accordion.widgets.map(widget => shares.get(widget) ?? 0)
  );
  accordion.expansionToggled.connect((_, index) => {
    const sizes = accordion.relativeSizes();
    if (accordion.widgets[index].isHidden || sizes[index] > 0) {
      return;
    }
    const share =
      1 / accordion.widgets.filter(widget => !widget.isHidden).length;
    accordion.setRelativeSizes(
      sizes.map((size, i) => (i === index ? share : size * (1 - share)))
    );
  });
}
