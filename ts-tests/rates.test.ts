// The defaultRate setting and the rates a pane offers (src/panes/rates.ts, schema/panes.json).
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';

import { RATES, rateFromSetting } from '../src/panes/rates';

// Compiled to build/ts-tests/ts-tests/: the repository is three levels up.
const schema = JSON.parse(
  readFileSync(resolve(__dirname, '../../../schema/panes.json'), 'utf-8')
);

describe('rateFromSetting', () => {
  it('reads each value of the setting', () => {
    assert.equal(rateFromSetting('live'), 0);
    assert.equal(rateFromSetting('1s'), 1);
    assert.equal(rateFromSetting('5s'), 5);
  });

  it('falls back to live for anything else', () => {
    for (const value of ['', '5S', ' 1s', '2s', '5', 'fast', '__proto__']) {
      assert.equal(rateFromSetting(value), 0, value);
    }
  });

  it('maps every choice of the schema to a rate a pane offers, and offers nothing more', () => {
    const choices: { const: string; title: string }[] =
      schema.properties.defaultRate.oneOf;
    assert.deepEqual(
      choices.map(choice => choice.const),
      ['live', '1s', '5s']
    );
    assert.deepEqual(
      choices.map(choice => rateFromSetting(choice.const)),
      [...RATES]
    );
    assert.ok(choices.every(choice => choice.title.length > 0));
    assert.equal(rateFromSetting(schema.properties.defaultRate.default), 0);
  });
});
