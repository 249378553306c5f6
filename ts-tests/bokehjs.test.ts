// What a framed page may ask the Lab for (src/ui/bokehjsrequests.ts).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { AnswerBudget, requestedFiles } from '../src/ui/bokehjsrequests';

const VERSION = 'ab'.repeat(64);

describe('requestedFiles', () => {
  it('reads the files a Bokeh page names', () => {
    const files = [
      { name: 'bokeh.min.js', version: VERSION },
      { name: 'bokeh-gl.min.js', version: VERSION }
    ];
    assert.deepEqual(
      requestedFiles({ type: 'dashdock:bokehjs', files }),
      files
    );
  });

  it('refuses a whole message when one name or version is not a BokehJS file', () => {
    for (const file of [
      { name: '../../api/contents', version: VERSION },
      { name: 'bokeh.min.js/../../x', version: VERSION },
      { name: 'bokeh.min.js', version: VERSION + '/../x' },
      { name: 'bokeh.min.js', version: VERSION.slice(1) },
      { name: 'bokeh.min.js', version: VERSION.toUpperCase() },
      { name: 'bokeh.min.js' },
      { name: ['bokeh.min.js'], version: VERSION },
      null
    ]) {
      const files = [{ name: 'bokeh.min.js', version: VERSION }, file];
      assert.equal(requestedFiles({ type: 'dashdock:bokehjs', files }), null);
    }
  });

  it('ignores other messages, empty and oversized requests', () => {
    const one = { name: 'bokeh.min.js', version: VERSION };
    for (const data of [
      null,
      'dashdock:bokehjs',
      { type: 'dashdock:theme', files: [one] },
      { type: 'dashdock:bokehjs', files: [] },
      { type: 'dashdock:bokehjs', files: one },
      { type: 'dashdock:bokehjs', files: Array(9).fill(one) }
    ]) {
      assert.equal(requestedFiles(data), null);
    }
  });
});

describe('AnswerBudget', () => {
  it('answers an asker a few times in a window, then again once it has passed', () => {
    const budget = new AnswerBudget<object>(4, 10_000);
    const page = {};
    const answers = Array.from({ length: 10 }, (_, i) => budget.take(page, i));
    assert.deepEqual(answers, [
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      false
    ]);
    assert.equal(budget.take(page, 10_000), true);
  });

  it('counts each asker on its own', () => {
    const budget = new AnswerBudget<object>(1, 10_000);
    const [one, two] = [{}, {}];
    assert.equal(budget.take(one, 0), true);
    assert.equal(budget.take(one, 1), false);
    assert.equal(budget.take(two, 1), true);
  });
});
