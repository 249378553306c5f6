/**
 * Small DOM helpers the views share (see ui/dnd.ts for ui/).
 */

/**
 * A new element with a class, appended to `parent` when one is given.
 */
export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  parent?: HTMLElement
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  parent?.appendChild(node);
  return node;
}

/**
 * Let the keyboard use an element that acts on click but is no button (a list item): it can be
 * focused, and Enter or Space clicks it.
 */
export function makeKeyboardClickable(node: HTMLElement): void {
  node.tabIndex = 0;
  node.setAttribute('role', 'button');
  node.addEventListener('keydown', (event: KeyboardEvent) => {
    if (event.target === node && (event.key === 'Enter' || event.key === ' ')) {
      event.preventDefault();
      node.click();
    }
  });
}

/**
 * The children of a container kept one per item, by key, across renders.
 *
 * #### Notes
 * A render updates the part each key already had instead of building a new one, so a control the
 * user is typing in, or has focused, survives a model change; nodes move only when the order changed.
 */
export class KeyedParts<T, P extends KeyedParts.IPart = KeyedParts.IPart> {
  constructor(options: KeyedParts.IOptions<T, P>) {
    this._options = options;
  }

  /** The part shown for `key`, if any. */
  get(key: string): P | undefined {
    return this._parts.get(key);
  }

  /**
   * Make `parent`'s children the nodes of `items`, in order, followed by `trailing`.
   */
  render(
    parent: HTMLElement,
    items: readonly T[],
    trailing: HTMLElement[] = []
  ): void {
    const { key, create, update } = this._options;
    const parts = new Map<string, P>();
    const wanted = items.map(item => {
      const id = key(item);
      const part = this._parts.get(id) ?? create(item);
      update(part, item);
      parts.set(id, part);
      return part.node;
    });
    wanted.push(...trailing);
    this._parts = parts;
    wanted.forEach((node, index) => {
      if (parent.children[index] !== node) {
        parent.insertBefore(node, parent.children[index] ?? null);
      }
    });
    while (parent.children.length > wanted.length) {
      parent.lastElementChild!.remove();
    }
  }

  private _options: KeyedParts.IOptions<T, P>;
  private _parts = new Map<string, P>();
}

export namespace KeyedParts {
  /** What shows one item: at least its root node. */
  export interface IPart {
    readonly node: HTMLElement;
  }

  export interface IOptions<T, P extends IPart> {
    /** What identifies an item across renders. */
    key: (item: T) => string;
    /** The part for an item seen for the first time. */
    create: (item: T) => P;
    /** Bring an item's part up to date, in place. */
    update: (part: P, item: T) => void;
  }
}
