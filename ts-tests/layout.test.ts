// Where clicked plots and the Layout button put panes (src/panes/layout.ts).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { gridSteps, IPaneBox, tilePlacement } from '../src/panes/layout';

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

describe('tilePlacement', () => {
  it('opens the first plot beside whatever the main area shows', () => {
    assert.deepEqual(tilePlacement(null), { mode: 'split-right' });
  });

  it('halves a wide pane side by side', () => {
    assert.deepEqual(tilePlacement({ id: 'a', width: 800, height: 600 }), {
      mode: 'split-right',
      ref: 'a'
    });
  });

  it('halves a tall pane top and bottom', () => {
    assert.deepEqual(tilePlacement({ id: 'b', width: 400, height: 600 }), {
      mode: 'split-bottom',
      ref: 'b'
    });
  });

  it('splits a square pane side by side', () => {
    assert.deepEqual(tilePlacement({ id: 'c', width: 500, height: 500 }), {
      mode: 'split-right',
      ref: 'c'
    });
  });

  it('places against the pane it is given, whatever its size (a collapsed one too)', () => {
    assert.deepEqual(tilePlacement({ id: 'z', width: 0, height: 0 }), {
      mode: 'split-right',
      ref: 'z'
    });
    assert.deepEqual(tilePlacement({ id: 'y', width: 0, height: 1 }), {
      mode: 'split-bottom',
      ref: 'y'
    });
  });

  it('tiles a run of clicks instead of thinning panes out', () => {
    // Each click splits the pane opened by the one before (it becomes the active pane).
    const area = new Area(1600, 900);
    let last: string | null = null;
    const modes: (string | undefined)[] = [];
    for (const id of ['p0', 'p1', 'p2', 'p3', 'p4']) {
      const placement = tilePlacement(last === null ? null : area.box(last));
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
    // No pane is ever thinner than a quarter of the area's width or height.
    for (const r of area.rects.values()) {
      assert.ok(r.w >= 1600 / 4 && r.h >= 900 / 4, JSON.stringify(r));
    }
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
