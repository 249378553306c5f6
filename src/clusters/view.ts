/**
 * The Clusters section of the sidebar: start a cluster, and a card for each one (see model.ts for
 * clusters/).
 */

import { Dialog, showDialog } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';

import { ICluster } from '../api/types';
import { CommandIDs, IClustersModel } from '../tokens';
import { element, KeyedParts } from '../ui/dom';
import { ClusterCard, SizeAction } from './card';
import { Section } from '../ui/section';

/**
 * The managed clusters with their limits, and why starting one failed.
 *
 * #### Notes
 * Cards are kept per cluster and updated in place (see `ClusterCard`), so a poll that brings news
 * does not throw away what the user is typing. A failure of a card's action shows on that card;
 * only a failure to start a cluster shows under the section's header. Shutting down a cluster
 * that still has tasks asks first.
 */
export class ClustersSection extends Section {
  constructor(options: ClustersSection.IOptions) {
    super();
    this.addClass('jp-dashdock-Clusters');
    this._model = options.model;
    this._commands = options.commands;
    this._trans = options.trans;
    const trans = this._trans;
    this.title.label = trans.__('Clusters');
    const header = element('div', 'jp-dashdock-Clusters-header', this.node);
    this._create = element(
      'button',
      'jp-dashdock-ClusterButton jp-mod-styled jp-mod-accept',
      header
    );
    this._create.dataset.action = 'new';
    this._create.title = trans.__(
      'Start a Dask cluster managed by this Jupyter server'
    );
    const withOptions = (this._withOptions = element(
      'button',
      'jp-dashdock-ClusterButton jp-mod-styled',
      header
    ));
    withOptions.dataset.action = 'form';
    withOptions.textContent = trans.__('Options…');
    withOptions.setAttribute(
      'aria-label',
      trans.__('New cluster with options')
    );
    withOptions.title = trans.__(
      'Choose where a new cluster runs (this server or the Dask Gateway), its options and size'
    );
    this._limits = element('div', 'jp-dashdock-Clusters-limits', this.node);
    this._gateway = element('div', 'jp-dashdock-Clusters-gateway', this.node);
    this._gateway.setAttribute('role', 'status');
    this._error = element('div', 'jp-dashdock-Clusters-error', this.node);
    this._error.setAttribute('role', 'alert');
    this._cardList = element('div', 'jp-dashdock-Clusters-cards', this.node);
    this._empty = element('p', 'jp-dashdock-Clusters-empty');
    this._empty.textContent = trans.__(
      'No clusters yet. New cluster starts a Dask cluster on this Jupyter server (a LocalCluster unless configured otherwise).'
    );
    this._cards = new KeyedParts<ICluster, ClusterCard>({
      key: cluster => cluster.id,
      create: cluster =>
        new ClusterCard(cluster, this._model.limits, trans, {
          onEdit: id => this._model.dismissError(id)
        }),
      update: (card, cluster) =>
        card.update(
          cluster,
          this._model.busy.has(cluster.id),
          this._model.limits,
          this._model.errors.get(cluster.id)
        )
    });
    this.listen('click');
    this.follow(this._model.changed, this._render);
    this._render();
  }

  /**
   * Handle the DOM events of the section (delegated from its root node).
   */
  handleEvent(event: Event): void {
    if (event.type === 'click') {
      this._evtClick(event as MouseEvent);
    }
  }

  private _evtClick(event: MouseEvent): void {
    const button = (event.target as HTMLElement).closest<HTMLElement>(
      '[data-action]'
    );
    if (!button) {
      return;
    }
    if (button.dataset.action === 'new') {
      if (button.getAttribute('aria-disabled') === 'true') {
        return;
      }
      void this._commands.execute(CommandIDs.launchCluster);
      return;
    }
    if (button.dataset.action === 'form') {
      if (!this._model.busy.has('new')) {
        void this._commands.execute(CommandIDs.newClusterForm);
      }
      return;
    }
    const id = button.closest<HTMLElement>('.jp-dashdock-ClusterCard')?.dataset
      .clusterId;
    const cluster = this._model.clusters.find(c => c.id === id);
    const card = id === undefined ? undefined : this._cards.get(id);
    // Bail if the card's cluster is gone, or busy with an operation already.
    if (!cluster || !card || this._model.busy.has(cluster.id)) {
      return;
    }
    const requested = card.requested;
    switch (button.dataset.action) {
      case 'scale':
        void this._resize(card, cluster, 'scale', () =>
          this._model.scale(cluster.id, requested.workers)
        );
        break;
      case 'adapt':
        void this._resize(card, cluster, 'adapt', () =>
          this._model.adapt(cluster.id, requested.minimum, requested.maximum)
        );
        break;
      case 'layout':
        if (cluster.source) {
          void this._commands.execute(CommandIDs.openLayout, {
            source: cluster.source
          });
        }
        break;
      case 'insert':
        void this._commands.execute(CommandIDs.insertClientCode, {
          cluster: cluster.id
        });
        break;
      case 'restart':
        void this._restart(cluster);
        break;
      case 'stop':
        void this._stop(cluster);
        break;
    }
  }

  /** Send a size the card finds sound; once it went through, the card follows the cluster again. */
  private async _resize(
    card: ClusterCard,
    cluster: ICluster,
    action: SizeAction,
    operation: () => Promise<void>
  ): Promise<void> {
    if (!card.check(action)) {
      return;
    }
    await operation();
    if (!this._model.errors.has(cluster.id)) {
      card.settle(action);
    }
  }

