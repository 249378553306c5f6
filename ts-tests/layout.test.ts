// Where clicked plots and the Layout button put panes (src/panes/layout.ts).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import {
  canHalve,
  gridSteps,
  halving,
  IPaneBox,
  ISizeRule,
  placePlot
} from '../src/panes/layout';

/**
 * A main area of panes as rectangles, split the way a DockPanel splits: `split-right` halves the
 * reference's width and puts the new pane on the right, `split-bottom` halves its height and puts
 * the new pane below. Without a reference, the plots share the area beside the main area's
 * content; the content (a launcher, a notebook) is left out of this model.
 */
class Area {
  rects = new Map<string, { x: number; y: number; w: number; h: number }>();

  constructor(
    readonly width: number,
    readonly height: number
  ) {}

  place(id: string, mode: string | undefined, ref: string | null): void {
    if (ref === null) {
      assert.equal(
        this.rects.size,
        0,
        'only the first pane goes against the main area'
      );
      this.rects.set(id, { x: 0, y: 0, w: this.width, h: this.height });
      return;
    }
    const r = this.rects.get(ref);
    assert.ok(r, `ref ${ref} is a pane already placed`);
    if (mode === 'split-right') {
      r.w /= 2;
      this.rects.set(id, { x: r.x + r.w, y: r.y, w: r.w, h: r.h });
    } else if (mode === 'split-bottom') {
      r.h /= 2;
      this.rects.set(id, { x: r.x, y: r.y + r.h, w: r.w, h: r.h });
    } else {
      assert.fail(`unexpected mode ${mode}`);
    }
  }

  box(id: string): IPaneBox {
    const r = this.rects.get(id)!;
    return { id, width: r.w, height: r.h };
  }
}

const RULE: ISizeRule = { minWidth: 320, minHeight: 200, gapX: 4, gapY: 32 };

describe('canHalve and halving', () => {
  it('halves a wide pane side by side and a tall one top and bottom', () => {
    assert.equal(
      halving({ id: 'a', width: 800, height: 600 }, RULE),
      'split-right'
    );
    assert.equal(
      halving({ id: 'b', width: 700, height: 900 }, RULE),
      'split-bottom'
    );
  });

  it('counts the splitter and the new tab bar against the halves', () => {
    const box = { id: 'a', width: 644, height: 432 };
    assert.ok(canHalve(box, 'split-right', RULE)); // (644 - 4) / 2 = 320
    assert.ok(canHalve(box, 'split-bottom', RULE)); // (432 - 32) / 2 = 200
    const smaller = { id: 'b', width: 643, height: 431 };
    assert.ok(!canHalve(smaller, 'split-right', RULE));
    assert.ok(!canHalve(smaller, 'split-bottom', RULE));
    assert.equal(halving(smaller, RULE), null);
  });

  it('splits the other way when the longer side cannot be halved', () => {
    // (600 - 4) / 2 = 298 is too narrow; (500 - 32) / 2 = 234 is high enough.
    assert.equal(
      halving({ id: 'a', width: 600, height: 500 }, RULE),
      'split-bottom'
    );
  });

  it('never halves a pane already below the minimum', () => {
    assert.equal(halving({ id: 'z', width: 0, height: 0 }, RULE), null);
    assert.equal(halving({ id: 'y', width: 2000, height: 150 }, RULE), null);
  });
});

describe('placePlot', () => {
  it('opens the first plot beside whatever the main area shows', () => {
    assert.deepEqual(placePlot([], null, RULE), { mode: 'split-right' });
  });

  it('halves the active pane when both halves stay usable', () => {
    const a = { id: 'a', width: 800, height: 600 };
    const b = { id: 'b', width: 400, height: 600 };
    assert.deepEqual(placePlot([a, b], a, RULE), {
      mode: 'split-right',
      ref: 'a'
    });
    assert.deepEqual(placePlot([a, b], b, RULE), {
      mode: 'split-bottom',
      ref: 'b'
    });
  });

  it('halves the largest pane when the active one is too small to halve', () => {
    const small = { id: 's', width: 330, height: 210 };
    const large = { id: 'l', width: 700, height: 450 };
    const middle = { id: 'm', width: 660, height: 300 };
    assert.deepEqual(placePlot([small, middle, large], small, RULE), {
      mode: 'split-right',
      ref: 'l'
    });
  });

  it('opens a tab beside the largest pane when no pane can be halved', () => {
    const a = { id: 'a', width: 330, height: 210 };
    const b = { id: 'b', width: 400, height: 300 };
    assert.deepEqual(placePlot([a, b], a, RULE), {
      mode: 'tab-after',
      ref: 'b'
    });
    // Without an active pane on screen too.
    assert.deepEqual(placePlot([a, b], null, RULE), {
      mode: 'tab-after',
      ref: 'b'
    });
  });

  it('never leaves a pane below the minimum, however many plots open', () => {
    // Each plot becomes the active pane; a tab shares its area's box with the pane it joined.
    for (const [width, height] of [
      [1300, 900],
      [1600, 950],
      [700, 500],
      [400, 250]
    ]) {
      const area = new Area(width, height);
      let last: string | null = null;
      const tabs: string[] = [];
      for (let i = 0; i < 30; i++) {
        const id = `p${i}`;
        const visible = [...area.rects.keys()].map(key => area.box(key));
        const placement = placePlot(
          visible,
          last === null ? null : area.box(last),
          { ...RULE, gapX: 0, gapY: 0 }
        );
        if (placement.mode === 'tab-after') {
          tabs.push(id);
          last = placement.ref!;
          continue;
        }
        area.place(id, placement.mode, placement.ref ?? null);
        last = id;
      }
      for (const r of area.rects.values()) {
        assert.ok(
          r.w >= 320 && r.h >= 200,
          `${width}x${height}: ${JSON.stringify(r)}`
        );
      }
      assert.ok(tabs.length > 0, 'past the minimum, plots open as tabs');
    }
  });

  it('tiles a run of clicks in a large area instead of thinning panes out', () => {
    const area = new Area(1600, 900);
    let last: string | null = null;
    const modes: (string | undefined)[] = [];
    for (const id of ['p0', 'p1', 'p2', 'p3', 'p4']) {
      const visible = [...area.rects.keys()].map(key => area.box(key));
      const placement = placePlot(
        visible,
        last === null ? null : area.box(last),
        { ...RULE, gapX: 0, gapY: 0 }
      );
      modes.push(placement.mode);
      area.place(id, placement.mode, placement.ref ?? null);
      last = id;
    }
    assert.deepEqual(modes, [
      'split-right',
      'split-right',
      'split-bottom',
      'split-right',
      'split-bottom'
    ]);
    assert.deepEqual(area.rects.get('p4'), { x: 1200, y: 675, w: 400, h: 225 });
  });
});

