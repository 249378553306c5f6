// A pane's status line says whose page it shows (src/panes/status.ts).
/* eslint-disable jupyter/no-untranslated-string -- the states here are inputs of the function under test */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import type { TranslationBundle } from '@jupyterlab/translation';

import { statusText } from '../src/panes/status';

// Lab's translation package loads as ES modules only: a bundle that fills in %1, %2, ... as its
// null translator does.
const trans = {
  __: (text: string, ...args: string[]) =>
    text.replace(/%(\d)/g, (_: string, n: string) => args[Number(n) - 1])
} as unknown as TranslationBundle;
const state = { sourceName: 'cluster', label: 'live', note: '', health: '' };

describe('statusText', () => {
  it("says a drawn plot is dashdock's and costs the scheduler no session", () => {
    const { text, detail } = statusText(trans, { ...state, drawn: true });
    assert.equal(text, 'cluster · live (dashdock)');
    assert.match(detail, /serves no session/);
  });

  it("says in its tooltip that any other plot is the dashboard's own page", () => {
    const { text, detail } = statusText(trans, { ...state, drawn: false });
    assert.equal(text, 'cluster · live');
    assert.match(detail, /dashboard's own page/);
  });

  it('keeps the note and what the last health check said', () => {
    const { text, detail } = statusText(trans, {
      ...state,
      drawn: false,
      note: 'no rewind',
      health: 'answered in 20 ms'
    });
    assert.equal(text, 'cluster · live · no rewind');
    assert.match(detail, /answered in 20 ms$/);
  });
});
