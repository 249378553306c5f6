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

/**
 * A cluster's card, built once and updated in place.
 *
 * #### Notes
 * The worker counts are inputs the user types in: an update never rewrites them (they start at
 * the cluster's size), so typed numbers and the focus survive the poll. Dragging the card's header
 * into a notebook inserts the code that connects to the cluster. Buttons carry a `data-action`
 * that the section acts on.
 */
export class ClusterCard {
  constructor(
    cluster: ICluster,
    limits: IClusterLimits | null,
    trans: TranslationBundle
  ) {
    this._cluster = cluster;
    this._trans = trans;
    this.node = element('div', 'jp-dashdock-ClusterCard');
    this.node.dataset.clusterId = cluster.id;

    const header = element('div', 'jp-dashdock-ClusterCard-header', this.node);
    header.title = trans.__(
      'Drag into a notebook to insert the code that connects to this cluster'
    );
    this._name = element('span', 'jp-dashdock-ClusterCard-name', header);
    this._status = element('span', 'jp-dashdock-ClusterCard-status', header);
    makeDraggable(header, {
      action: 'copy',
      mimeData: () => clientCodeMimeData(this._cluster),
      dragImageText: () => trans.__('Connect to %1', this._cluster.name)
    });

    this._facts = element('dl', 'jp-dashdock-ClusterCard-facts', this.node);
    const scale = element('div', 'jp-dashdock-ClusterCard-row', this.node);
    this._workers = Private.numberInput('workers', cluster.workers, scale);
    Private.button(trans.__('Scale'), 'scale', scale);
    const adapt = element('div', 'jp-dashdock-ClusterCard-row', this.node);
    this._minimum = Private.numberInput(
      'minimum',
      cluster.adapt?.minimum ?? 0,
      adapt
    );
    const maximum =
      cluster.adapt?.maximum ??
      Math.min(Math.max(cluster.workers, 1), limits?.max_workers ?? Infinity);
    this._maximum = Private.numberInput('maximum', maximum, adapt);
    Private.button(trans.__('Adapt'), 'adapt', adapt);
    const actions = element('div', 'jp-dashdock-ClusterCard-row', this.node);
    Private.button(trans.__('Layout'), 'layout', actions);
    Private.button(trans.__('Insert code'), 'insert', actions);
    Private.button(trans.__('Restart'), 'restart', actions);
    Private.button(trans.__('Shut down'), 'stop', actions, 'jp-mod-warn');
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
   * Show the cluster as last listed; `busy` while an operation on it is under way.
   */
  update(
    cluster: ICluster,
    busy: boolean,
    limits: IClusterLimits | null
  ): void {
    const trans = this._trans;
    this._cluster = cluster;
    this.node.classList.toggle('jp-mod-busy', busy);
    this._name.textContent = cluster.name;
    this._status.className = `jp-dashdock-ClusterCard-status jp-mod-${cluster.status}`;
    this._status.textContent = busy
      ? trans.__('working…')
      : Private.statusLabel(cluster.status, trans);
    const facts: [string, string][] = [
      [trans.__('Scheduler'), cluster.scheduler ?? '—'],
      [
        trans.__('Workers'),
        cluster.adapt
          ? trans.__(
              '%1 (adapting %2–%3)',
              cluster.workers,
              cluster.adapt.minimum,
              cluster.adapt.maximum
            )
          : String(cluster.workers)
      ],
      [trans.__('Threads'), String(cluster.threads)],
      [trans.__('Memory'), formatBytes(cluster.memory)]
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
    // The browser marks a number over the limit as invalid; the server refuses it and says why.
    const max = limits?.max_workers;
    const upTo = (label: string) =>
      max === undefined ? label : trans.__('%1 (at most %2)', label, max);
    Private.label(this._workers, upTo(trans.__('Workers')), max);
    Private.label(this._minimum, upTo(trans.__('Minimum workers')), max);
    Private.label(this._maximum, upTo(trans.__('Maximum workers')), max);
    const enabled = !busy && cluster.status === 'running';
    this.node
      .querySelectorAll<HTMLButtonElement | HTMLInputElement>('button, input')
      .forEach(control => {
        control.disabled = !enabled;
      });
  }

  private _cluster: ICluster;
  private _trans: TranslationBundle;
  private _name: HTMLElement;
  private _status: HTMLElement;
  private _facts: HTMLElement;
  private _workers: HTMLInputElement;
  private _minimum: HTMLInputElement;
  private _maximum: HTMLInputElement;
}

namespace Private {
  export function button(
    label: string,
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
    return node;
  }

  export function numberInput(
    name: string,
    value: number,
    parent: HTMLElement
  ): HTMLInputElement {
    const input = element(
      'input',
      'jp-dashdock-ClusterCard-number jp-mod-styled',
      parent
    );
    input.type = 'number';
    input.min = '0';
    input.name = name;
    input.value = String(value);
    return input;
  }

  /** Name a number input and hold it to the server's limit. */
  export function label(
    input: HTMLInputElement,
    text: string,
    max: number | undefined
  ): void {
    input.setAttribute('aria-label', text);
    input.title = text;
    if (max === undefined) {
      input.removeAttribute('max');
    } else {
      input.max = String(max);
    }
  }

  export function statusLabel(
    status: string,
    trans: TranslationBundle
  ): string {
    switch (status) {
      case 'running':
        return trans.__('running');
      case 'starting':
        return trans.__('starting');
      case 'closing':
        return trans.__('shutting down');
      default:
        return trans.__('stopped');
    }
  }
}
