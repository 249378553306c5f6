/**
 * What a framed page may ask the Lab for (ui/bokehjs.ts): the checks, and how often it is answered.
 * No DOM here, so it is tested on its own.
 */

const NAME = /^bokeh(-[a-z]+)?\.min\.js$/;
const VERSION = /^[0-9a-f]{128}$/;
/** A page names five files; more in one message is not a Bokeh page asking. */
const MAX_FILES = 8;

/** A BokehJS file as a page names it: `static/js/{name}?v={version}` (sha512, hex). */
export interface IBokehJSFile {
  name: string;
  version: string;
}

/** The files a page asks for, each name and version checked; null for any other message. */
export function requestedFiles(data: unknown): IBokehJSFile[] | null {
  const request = data as { type?: unknown; files?: unknown } | null;
  if (
    !request ||
    typeof request !== 'object' ||
    request.type !== 'dashdock:bokehjs' ||
    !Array.isArray(request.files) ||
    request.files.length === 0 ||
    request.files.length > MAX_FILES
  ) {
    return null;
  }
  const files: IBokehJSFile[] = [];
  for (const item of request.files as unknown[]) {
    const { name, version } = (item ?? {}) as {
      name?: unknown;
      version?: unknown;
    };
    if (
      typeof name !== 'string' ||
      typeof version !== 'string' ||
      !NAME.test(name) ||
      !VERSION.test(version)
    ) {
      return null;
    }
    files.push({ name, version });
  }
  return files;
}

/**
 * Answers per asker in a sliding window of time: a page asks once per load (a pane reloaded when
 * its scheduler is back asks again), a hostile page in a loop gets no more than this.
 */
export class AnswerBudget<K extends object> {
  constructor(maxAnswers = 4, windowMs = 10_000) {
    this._max = maxAnswers;
    this._windowMs = windowMs;
  }

  /** Whether `asker` may be answered at `now` (ms); counts the answer when it may. */
  take(asker: K, now: number): boolean {
    const recent = (this._answered.get(asker) ?? []).filter(
      time => now - time < this._windowMs
    );
    if (recent.length >= this._max) {
      this._answered.set(asker, recent);
      return false;
    }
    this._answered.set(asker, [...recent, now]);
    return true;
  }

  private _max: number;
  private _windowMs: number;
  private _answered = new WeakMap<K, number[]>();
}
