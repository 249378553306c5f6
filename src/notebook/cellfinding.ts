/**
 * What a cell's strip says about why its work took as long as it did (see cellstrip.ts for
 * notebook/): the source its kernel's client is known by, and the cell's top finding.
 */

import { TranslationBundle } from '@jupyterlab/translation';

import { APIError, getDiagnosis, summary } from '../api/client';
import { IDiagnosis } from '../api/types';
import { findingWords } from '../ui/findingtext';
import { ICellData } from './celldata';

/** A finding is named under a cell from this share of its window's thread time. */
const STRIP_SHARE = 0.2;
/**
 * The history records a second or so after the work, and a notebook's new cluster is recorded
 * only once its client is known (seconds more on a busy machine): asked again, for up to two
 * minutes, until it has the cell's tasks.
 */
const ASK_AGAIN_MS = 3000;
const MAX_ASKS = 40;

/** The source the kernel's client is known by (the same lookup as the client repr's). */
export async function cellSource(
  data: ICellData | null,
  trans: TranslationBundle
): Promise<string> {
  if (!data?.dashboard) {
    throw new Error(trans.__('This cell names no dashboard.'));
  }
  const found = await summary(data.dashboard, data.kernelId);
  if (!found.source) {
    throw new Error(
      trans.__("The cell's dashboard is not a source of this server.")
    );
  }
  return found.source.id;
}

/** The window's diagnosis; null while the source's run is not recorded yet (404). */
async function recorded(
  source: string,
  start: number,
  end: number
): Promise<IDiagnosis | null> {
  try {
    return await getDiagnosis(source, { start, end });
  } catch (error) {
    if (error instanceof APIError && error.status === 404) {
      return null;
    }
    throw error;
  }
}

/**
 * A line naming the cell's costliest cause once its work settled, when it cost at least a fifth
 * of the thread time; asked once per cell, and empty (hidden) otherwise.
 */
export class CellFinding {
  constructor(trans: TranslationBundle) {
    this._trans = trans;
    this.node.className = 'jp-dashdock-CellStrip-finding';
    this.node.hidden = true;
  }

  readonly node = document.createElement('div');

  /** Ask for the top finding of `data`'s cell, the first time its work is seen settled. */
  follow(data: ICellData | null): void {
    const ran = data?.report.ran;
    if (this._asked || !data?.report.settled || !ran) {
      return;
    }
    this._asked = true;
    void this._show(data, ran[0], ran[1]);
  }

  private async _show(
    data: ICellData,
    start: number,
    end: number
  ): Promise<void> {
    try {
      const source = await cellSource(data, this._trans);
      let diagnosis: IDiagnosis | null = null;
      // Until the history has the cell's last task (another cell's task recorded first would
      // give a partial answer).
      const complete = () => (diagnosis?.recorded_until ?? 0) >= end - 0.001;
      for (let asks = 0; !complete() && asks < MAX_ASKS; asks++) {
        if (asks) {
          await new Promise(resolve => setTimeout(resolve, ASK_AGAIN_MS));
        }
        diagnosis = await recorded(source, start, end);
      }
      if (!complete()) {
        return; // the history never had it: better no line than a wrong one
      }
      const [top] = diagnosis!.findings;
      if (top && top.share >= STRIP_SHARE) {
        // The finding's sentence (text: it names the user's groups), with what to do about it.
        const words = findingWords(this._trans, top);
        this.node.textContent = this._trans.__('Why: %1.', words.title);
        this.node.title = `${words.detail} ${words.advice}`;
        this.node.dataset.kind = top.kind;
        this.node.hidden = false;
      }
    } catch (error) {
      // The server cannot say: the strip shows what it has without it.
      console.debug('dashdock: no diagnosis for the cell', error);
    }
  }

  private _trans: TranslationBundle;
  private _asked = false;
}
