// How the sidebar's sections share its height (src/ui/sections.ts).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { shared } from '../src/ui/sections';

const sum = (sizes: number[]) => sizes.reduce((a, b) => a + b, 0);
const near = (actual: number, expected: number) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${actual} != ${expected}`);

describe('shared', () => {
  it('gives a section opened with no size left its fair share', () => {
    // Lumino left the reopened third section nothing and the first all.
    const sizes = shared([1, 0, 0], [true, false, true], [1, 2, 1], 2);
    near(sizes[2], 0.5);
    near(sizes[0], 0.5);
    near(sizes[1], 0);
  });

  it('keeps the proportions the user gave the sections already open', () => {
    const sizes = shared(
      [0.6, 0.2, 0, 0.2],
      [true, true, true, true],
      [1, 1, 1, 1],
      2
    );
    near(sizes[2], 0.25);
    near(sizes[0] / sizes[1], 3);
    near(sum(sizes), 1);
  });

  it('lets no open section fall under half its fair share', () => {
    const sizes = shared([0.98, 0.01, 0.01], [true, true, true], [1, 1, 1], 0);
    assert.ok(sizes[1] >= (1 / 3) * 0.5 - 1e-9);
    near(sum(sizes), 1);
  });

  it('gives a closed section nothing and the rest all', () => {
    const sizes = shared([0.5, 0.3, 0.2], [true, false, true], [2, 1, 1], 1);
    near(sizes[1], 0);
    near(sum(sizes), 1);
    near(sizes[0] / sizes[2], 2.5);
  });

  it('closes everything when nothing is open', () => {
    assert.deepEqual(shared([1, 0], [false, false], [1, 1], 0), [0, 0]);
  });
});

describe('shared with a least size', () => {
  it('raises a section under the least size to it, from the larger ones', () => {
    const sizes = shared(
      [0.1, 0.6, 0.3],
      [true, true, true],
      [0.6, 2, 1],
      0,
      0.2
    );
    near(sizes[0], 0.2);
    near(sum(sizes), 1);
    assert.ok(sizes[1] > sizes[2]);
  });

  it('keeps the shares when not every open section can have the least size', () => {
    const sizes = shared([0.5, 0.5], [true, true], [1, 1], 0, 0.6);
    near(sizes[0], 0.5);
  });
});

describe('shared after a restore', () => {
  it('with no section toggled, gives an open section restored to nothing its room', () => {
    // Lab restored History open with the sizes it saved while it was folded.
    const sizes = shared([0.4, 0.6, 0], [true, true, true], [1, 2, 1], -1, 0.2);
    assert.ok(sizes[2] >= 0.2 - 1e-9);
    near(sum(sizes), 1);
  });
});

describe('a section that needs more room', () => {
  it('gets its own least height when the others can give it', () => {
    // Five open sections of equal weight; the last (History) needs 0.3 of the height.
    const sizes = shared(
      [0.3, 0.3, 0.3, 0.05, 0.05],
      [true, true, true, true, true],
      [1, 1, 1, 1, 1],
      -1,
      [0.1, 0.1, 0.1, 0.1, 0.3]
    );
    assert.ok(sizes[4] >= 0.3 - 1e-9, String(sizes));
    assert.ok(sizes[3] >= 0.1 - 1e-9, String(sizes));
    near(sum(sizes), 1);
  });

  it('cuts floors that do not fit together in proportion', () => {
    const sizes = shared([0.5, 0.5], [true, true], [1, 1], -1, [0.4, 1.2]);
    near(sizes[0], 0.25);
    near(sizes[1], 0.75);
  });
});

describe('floors that fill the whole', () => {
  it('are each given, though the room left is exactly what they need', () => {
    const sizes = shared(
      [0.28, 0.28, 0.07, 0.28, 0.07],
      [true, true, true, true, true],
      [1, 1, 1, 1, 1],
      -1,
      [0.17, 0.17, 0.17, 0.17, 0.35].map(f => f / 1.03)
    );
    assert.ok(sizes[4] >= 0.35 / 1.03 - 1e-9, String(sizes));
    near(sum(sizes), 1);
  });
});

describe('sizes not laid out yet', () => {
  it('are shared as if none had any', () => {
    const sizes = shared([NaN, NaN, NaN], [true, true, true], [1, 1, 1], -1);
    sizes.forEach(size => near(size, 1 / 3));
  });
});

describe('sizes at their floors already', () => {
  it('stay there, whatever the rounding', () => {
    const floors = [
      0.1735985533453888, 0.1735985533453888, 0.1735985533453888,
      0.1735985533453888, 0.3616636528028933
    ];
    const sizes = shared(
      [
        0.16438356164383558, 0.16438356164383558, 0.16438356164383564,
        0.16438356164383558, 0.34246575342465757
      ],
      [true, true, true, true, true],
      [1, 2, 1, 1.6, 1],
      -1,
      floors
    );
    sizes.forEach(size => assert.ok(Number.isFinite(size), String(sizes)));
    near(sum(sizes), 1);
  });
});
