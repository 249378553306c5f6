/**
 * Rewinding a live pane to its source's recording (see pane.ts for panes/): which plots have a
 * recorded page, the windows offered, and the view's URL.
 */

import { Notification } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { APIError, getRun, historyURL } from '../api/client';

/** Live plot paths that have a recorded page of the same plot, and that page. */
const RECORDED_PAGES: Record<string, string> = {
  '/individual-task-stream': 'task-stream',
  '/individual-progress': 'progress',
  '/individual-workers-memory': 'memory'
};

/** Seconds before now that the rewind control offers; 0 is live. */
export const REWIND_WINDOWS: readonly number[] = [0, 60, 300, 900];

/** The recorded page of a live plot's path, or null when the plot is not recorded. */
export function recordedPage(path: string): string | null {
  return RECORDED_PAGES[path] ?? null;
}

/**
 * The URL of the recorded page for the last `seconds` of a source's newest run, or null when the
 * source has no recording (the server answers 404); other failures are thrown.
 */
export async function rewindURL(
  source: string,
  page: string,
  seconds: number
): Promise<string | null> {
  let run: string;
  try {
    run = (await getRun(source)).id;
  } catch (error) {
    if (error instanceof APIError && error.status === 404) {
      return null;
    }
    throw error;
  }
  const end = Math.floor(Date.now() / 1000);
  return historyURL(run, `view/${page}`, { start: end - seconds, end });
}

/**
 * The rewind control: a visible label around a native select (keyboard usable as any select)
 * whose first option is live; the select is the widget's only control.
 */
export function rewindControl(
  trans: TranslationBundle,
  onChange: (seconds: number) => void
): Widget {
  const select = document.createElement('select');
  select.className = 'jp-dashdock-PaneRewind jp-mod-styled';
  select.setAttribute('aria-label', trans.__('Rewind'));
  select.title = trans.__(
    'Show the recorded plot of the last minutes, or the live plot'
  );
  for (const seconds of REWIND_WINDOWS) {
    const option = document.createElement('option');
    option.value = String(seconds);
    option.textContent = seconds
      ? trans.__('Last %1 min', seconds / 60)
      : trans.__('Live');
    select.appendChild(option);
  }
  select.value = '0';
  // The select lives and dies with the pane's toolbar, and its listener with it.
  select.addEventListener('change', () => onChange(Number(select.value)));
  // A visible word before it: beside the rate select, a second "Live" alone would be ambiguous.
  const label = document.createElement('label');
  label.className = 'jp-dashdock-PaneRewindLabel';
  const text = document.createElement('span');
  text.textContent = trans.__('Rewind');
  text.setAttribute('aria-hidden', 'true');
  label.append(text, select);
  return new Widget({ node: label });
}

/**
 * Say that `sourceName` has no recording to rewind to (a pane's status may be cut short in a
 * narrow pane: the reason also comes as a notification).
 */
export function warnNoRecording(
  trans: TranslationBundle,
  sourceName: string
): void {
  Notification.warning(
    trans.__(
      '%1 has no recording to rewind to: its recording is off or has not begun. Turn it on in the History section of the Dask sidebar.',
      sourceName
    ),
    { autoClose: 8000 }
  );
}
