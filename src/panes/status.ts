/**
 * What a pane says about its plot: its status and the words for each (see pane.ts for panes/).
 */

import { TranslationBundle } from '@jupyterlab/translation';

/**
 * What a pane shows about its plot.
 */
export type PaneStatus =
  'live' | 'paused' | 'suspended' | 'reconnecting' | 'gone' | 'rewound';

/** After this long down, "reconnecting" becomes "scheduler gone" (the checks go on). */
export const GONE_AFTER_MS = 60_000;

export const STATUSES: PaneStatus[] = [
  'live',
  'paused',
  'suspended',
  'reconnecting',
  'gone',
  'rewound'
];

/**
 * Each status in words, for the toolbar, the tab and the stale notice over the plot.
 */
export function statusLabels(
  trans: TranslationBundle,
  state: {
    /** Seconds between redraws; 0 is live. */
    rate: number;
    /** Seconds to the next health check while the scheduler is away. */
    seconds: number;
    /** Whether the source is still known (a removed one is not checked any more). */
    sourceKnown: boolean;
    /** Seconds of recorded history shown, when rewound. */
    rewound: number;
  }
): Record<PaneStatus, string> {
  return {
    live: state.rate
      ? trans.__('live, every %1 s', state.rate)
      : trans.__('live'),
    paused: trans.__('paused'),
    suspended: trans.__('paused while hidden'),
    reconnecting: trans.__('reconnecting, next try in %1 s', state.seconds),
    gone: state.sourceKnown
      ? trans.__('scheduler gone, next try in %1 s', state.seconds)
      : trans.__('source removed or shut down'),
    rewound: trans.__('rewound · last %1 min', state.rewound / 60)
  };
}

/**
 * The status line of a pane (`text`) and its tooltip (`detail`): the source, the status in words
 * (`label`), a note (why a rewind did not happen), whether dashdock draws the plot from its
 * recording (live/plot_server.py: it looks the same, so the pane says so), and what
 * the last health check said.
 */
export function statusText(
  trans: TranslationBundle,
  state: {
    sourceName: string;
    label: string;
    note: string;
    drawn: boolean;
    health?: string;
  }
): { text: string; detail: string } {
  // Both look the same, so the pane says whose page it is: dashdock's drawing costs the scheduler
  // nothing per pane (said on the line); the dashboard's own page is a session on it (its tooltip).
  const label = state.drawn
    ? trans.__('%1 (dashdock)', state.label)
    : state.label;
  const text = state.note
    ? trans.__('%1 · %2 · %3', state.sourceName, label, state.note)
    : trans.__('%1 · %2', state.sourceName, label);
  const drawn = state.drawn
    ? trans.__(
        "Drawn by dashdock from its recording of the scheduler, with Dask's own plot code: the scheduler serves no session for this pane."
      )
    : trans.__(
        "The dashboard's own page: the scheduler serves a session for this pane while it is open."
      );
  return { text, detail: [drawn, state.health].filter(Boolean).join('\n') };
}