describe('gridSteps', () => {
  const layout = (count: number) => {
    const area = new Area(1000, 800);
    for (const step of gridSteps(count)) {
      area.place(
        String(step.index),
        step.mode,
        step.ref === null ? null : String(step.ref)
      );
    }
    return Object.fromEntries(area.rects);
  };

  it('opens nothing for no plots (or a count that is not one)', () => {
    assert.deepEqual(gridSteps(0), []);
    assert.deepEqual(gridSteps(-1), []);
    assert.deepEqual(gridSteps(NaN), []);
  });

  it('docks one plot beside the main area content', () => {
    assert.deepEqual(gridSteps(1), [
      { index: 0, mode: 'split-right', ref: null }
    ]);
  });

  it('docks two plots one above the other', () => {
    assert.deepEqual(gridSteps(2), [
      { index: 0, mode: 'split-right', ref: null },
      { index: 1, mode: 'split-bottom', ref: 0 }
    ]);
    assert.deepEqual(layout(2), {
      0: { x: 0, y: 0, w: 1000, h: 400 },
      1: { x: 0, y: 400, w: 1000, h: 400 }
    });
  });

  it('docks three plots: two on the left, the third on the right', () => {
    assert.deepEqual(layout(3), {
      0: { x: 0, y: 0, w: 500, h: 400 },
      1: { x: 0, y: 400, w: 500, h: 400 },
      2: { x: 500, y: 0, w: 500, h: 800 }
    });
  });

  it('docks four plots as a 2 x 2 grid in the order the setting describes', () => {
    assert.deepEqual(gridSteps(4), [
      { index: 0, mode: 'split-right', ref: null },
      { index: 2, mode: 'split-right', ref: 0 },
      { index: 1, mode: 'split-bottom', ref: 0 },
      { index: 3, mode: 'split-bottom', ref: 2 }
    ]);
    // First top left, second below it, third top right, fourth below the third.
    assert.deepEqual(layout(4), {
      0: { x: 0, y: 0, w: 500, h: 400 },
      1: { x: 0, y: 400, w: 500, h: 400 },
      2: { x: 500, y: 0, w: 500, h: 400 },
      3: { x: 500, y: 400, w: 500, h: 400 }
    });
  });

  it('has no step beyond the fourth plot: the fifth tiles as a click does', () => {
    assert.deepEqual(gridSteps(5), gridSteps(4));
    assert.deepEqual(gridSteps(50), gridSteps(4));
  });

  it('refers only to plots an earlier step opened', () => {
    for (let count = 0; count <= 6; count++) {
      const opened = new Set<number>();
      for (const step of gridSteps(count)) {
        assert.ok(step.index < count);
        assert.ok(step.ref === null || opened.has(step.ref), `count ${count}`);
        assert.equal(step.ref === null, opened.size === 0);
        opened.add(step.index);
      }
      assert.equal(opened.size, Math.min(count, 4));
    }
  });
});

describe('what a plot needs', () => {
  it('does not halve a pane below the height its plot or the new plot needs', () => {
    // 700 px high: halves of 334 px, enough for the rule (200) and for a Graph (340)? No.
    const graph: IPaneBox = {
      id: 'g',
      width: 600,
      height: 700,
      minHeight: 340
    };
    assert.equal(canHalve(graph, 'split-bottom', RULE), false);
    assert.equal(
      canHalve({ ...graph, minHeight: 0 }, 'split-bottom', RULE),
      true
    );
    assert.equal(
      canHalve({ ...graph, minHeight: 0 }, 'split-bottom', RULE, 340),
      false
    );
    // Side by side keeps the height: fine for both.
    assert.equal(canHalve(graph, 'split-right', RULE, 340), false); // 298 px wide halves
    const wide: IPaneBox = { ...graph, width: 1000 };
    assert.equal(canHalve(wide, 'split-right', RULE, 340), true);
  });

  it('opens a plot as a tab rather than squeeze a Progress under another pane', () => {
    const tall: IPaneBox = { id: 'a', width: 500, height: 560, minHeight: 0 };
    assert.deepEqual(placePlot([tall], tall, RULE), {
      mode: 'split-bottom',
      ref: 'a'
    });
    assert.deepEqual(placePlot([tall], tall, RULE, 300), {
      mode: 'tab-after',
      ref: 'a'
    });
  });
});
