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

/** The tallest the list grows to before it scrolls (the heading and about four findings). */
const MAX_HEIGHT_PX = 160;
/** Its height before anything is measured: the heading and one row. */
const FIRST_HEIGHT_PX = 56;

let aboutIds = 0;

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
    const heading = this._heading;
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
    // The count says how many there are when the list is taller than the region shows.
    this._heading.textContent = findings.length
      ? trans.__('Why it took this long (%1)', findings.length)
      : trans.__('Why it took this long');
    const focused = this._list.contains(document.activeElement);
    this._list.replaceChildren(...findings.map(finding => this._item(finding)));
    this._mark(focused);
    this._fit();
  }

  /**
   * Mark the cause the user chose, also in its stretch's own findings, where another may now come
   * first; `focus`: move the keyboard to it (the focused row was replaced).
   */
  private _mark(focus: boolean): void {
    for (const item of this._list.children) {
      const current = (item as HTMLElement).dataset.kind === this._current;
      item.classList.toggle('jp-mod-current', current);
      const title = item.querySelector('.jp-dashdock-Finding-title');
      if (current) {
        title?.setAttribute('aria-current', 'true');
        if (focus) {
          (title as HTMLElement | null)?.focus();
        }
      } else {
        title?.removeAttribute('aria-current');
      }
    }
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
    const trans = this._trans;
    const item = document.createElement('li');
    item.className = 'jp-dashdock-Finding';
    item.dataset.kind = finding.kind;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'jp-dashdock-Finding-title';
    // The finding's sentence, with its figure (text, never markup: it names the user's groups).
    const words = findingWords(trans, finding);
    button.textContent = words.title;
    button.title = trans.__('Show this stretch and the plot that shows it');
    button.addEventListener('click', () => {
      this._current = finding.kind;
      this._mark(false);
      this._chosen.emit(finding);
    });
    // What it rests on and what to do, shown on request: readable from the keyboard and by a
    // screen reader, not only in a tooltip.
    const about = document.createElement('div');
    about.className = 'jp-dashdock-Finding-about';
    about.id = `jp-dashdock-Finding-about-${++aboutIds}`;
    about.hidden = true;
    const detail = document.createElement('p');
    detail.textContent = words.detail;
    const advice = document.createElement('p');
    advice.textContent = words.advice;
    about.append(detail, advice);
    if (/^https:\/\//.test(finding.docs)) {
      const docs = document.createElement('a');
      docs.className = 'jp-dashdock-Finding-docs';
      docs.href = finding.docs; // Dask's documentation, never a script URL
      docs.target = '_blank';
      docs.rel = 'noopener noreferrer';
      docs.textContent = trans.__('Dask’s documentation on it');
      about.append(docs);
    }
    const more = document.createElement('button');
    more.type = 'button';
    more.className = 'jp-dashdock-Finding-more';
    more.textContent = trans.__('How to fix it');
    more.setAttribute('aria-expanded', 'false');
    more.setAttribute('aria-controls', about.id);
    more.addEventListener('click', () => {
      about.hidden = !about.hidden;
      more.setAttribute('aria-expanded', String(!about.hidden));
      this._fit();
    });
    item.append(button, more, about);
    return item;
  }

  private _trans: TranslationBundle;
  private _heading = document.createElement('h3');
  private _current = ''; // the kind of the finding last chosen
  private _asked: { run: string; window: IHistoryWindow } | null = null;
  private _list = document.createElement('ol');
  private _status = document.createElement('p');
  private _chosen = new Signal<this, IFinding>(this);
  private _debouncer = new Debouncer(() => this._fetch(), 300);
  private _width = -1;
}
