import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { MimeData } from '@lumino/coreutils';
import { Drag } from '@lumino/dragdrop';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { clientCode } from '../clusters';
import { formatBytes } from '../format';
import { CommandIDs, ICluster, IClustersModel } from '../tokens';

/** The mime type under which a notebook accepts dropped cells. */
const JUPYTER_CELL_MIME = 'application/vnd.jupyter.cells';
const DRAG_THRESHOLD = 5;

/**
 * The Clusters section of the sidebar: start a cluster, and for each one its size and actions.
 */
export class ClustersView extends Widget {
  constructor(options: ClustersView.IOptions) {
    super();
    this.addClass('jp-dashdock-Clusters');
    this._model = options.model;
    this._commands = options.commands;
    this._trans = options.trans;
    this._model.changed.connect(this._render, this);
    this._render();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._render, this);
    super.dispose();
  }

  /**
   * Handle the DOM events of the section (delegated from its root node).
   */
  handleEvent(event: Event): void {
    switch (event.type) {
      case 'click':
        this._evtClick(event as MouseEvent);
        break;
      case 'pointerdown':
        this._evtPointerDown(event as PointerEvent);
        break;
    }
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this.node.addEventListener('click', this);
    this.node.addEventListener('pointerdown', this);
  }

  protected onBeforeDetach(msg: Message): void {
    this.node.removeEventListener('click', this);
    this.node.removeEventListener('pointerdown', this);
    super.onBeforeDetach(msg);
  }

  private _evtClick(event: MouseEvent): void {
    const button = (event.target as HTMLElement).closest<HTMLElement>('[data-action]');
    if (!button) {
      return;
    }
    const card = button.closest<HTMLElement>('.jp-dashdock-ClusterCard');
    const cluster = this._model.clusters.find(c => c.id === card?.dataset.clusterId);
    const number = (name: string) => Number(card?.querySelector<HTMLInputElement>(`input[name="${name}"]`)?.value);
    switch (button.dataset.action) {
      case 'new':
        void this._commands.execute(CommandIDs.launchCluster);
        break;
      case 'scale':
        if (cluster) {
          void this._model.scale(cluster.id, number('workers'));
        }
        break;
      case 'adapt':
        if (cluster) {
          void this._model.adapt(cluster.id, number('minimum'), number('maximum'));
        }
        break;
      case 'layout':
        if (cluster?.source) {
          void this._commands.execute(CommandIDs.openLayout, { source: cluster.source });
        }
        break;
      case 'insert':
        if (cluster) {
          void this._commands.execute(CommandIDs.insertClientCode, { cluster: cluster.id });
        }
        break;
      case 'restart':
        if (cluster) {
          void this._model.restart(cluster.id);
        }
        break;
      case 'stop':
        if (cluster) {
          void this._model.stop(cluster.id);
        }
        break;
    }
  }

  /**
   * A card dragged past a small threshold carries a code cell that a notebook accepts on drop.
   */
  private _evtPointerDown(press: PointerEvent): void {
    const target = press.target as HTMLElement;
    const handle = target.closest<HTMLElement>('.jp-dashdock-ClusterCard-header');
    const card = handle?.closest<HTMLElement>('.jp-dashdock-ClusterCard');
    const cluster = this._model.clusters.find(c => c.id === card?.dataset.clusterId);
    if (!cluster || press.button !== 0) {
      return;
    }
    const onMove = (move: PointerEvent) => {
      if (
        Math.abs(move.clientX - press.clientX) < DRAG_THRESHOLD &&
        Math.abs(move.clientY - press.clientY) < DRAG_THRESHOLD
      ) {
        return;
      }
      stop();
      const mimeData = new MimeData();
      mimeData.setData(JUPYTER_CELL_MIME, [
        { cell_type: 'code', source: clientCode(cluster), outputs: [], execution_count: null, metadata: {} }
      ]);
      mimeData.setData('text/plain', clientCode(cluster));
      const image = document.createElement('div');
      image.className = 'jp-dashdock-DragImage';
      image.textContent = this._trans.__('Connect to %1', cluster.name);
      void new Drag({ mimeData, dragImage: image, proposedAction: 'copy', supportedActions: 'copy' }).start(
        move.clientX,
        move.clientY
      );
    };
    const stop = () => {
      document.removeEventListener('pointermove', onMove, true);
      document.removeEventListener('pointerup', stop, true);
    };
    document.addEventListener('pointermove', onMove, true);
    document.addEventListener('pointerup', stop, true);
  }

  private _render(): void {
    const trans = this._trans;
    const header = document.createElement('div');
    header.className = 'jp-dashdock-Clusters-header';
    const title = document.createElement('span');
    title.textContent = trans.__('Clusters');
    const create = Private.button(trans.__('New cluster'), 'new', 'jp-mod-accept');
    create.disabled = this._model.busy.has('new');
    if (create.disabled) {
      create.textContent = trans.__('Starting…');
    }
    header.append(title, create);
    const limits = document.createElement('div');
    limits.className = 'jp-dashdock-Clusters-limits';
    if (this._model.limits) {
      const { max_workers, max_clusters } = this._model.limits;
      limits.textContent = trans.__(
        'Up to %1 per cluster, %2 at a time',
        trans._n('%1 worker', '%1 workers', max_workers),
        trans._n('%1 cluster', '%1 clusters', max_clusters)
      );
      limits.title = trans.__(
        'Limits set on the Jupyter server (DashdockApp.max_workers and DashdockApp.max_clusters)'
      );
    }
    const error = document.createElement('div');
    error.className = 'jp-dashdock-Clusters-error';
    error.setAttribute('role', 'alert');
    error.textContent = this._model.error;
    const cards = this._model.clusters.map(cluster => this._card(cluster));
    if (!cards.length && !this._model.busy.has('new')) {
      const empty = document.createElement('p');
      empty.className = 'jp-dashdock-Clusters-empty';
      empty.textContent = trans.__('No cluster yet: "New cluster" starts one on this server.');
      cards.push(empty);
    }
    // Keep what the user is typing in a card's inputs across re-renders.
    const typed = new Map<string, string>();
    this.node.querySelectorAll<HTMLInputElement>('.jp-dashdock-ClusterCard input').forEach(input => {
      typed.set(`${input.closest<HTMLElement>('.jp-dashdock-ClusterCard')?.dataset.clusterId}/${input.name}`, input.value);
    });
    this.node.replaceChildren(header, limits, error, ...cards);
    this.node.querySelectorAll<HTMLInputElement>('.jp-dashdock-ClusterCard input').forEach(input => {
      const value = typed.get(`${input.closest<HTMLElement>('.jp-dashdock-ClusterCard')?.dataset.clusterId}/${input.name}`);
      if (value !== undefined) {
        input.value = value;
      }
    });
  }

  private _card(cluster: ICluster): HTMLElement {
    const trans = this._trans;
    const busy = this._model.busy.has(cluster.id);
    const card = document.createElement('div');
    card.className = 'jp-dashdock-ClusterCard';
    card.classList.toggle('jp-mod-busy', busy);
    card.dataset.clusterId = cluster.id;

    const header = document.createElement('div');
    header.className = 'jp-dashdock-ClusterCard-header';
    header.title = trans.__('Drag into a notebook to insert the code that connects to this cluster');
    const name = document.createElement('span');
    name.className = 'jp-dashdock-ClusterCard-name';
    name.textContent = cluster.name;
    const status = document.createElement('span');
    status.className = `jp-dashdock-ClusterCard-status jp-mod-${cluster.status}`;
    status.textContent = busy ? trans.__('working…') : Private.statusLabel(cluster.status, trans);
    header.append(name, status);

    const facts = document.createElement('dl');
    facts.className = 'jp-dashdock-ClusterCard-facts';
    const fact = (label: string, value: string) => {
      const term = document.createElement('dt');
      term.textContent = label;
      const detail = document.createElement('dd');
      detail.textContent = value;
      facts.append(term, detail);
    };
    fact(trans.__('Scheduler'), cluster.scheduler ?? '—');
    fact(trans.__('Workers'), cluster.adapt
      ? trans.__('%1 (adapting %2–%3)', cluster.workers, cluster.adapt.minimum, cluster.adapt.maximum)
      : String(cluster.workers));
    fact(trans.__('Threads'), String(cluster.threads));
    fact(trans.__('Memory'), formatBytes(cluster.memory));

    // The browser marks a number over the limit as invalid; the server refuses it and says why.
    const max = this._model.limits?.max_workers;
    const upTo = (label: string) => (max === undefined ? label : trans.__('%1 (at most %2)', label, max));
    const scale = document.createElement('div');
    scale.className = 'jp-dashdock-ClusterCard-row';
    scale.append(
      Private.numberInput('workers', cluster.workers, upTo(trans.__('Workers')), max),
      Private.button(trans.__('Scale'), 'scale')
    );
    const adapt = document.createElement('div');
    adapt.className = 'jp-dashdock-ClusterCard-row';
    adapt.append(
      Private.numberInput('minimum', cluster.adapt?.minimum ?? 0, upTo(trans.__('Minimum workers')), max),
      Private.numberInput(
        'maximum',
        cluster.adapt?.maximum ?? Math.min(Math.max(cluster.workers, 1), max ?? Infinity),
        upTo(trans.__('Maximum workers')),
        max
      ),
      Private.button(trans.__('Adapt'), 'adapt')
    );
    const actions = document.createElement('div');
    actions.className = 'jp-dashdock-ClusterCard-row';
    actions.append(
      Private.button(trans.__('Layout'), 'layout'),
      Private.button(trans.__('Insert code'), 'insert'),
      Private.button(trans.__('Restart'), 'restart'),
      Private.button(trans.__('Shut down'), 'stop', 'jp-mod-warn')
    );
    card.append(header, facts, scale, adapt, actions);
    card.querySelectorAll('button, input').forEach(control => {
      (control as HTMLButtonElement).disabled = busy || cluster.status !== 'running';
    });
    return card;
  }

  private _model: IClustersModel;
  private _commands: CommandRegistry;
  private _trans: TranslationBundle;
}

export namespace ClustersView {
  export interface IOptions {
    model: IClustersModel;
    commands: CommandRegistry;
    trans: TranslationBundle;
  }
}

namespace Private {
  export function button(label: string, action: string, extraClass = ''): HTMLButtonElement {
    const element = document.createElement('button');
    element.className = `jp-dashdock-ClusterButton jp-mod-styled ${extraClass}`.trim();
    element.dataset.action = action;
    element.textContent = label;
    return element;
  }

  export function numberInput(name: string, value: number, label: string, max?: number): HTMLInputElement {
    const input = document.createElement('input');
    input.type = 'number';
    input.min = '0';
    if (max !== undefined) {
      input.max = String(max);
    }
    input.name = name;
    input.value = String(value);
    input.className = 'jp-dashdock-ClusterCard-number jp-mod-styled';
    input.setAttribute('aria-label', label);
    input.title = label;
    return input;
  }

  export function statusLabel(status: string, trans: TranslationBundle): string {
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
