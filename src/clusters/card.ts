/**
 * One managed cluster in the sidebar: its facts, size controls and actions (see model.ts for
 * clusters/).
 */

import { TranslationBundle } from '@jupyterlab/translation';

import { ICluster, IClusterLimits } from '../api/types';
import { makeDraggable } from '../ui/dnd';
import { element } from '../ui/dom';
import { formatBytes } from '../ui/format';
import { clientCodeMimeData } from './code';
import { statusLabel, workersFact } from './facts';

/** What a card's size controls ask for. */
export type SizeAction = 'scale' | 'adapt';

/**
 * A cluster's card, built once and updated in place.
 *
 * #### Notes
 * The worker counts are inputs: each follows the cluster (the Scale field shows its size) until
 * the user types in it, then keeps what was typed, so typed numbers and the focus survive the
 * poll; it follows again once its action went through (`settle`) or after Escape. Enter in a field
 * runs its action. The card shows the failure of its last action, or what is wrong with the typed
 * numbers, and any edit clears it. Dragging the card's header into a notebook inserts the code
 * that connects to the cluster. Buttons carry a `data-action` that the section acts on; while an
 * operation runs they are marked `aria-disabled` rather than disabled, so the focus stays put.
 */
export class ClusterCard {
  constructor(
    cluster: ICluster,
    limits: IClusterLimits | null,
    trans: TranslationBundle,
    options: ClusterCard.IOptions = {}
  ) {
    this._cluster = cluster;
    this._trans = trans;
    this._onEdit = options.onEdit;
    this.node = element('div', 'jp-dashdock-ClusterCard');
    this.node.dataset.clusterId = cluster.id;

    const header = element('div', 'jp-dashdock-ClusterCard-header', this.node);
    header.title = trans.__(
      'Drag into a notebook to insert the code that connects to this cluster'
    );
    this._name = element('span', 'jp-dashdock-ClusterCard-name', header);
    this._provider = element(
      'span',
      'jp-dashdock-ClusterCard-provider',
      header
    );
    this._status = element('span', 'jp-dashdock-ClusterCard-status', header);
    makeDraggable(header, {
      action: 'copy',
      mimeData: () => clientCodeMimeData(this._cluster),
      dragImageText: () => trans.__('Connect to %1', this._cluster.name)
    });

    this._facts = element('dl', 'jp-dashdock-ClusterCard-facts', this.node);
    this._error = element('div', 'jp-dashdock-ClusterCard-error', this.node);
    this._error.setAttribute('role', 'alert');

    const scale = element('div', 'jp-dashdock-ClusterCard-row', this.node);
    this._workers = this._field(trans.__('Workers'), 'workers', 'scale', scale);
    this._button(
      trans.__('Scale'),
      trans.__('Run this many workers, and stop adapting'),
      'scale',
      scale
    );
    const adapt = element('div', 'jp-dashdock-ClusterCard-row', this.node);
    this._minimum = this._field(trans.__('Minimum'), 'minimum', 'adapt', adapt);
    this._maximum = this._field(trans.__('Maximum'), 'maximum', 'adapt', adapt);
    this._button(
      trans.__('Adapt'),
      trans.__(
        'Let Dask add and remove workers between the minimum and the maximum'
      ),
      'adapt',
      adapt
    );
    const actions = element('div', 'jp-dashdock-ClusterCard-row', this.node);
    this._button(
      trans.__('Layout'),
      trans.__('Open the key plots of this cluster as panes'),
      'layout',
      actions
    );
    this._button(
      trans.__('Insert code'),
      trans.__(
        'Insert the code that connects to this cluster into the active notebook or console'
      ),
      'insert',
      actions
    );
    this._button(
      trans.__('Restart'),
      trans.__(
        'Replace the scheduler and workers with fresh ones of the same size'
      ),
      'restart',
      actions
    );
    this._button(
      trans.__('Shut down'),
      trans.__('Stop this cluster and its workers'),
      'stop',
      actions,
      'jp-mod-warn'
    );
    this._follow(limits);
  }

