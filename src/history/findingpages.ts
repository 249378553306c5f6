/**
 * Where a diagnosis finding is shown (pure; see findings.ts for history/): the recorded page that
 * shows its kind best, and the window to brush for it.
 */

import type { IFinding } from '../api/types';
import type { WindowPage } from './pane';

/** The recorded page that shows each kind of finding best. */
const PAGE_OF: Record<string, WindowPage> = {
  spilling: 'memory',
  'memory-pause': 'memory',
  errors: 'progress'
};

/** The window's page to bring forward for a finding (the Task Stream unless another shows it). */
export function pageOf(finding: IFinding): WindowPage {
  return PAGE_OF[finding.kind] ?? 'task-stream';
}

/** The shortest window a memory finding is shown in: the recorder samples memory once a second. */
const MEMORY_SHOWN_S = 5;

/**
 * The window that shows a finding: its stretch, widened about its middle for one that the memory
 * page shows, which a stretch of a few spans (0.4 s of disk writes) would leave without a sample.
 */
export function findingWindow(finding: IFinding): {
  start: number;
  end: number;
} {
  const { start, end } = finding;
  if (pageOf(finding) !== 'memory' || end - start >= MEMORY_SHOWN_S) {
    return { start, end };
  }
  const middle = (start + end) / 2;
  return {
    start: middle - MEMORY_SHOWN_S / 2,
    end: middle + MEMORY_SHOWN_S / 2
  };
}