  /**
   * Restart a cluster once the user confirmed: its scheduler and workers start afresh, so what it
   * holds is lost, which Dask's own restart does without asking but a card button should not.
   */
  private async _restart(cluster: ICluster): Promise<void> {
    const trans = this._trans;
    await this._model.refresh().catch(() => undefined);
    const tasks =
      this._model.clusters.find(c => c.id === cluster.id)?.tasks ?? null;
    const lost = trans.__(
      'Every result held in its memory is lost; connected clients reconnect to the new scheduler.'
    );
    const running = tasks
      ? trans._n(
          '%1 unfinished task is cancelled.',
          '%1 unfinished tasks are cancelled.',
          tasks
        )
      : '';
    const result = await showDialog({
      title: trans.__('Restart %1?', cluster.name),
      body: running ? `${running} ${lost}` : lost,
      buttons: [
        Dialog.cancelButton({ label: trans.__('Cancel') }),
        Dialog.warnButton({ label: trans.__('Restart') })
      ],
      defaultButton: 0
    });
    if (result.button.accept) {
      await this._model.restart(cluster.id);
    }
  }

  /**
   * Shut a cluster down, asking first while its scheduler has tasks to finish or its workers hold
   * results (counted afresh: the last poll may be seconds old): either is lost with it.
   */
  private async _stop(cluster: ICluster): Promise<void> {
    const trans = this._trans;
    await this._model.refresh().catch(() => undefined);
    const listed = this._model.clusters.find(c => c.id === cluster.id);
    const tasks = listed?.tasks ?? null;
    const held = listed?.held ?? 0;
    if (tasks !== 0 || held > 0) {
      const said: string[] = [];
      if (tasks === null) {
        said.push(
          trans.__('Its scheduler cannot tell whether work is running.')
        );
      } else if (tasks > 0) {
        said.push(
          trans._n(
            '%1 task is still running.',
            '%1 tasks are still running.',
            tasks
          )
        );
      }
      if (held > 0) {
        said.push(
          trans._n(
            'Its workers hold %1 result in memory, which is lost.',
            'Its workers hold %1 results in memory, which are lost.',
            held
          )
        );
      }
      const result = await showDialog({
        title: trans.__('Shut down %1?', cluster.name),
        body: said.join(' '),
        buttons: [
          Dialog.cancelButton({ label: trans.__('Cancel') }),
          Dialog.warnButton({ label: trans.__('Shut down') })
        ],
        // Enter keeps the work: losing it takes a deliberate choice.
        defaultButton: 0
      });
      if (!result.button.accept) {
        return;
      }
    }
    await this._model.stop(cluster.id);
  }

  private _render(): void {
    const trans = this._trans;
    const starting = this._model.busy.has('new');
    // Marked rather than disabled, so a keyboard user's focus stays on it while it starts.
    this._create.setAttribute('aria-disabled', String(starting));
    this._withOptions.setAttribute('aria-disabled', String(starting));
    this._create.textContent = starting
      ? trans.__('Starting…')
      : trans.__('New cluster');
    const limits = this._model.limits;
    this._limits.textContent = limits
      ? trans.__(
          'Up to %1 per cluster, %2 at a time',
          trans._n('%1 worker', '%1 workers', limits.max_workers),
          trans._n('%1 cluster', '%1 clusters', limits.max_clusters)
        )
      : '';
    this._limits.title = limits
      ? trans.__(
          'Limits set on the Jupyter server (DashdockApp.max_workers and DashdockApp.max_clusters)'
        )
      : '';
    const gateway = this._model.gateway;
    this._gateway.textContent = gateway?.error
      ? trans.__('Dask Gateway: %1', gateway.error)
      : '';
    this._gateway.hidden = !gateway?.error;
    this._error.textContent = this._model.error;
    this._error.hidden = !this._model.error;
    const clusters = this._model.clusters;
    const known = new Set(
      clusters.filter(c => this._cards.get(c.id)).map(c => c.id)
    );
    const focusInCards = this._cardList.contains(document.activeElement);
    this._cards.render(
      this._cardList,
      clusters,
      clusters.length || starting ? [] : [this._empty]
    );
    // The focused control went with its card (shut down, here or from a notebook) or was disabled
    // (the cluster is stopping): keep the keyboard in the section rather than lose it to the page.
    const active = document.activeElement as HTMLButtonElement | null;
    if (
      focusInCards &&
      (!active ||
        active === document.body ||
        !active.isConnected ||
        active.disabled)
    ) {
      this._create.focus();
    }
    // A cluster that appeared while the section is seen (New cluster, or a notebook's) is
    // brought into sight with its controls (at the card's end, when the card is taller than the
    // section); the clusters listed on load stay where they are.
    const added = clusters.find(c => !known.has(c.id));
    if (added && this._rendered && this.isVisible) {
      const card = this._cards.get(added.id)!.node;
      requestAnimationFrame(() =>
        card.scrollIntoView({
          block: card.offsetHeight > this.node.clientHeight ? 'end' : 'nearest'
        })
      );
    }
    this._rendered = true;
  }

  private _model: IClustersModel;
  private _rendered = false;
  private _commands: CommandRegistry;
  private _trans: TranslationBundle;
  private _create: HTMLButtonElement;
  private _withOptions: HTMLButtonElement;
  private _limits: HTMLElement;
  private _gateway: HTMLElement;
  private _error: HTMLElement;
  private _cardList: HTMLElement;
  private _empty: HTMLElement;
  private _cards: KeyedParts<ICluster, ClusterCard>;
}

export namespace ClustersSection {
  export interface IOptions {
    model: IClustersModel;
    commands: CommandRegistry;
    trans: TranslationBundle;
  }
}