  /** The card's root, a child of the Clusters section. */
  readonly node: HTMLElement;

  /** The numbers the user asks for: workers to scale to, and the adaptive range. */
  get requested(): { workers: number; minimum: number; maximum: number } {
    return {
      workers: Number(this._workers.value),
      minimum: Number(this._minimum.value),
      maximum: Number(this._maximum.value)
    };
  }

  /**
   * Whether the numbers for `action` can be sent; when not, the card says why and marks them.
   *
   * #### Notes
   * Only what the card knows for sure is checked here (a whole number, minimum not above
   * maximum); the server's limit is the server's to state, with the setting that raises it.
   */
  check(action: SizeAction): boolean {
    const trans = this._trans;
    const inputs =
      action === 'scale' ? [this._workers] : [this._minimum, this._maximum];
    let problem = '';
    // What a number input holds as typed ('' when the browser cannot read it as a number).
    const wrong = inputs.filter(input => !/^\d+$/.test(input.value.trim()));
    if (wrong.length) {
      problem = trans.__('Type a whole number of workers, 0 or more.');
    } else if (
      action === 'adapt' &&
      this.requested.minimum > this.requested.maximum
    ) {
      problem = trans.__(
        'The minimum number of workers cannot be larger than the maximum.'
      );
      wrong.push(this._minimum, this._maximum);
    }
    if (problem) {
      wrong.forEach(input => input.setAttribute('aria-invalid', 'true'));
      this._problem = problem;
      this._showError();
      return false;
    }
    return true;
  }

  /** The action on these fields went through: they follow the cluster again. */
  settle(action: SizeAction): void {
    const inputs =
      action === 'scale' ? [this._workers] : [this._minimum, this._maximum];
    inputs.forEach(input => this._edited.delete(input));
    this._follow(this._limits);
  }

  /**
   * Show the cluster as last listed; `busy` while an operation on it is under way, `error` the
   * failure of its last one.
   */
  update(
    cluster: ICluster,
    busy: boolean,
    limits: IClusterLimits | null,
    error = ''
  ): void {
    const trans = this._trans;
    this._cluster = cluster;
    this._failure = error;
    this.node.classList.toggle('jp-mod-busy', busy);
    this.node.setAttribute('aria-busy', String(busy));
    this._name.textContent = cluster.name;
    // A gateway's clusters are the user's anywhere; the gateway cannot restart one in place.
    const onGateway = cluster.provider === 'gateway';
    this._provider.textContent = onGateway ? trans.__('Gateway') : '';
    this._provider.hidden = !onGateway;
    this.node.querySelector<HTMLElement>('[data-action="restart"]')!.hidden =
      onGateway;
    this._status.className = `jp-dashdock-ClusterCard-status jp-mod-${cluster.status}`;
    this._status.textContent = busy
      ? trans.__('working…')
      : statusLabel(cluster.status, trans);
    const facts: [string, string][] = [
      [trans.__('Scheduler'), cluster.scheduler ?? '—'],
      [trans.__('Workers'), workersFact(cluster, trans)],
      [trans.__('Threads'), String(cluster.threads ?? '—')],
      [
        trans.__('Memory'),
        cluster.memory === null ? '—' : formatBytes(cluster.memory)
      ]
    ];
    this._facts.replaceChildren(
      ...facts.flatMap(([label, value]) => {
        const term = element('dt');
        term.textContent = label;
        const detail = element('dd');
        detail.textContent = value;
        return [term, detail];
      })
    );
    this._follow(limits);
    this._showError();
    const running = cluster.status === 'running';
    this.node
      .querySelectorAll<HTMLButtonElement | HTMLInputElement>('button, input')
      .forEach(control => {
        control.disabled = !running;
      });
    this.node
      .querySelectorAll<HTMLButtonElement>('button')
      .forEach(button => button.setAttribute('aria-disabled', String(busy)));
  }

