/**
 * "Why it took this long": the History view's list of what its window's time went to (see
 * view.ts for history/). Each finding is one sentence with its figure; choosing one brushes its
 * stretch and docks the plot that shows it (the view and the manager do that).
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { Debouncer } from '@lumino/polling';
import { Message } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { getDiagnosis } from '../api/client';
import { IFinding, IHistoryWindow } from '../api/types';
import { findingWords } from '../ui/findingtext';
import { WindowPage } from './pane';

/** The tallest the list grows to before it scrolls (the heading and about four findings). */
const MAX_HEIGHT_PX = 160;
/** Its height before anything is measured: the heading and one row. */
const FIRST_HEIGHT_PX = 56;

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

/**
 * The findings of the view's window, asked again (debounced) whenever the window changes; the
 * server reads and counts in a worker thread, so a brush never waits on it.
 */
export class FindingsList extends Widget {
  constructor(trans: TranslationBundle) {
    super();
    this._trans = trans;
    this.addClass('jp-dashdock-Findings');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', trans.__('Why it took this long'));
    const heading = document.createElement('h3');
    heading.className = 'jp-dashdock-Findings-heading';
    heading.textContent = trans.__('Why it took this long');
    this._list.className = 'jp-dashdock-Findings-list';
    this._status.className = 'jp-dashdock-Findings-status';
    this._status.setAttribute('role', 'status');
    this.node.append(heading, this._status, this._list);
    this._setHeight(FIRST_HEIGHT_PX);
  }

  /** Emitted when the user chooses a finding. */
  get chosen(): ISignal<this, IFinding> {
    return this._chosen;
  }

  /** Show the findings of `window` of `run` (asked shortly, once the brush has settled). */
  diagnose(run: string, window: IHistoryWindow): void {
    this._asked = { run, window };
    void this._debouncer.invoke();
  }

  dispose(): void {
    this._debouncer.dispose();
    super.dispose();
  }

  private async _fetch(): Promise<void> {
    const asked = this._asked;
    if (!asked) {
      return;
    }
    const trans = this._trans;
    this._status.textContent = trans.__('Reading the recording…');
    this._fit();
    let findings: IFinding[];
    try {
      findings = (await getDiagnosis(asked.run, asked.window)).findings;
    } catch (error: any) {
      if (asked === this._asked && !this.isDisposed) {
        this._status.textContent = trans.__(
          'Could not diagnose this window: %1',
          String(error?.message ?? error)
        );
        this._list.replaceChildren();
      }
      return;
    }
    if (asked !== this._asked || this.isDisposed) {
      return; // a later window was asked meanwhile
    }
    this._status.textContent = findings.length
      ? ''
      : trans.__('No cause cost more than 2 % of this window’s thread time.');
    this._list.replaceChildren(...findings.map(finding => this._item(finding)));
    this._fit();
  }

  protected onResize(msg: Widget.ResizeMessage): void {
    super.onResize(msg);
    // A narrower view wraps the sentences onto more lines.
    if (msg.width >= 0 && msg.width !== this._width) {
      this._width = msg.width;
      this._fit();
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._fit();
  }

  /**
   * Lab's content header lays its widgets out by their CSS size limits, not their content: the
   * region gets the height its sentences take, wrapped at its width (up to `MAX_HEIGHT_PX`, then
   * it scrolls), and its layout refits.
   */
  private _fit(): void {
    if (!this.isVisible) {
      return; // nothing to measure: onAfterShow fits it
    }
    const top = this.node.getBoundingClientRect().top - this.node.scrollTop;
    const last = this._list.childElementCount ? this._list : this._status;
    const style = getComputedStyle(this.node);
    const below =
      parseFloat(style.paddingBottom) + parseFloat(style.borderBottomWidth);
    const needed = Math.ceil(last.getBoundingClientRect().bottom - top + below);
    this._setHeight(Math.min(Math.max(needed, FIRST_HEIGHT_PX), MAX_HEIGHT_PX));
  }

  private _setHeight(px: number): void {
    const height = `${px}px`;
    if (this.node.style.minHeight !== height) {
      this.node.style.minHeight = height;
      this.node.style.maxHeight = height;
      this.parent?.fit();
    }
  }

  private _item(finding: IFinding): HTMLLIElement {
    const item = document.createElement('li');
    item.className = 'jp-dashdock-Finding';
    item.dataset.kind = finding.kind;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'jp-dashdock-Finding-title';
    // The finding's sentence, with its figure (text, never markup: it names the user's groups).
    const words = findingWords(this._trans, finding);
    button.textContent = words.title;
    button.title = `${words.detail} ${words.advice}`;
    button.addEventListener('click', () => this._chosen.emit(finding));
    const docs = document.createElement('a');
    docs.className = 'jp-dashdock-Finding-docs';
    if (/^https:\/\//.test(finding.docs)) {
      docs.href = finding.docs; // Dask's documentation, never a script URL
    }
    docs.target = '_blank';
    docs.rel = 'noopener noreferrer';
    docs.textContent = this._trans.__('How to fix it');
    docs.title = words.advice;
    item.append(button, docs);
    return item;
  }

  private _trans: TranslationBundle;
  private _asked: { run: string; window: IHistoryWindow } | null = null;
  private _list = document.createElement('ol');
  private _status = document.createElement('p');
  private _chosen = new Signal<this, IFinding>(this);
  private _debouncer = new Debouncer(() => this._fetch(), 300);
  private _width = -1;
}
