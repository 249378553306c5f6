/**
 * How often a pane redraws: pure data and functions (no runtime imports), so node runs them.
 */

/** Seconds between redraws that the rate control offers; 0 is live. */
export const RATES: readonly number[] = [0, 1, 5];

/** The `defaultRate` setting ('live' | '1s' | '5s') -> seconds between redraws. */
export function rateFromSetting(value: string): number {
  return value === '1s' ? 1 : value === '5s' ? 5 : 0;
}