  /** Put the cluster's numbers in the fields the user is not editing; hold them to the limit. */
  private _follow(limits: IClusterLimits | null): void {
    const trans = this._trans;
    const cluster = this._cluster;
    this._limits = limits;
    const max = limits?.max_workers;
    // An unknown size leaves the field empty: Scale then asks for a number, never sends a guess.
    const values: [HTMLInputElement, number | null, string][] = [
      // What was asked for, not who has joined yet: a Scale to 3 does not read 2 meanwhile.
      [
        this._workers,
        cluster.requested ?? cluster.workers,
        trans.__('Workers to scale to')
      ],
      [
        this._minimum,
        cluster.adapt?.minimum ?? 0,
        trans.__('Fewest workers while adapting')
      ],
      [
        this._maximum,
        cluster.adapt?.maximum ??
          Math.min(Math.max(cluster.workers ?? 1, 1), max ?? Infinity),
        trans.__('Most workers while adapting')
      ]
    ];
    for (const [input, value, tooltip] of values) {
      if (!this._edited.has(input)) {
        input.value = value === null ? '' : String(value);
        input.removeAttribute('aria-invalid');
      }
      // The browser marks a number over the limit as invalid; the server refuses it and says why.
      input.title =
        max === undefined ? tooltip : trans.__('%1 (at most %2)', tooltip, max);
      if (max === undefined) {
        input.removeAttribute('max');
      } else {
        input.max = String(max);
      }
    }
  }

  private _showError(): void {
    const text = this._problem || this._failure;
    this._error.textContent = text;
    this._error.hidden = !text;
  }

  /** A number input with a visible label, for `action`'s numbers. */
  private _field(
    label: string,
    name: string,
    action: SizeAction,
    parent: HTMLElement
  ): HTMLInputElement {
    const field = element('label', 'jp-dashdock-ClusterCard-field', parent);
    element('span', 'jp-dashdock-ClusterCard-label', field).textContent = label;
    const input = element(
      'input',
      'jp-dashdock-ClusterCard-number jp-mod-styled',
      field
    );
    input.type = 'number';
    input.min = '0';
    input.step = '1';
    input.name = name;
    input.addEventListener('input', () => {
      this._edited.add(input);
      // The problem found before sending may have been about several fields: it is gone with it.
      this.node
        .querySelectorAll('input')
        .forEach(field => field.removeAttribute('aria-invalid'));
      this._problem = '';
      this._failure = '';
      this._showError();
      this._onEdit?.(this._cluster.id);
    });
    input.addEventListener('keydown', (event: KeyboardEvent) => {
      if (event.key === 'Enter') {
        event.preventDefault();
        this.node
          .querySelector<HTMLButtonElement>(`button[data-action="${action}"]`)
          ?.click();
      } else if (event.key === 'Escape' && this._edited.delete(input)) {
        // Back to the cluster's own number; Escape goes no further (it would leave the sidebar).
        event.stopPropagation();
        this._follow(this._limits);
      }
    });
    return input;
  }

  private _button(
    label: string,
    tooltip: string,
    action: string,
    parent: HTMLElement,
    extraClass = ''
  ): HTMLButtonElement {
    const node = element(
      'button',
      `jp-dashdock-ClusterButton jp-mod-styled ${extraClass}`.trim(),
      parent
    );
    node.dataset.action = action;
    node.textContent = label;
    node.title = tooltip;
    return node;
  }

  private _cluster: ICluster;
  private _limits: IClusterLimits | null = null;
  private _trans: TranslationBundle;
  private _onEdit?: (id: string) => void;
  private _name: HTMLElement;
  private _provider: HTMLElement;
  private _status: HTMLElement;
  private _facts: HTMLElement;
  private _error: HTMLElement;
  private _workers: HTMLInputElement;
  private _minimum: HTMLInputElement;
  private _maximum: HTMLInputElement;
  private _edited = new Set<HTMLInputElement>();
  /** What is wrong with the typed numbers, found before sending. */
  private _problem = '';
  /** The failure of the card's last action, from the model. */
  private _failure = '';
}

export namespace ClusterCard {
  export interface IOptions {
    /** The user changed a number: the failure shown for this cluster is out of date. */
    onEdit?: (id: string) => void;
  }
}
