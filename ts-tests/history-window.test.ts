// Windows of a recorded run as people read them, and the window a page may post (src/history/window.ts).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import {
  formatDuration,
  ITranslate,
  shortWindowLabel,
  windowFromMessage,
  windowLabel
} from '../src/history/window';

/** What Lab's translator does without a translation: %1, %2 replaced by the arguments. */
const trans: ITranslate = {
  __: (msgid: string, ...args: any[]) =>
    msgid.replace(/%(\d+)/g, (_, n) => String(args[Number(n) - 1]))
};

/** Unix seconds of a local time today, as the browser would show it. */
function at(hours: number, minutes: number, seconds: number): number {
  return new Date(2026, 10, 24, hours, minutes, seconds).getTime() / 1000;
}

describe('formatDuration', () => {
  it('shows tenths under ten seconds', () => {
    assert.equal(formatDuration(0.42, trans), '0.4 s');
    assert.equal(formatDuration(9.5, trans), '9.5 s');
  });

  it('shows the two largest units, leaving out a zero second one', () => {
    assert.equal(formatDuration(45, trans), '45 s');
    assert.equal(formatDuration(155, trans), '2 min 35 s');
    assert.equal(formatDuration(120, trans), '2 min');
    assert.equal(formatDuration(3900, trans), '1 h 5 min');
    assert.equal(formatDuration(3 * 86400 + 4 * 3600 + 59, trans), '3 d 4 h');
  });

  it('never shows a negative duration', () => {
    assert.equal(formatDuration(-3, trans), '0.0 s');
  });
});

describe('windowLabel', () => {
  it('gives both ends to the second and the length', () => {
    assert.equal(
      windowLabel({ start: at(12, 1, 5), end: at(12, 3, 40) }, trans),
      '12:01:05 – 12:03:40, 2 min 35 s'
    );
  });

  it('keeps sub-second windows readable', () => {
    const start = at(9, 0, 0);
    assert.equal(
      windowLabel({ start, end: start + 0.25 }, trans),
      '09:00:00 – 09:00:00, 0.3 s'
    );
  });
});

describe('shortWindowLabel', () => {
  it('gives minutes in a tab', () => {
    assert.equal(
      shortWindowLabel({ start: at(12, 1, 5), end: at(12, 3, 40) }),
      '12:01–12:03'
    );
  });

  it('adds seconds when minutes would not tell the ends apart', () => {
    assert.equal(
      shortWindowLabel({ start: at(12, 1, 5), end: at(12, 1, 40) }),
      '12:01:05–12:01:40'
    );
  });
});

describe('windowFromMessage', () => {
  const type = 'dashdock:history-window';

  it('takes a window of finite numbers in order', () => {
    assert.deepEqual(windowFromMessage({ type, start: 10, end: 20.5 }), {
      start: 10,
      end: 20.5
    });
    assert.deepEqual(windowFromMessage({ type, start: 10, end: 10 }), {
      start: 10,
      end: 10
    });
  });

  it('refuses anything else a page could post', () => {
    for (const data of [
      null,
      'dashdock:history-window',
      { type: 'dashdock:theme', start: 1, end: 2 },
      { type, start: 2, end: 1 },
      { type, start: '1', end: 2 },
      { type, start: 1, end: Infinity },
      { type, start: NaN, end: 2 },
      { type, start: 1 }
    ]) {
      assert.equal(windowFromMessage(data), null, JSON.stringify(data));
    }
  });
});
