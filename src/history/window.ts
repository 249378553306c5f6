/**
 * Time windows of a recorded run as people read them, and the window a History page may post
 * (see model.ts for history/). Pure: node runs these.
 */

/**
 * What translates a string (Lab's `TranslationBundle` is one); `%1`, `%2` are its arguments.
 */
export interface ITranslate {
  __(msgid: string, ...args: any[]): string;
}

/** The message a History overview page posts to its parent when the user picks a window. */
export const WINDOW_MESSAGE = 'dashdock:history-window';

/**
 * A window of a run, in Unix seconds.
 */
export interface IWindow {
  start: number;
  end: number;
}

/**
 * The window a page's message carries, or null when it is not a well-formed window message:
 * the page is anyone's code, so only finite numbers with start <= end are taken.
 */
export function windowFromMessage(data: unknown): IWindow | null {
  if (typeof data !== 'object' || data === null) {
    return null;
  }
  const { type, start, end } = data as Record<string, unknown>;
  if (
    type !== WINDOW_MESSAGE ||
    typeof start !== 'number' ||
    typeof end !== 'number' ||
    !Number.isFinite(start) ||
    !Number.isFinite(end) ||
    start > end
  ) {
    return null;
  }
  return { start, end };
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

/** A time of day in this browser's time zone: '12:01:05', or '12:01' without seconds. */
export function clockTime(unix: number, seconds = true): string {
  const date = new Date(unix * 1000);
  const minutes = `${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return seconds ? `${minutes}:${pad(date.getSeconds())}` : minutes;
}

/**
 * A duration: '0.4 s' and '9.5 s' under ten seconds, then '45 s', '2 min 35 s', '1 h 5 min',
 * '3 d 4 h' (the two largest units; a zero second one is left out).
 */
export function formatDuration(seconds: number, trans: ITranslate): string {
  const total = Math.max(0, seconds);
  if (total < 10) {
    return trans.__('%1 s', total.toFixed(1));
  }
  const whole = Math.round(total);
  const units: [number, string][] = [
    [86400, trans.__('d')],
    [3600, trans.__('h')],
    [60, trans.__('min')],
    [1, trans.__('s')]
  ];
  const index = units.findIndex(([size]) => whole >= size);
  const [size, unit] = units[index];
  const first = Math.floor(whole / size);
  const rest = index + 1 < units.length ? units[index + 1] : null;
  const second = rest ? Math.floor((whole % size) / rest[0]) : 0;
  return rest && second
    ? trans.__('%1 %2 %3 %4', first, unit, second, rest[1])
    : trans.__('%1 %2', first, unit);
}

/** What the History view's toolbar says of a window: '12:01:05 – 12:03:40, 2 min 35 s'. */
export function windowLabel(window: IWindow, trans: ITranslate): string {
  return trans.__(
    '%1 – %2, %3',
    clockTime(window.start),
    clockTime(window.end),
    formatDuration(window.end - window.start, trans)
  );
}

/** The window in a pane's tab: '12:01–12:03', with seconds when minutes would not tell them apart. */
export function shortWindowLabel(window: IWindow): string {
  const seconds =
    clockTime(window.start, false) === clockTime(window.end, false);
  return `${clockTime(window.start, seconds)}–${clockTime(window.end, seconds)}`;
}
