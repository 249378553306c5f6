/**
 * One tab stop for a list of rows, moved with the arrow keys (see ui/dnd.ts for ui/).
 */

/**
 * A roving tabindex over the rows of a list or tree, as Lab's file browser and table of contents
 * behave: Tab enters the list once, on the row last focused; Up/Down, Home/End move between rows.
 *
 * #### Notes
 * The rows are asked for on each key press (`rows()`: those shown, in order), so a list rebuilt or
 * folded needs only `update()` to keep one row tabbable. What a row does (Enter, Space, Left,
 * Right, Delete) is left to its view.
 */
export class RovingFocus {
  constructor(options: RovingFocus.IOptions) {
    this._container = options.container;
    this._rows = options.rows;
    this._container.addEventListener('keydown', this);
    this._container.addEventListener('focusin', this);
  }

  /** The row Tab lands on. */
  get current(): HTMLElement | null {
    return this._current;
  }

  /**
   * Make one row tabbable: the current one if still shown, else `preferred`, else the first.
   */
  update(preferred: HTMLElement | null = null): void {
    const rows = this._rows();
    const current =
      [this._current, preferred].find(row => row && rows.includes(row)) ??
      rows[0] ??
      null;
    this._setCurrent(current, rows);
  }

  /** Focus `row` and make it the tab stop. */
  focus(row: HTMLElement): void {
    this._setCurrent(row, this._rows());
    row.focus();
  }

  handleEvent(event: Event): void {
    if (event.type === 'focusin') {
      const row = this._rowOf(event.target);
      if (row && row !== this._current) {
        this._setCurrent(row, this._rows());
      }
      return;
    }
    const key = (event as KeyboardEvent).key;
    const row = this._rowOf(event.target);
    if (!row || event.target !== row) {
      return; // a control inside a row keeps its own keys
    }
    const rows = this._rows();
    const index = rows.indexOf(row);
    const next =
      key === 'ArrowDown'
        ? rows[index + 1]
        : key === 'ArrowUp'
          ? rows[index - 1]
          : key === 'Home'
            ? rows[0]
            : key === 'End'
              ? rows[rows.length - 1]
              : undefined;
    if (['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(key)) {
      event.preventDefault(); // the section must not scroll instead
      if (next) {
        this.focus(next);
      }
    }
  }

  dispose(): void {
    this._container.removeEventListener('keydown', this);
    this._container.removeEventListener('focusin', this);
  }

  private _rowOf(target: EventTarget | null): HTMLElement | null {
    if (!(target instanceof HTMLElement)) {
      return null;
    }
    return this._rows().find(row => row === target) ?? null;
  }

  private _setCurrent(current: HTMLElement | null, rows: HTMLElement[]): void {
    this._current = current;
    // Rows that are folded away are not in `rows`: they must not stay tabbable either.
    this._container
      .querySelectorAll<HTMLElement>('[data-roving]')
      .forEach(row => (row.tabIndex = -1));
    rows.forEach(row => {
      row.dataset.roving = '';
      row.tabIndex = row === current ? 0 : -1;
    });
  }

  private _container: HTMLElement;
  private _rows: () => HTMLElement[];
  private _current: HTMLElement | null = null;
}

export namespace RovingFocus {
  export interface IOptions {
    /** The list; key presses and focus are handled on it. */
    container: HTMLElement;
    /** The rows shown, in order. */
    rows: () => HTMLElement[];
  }
}
