/**
 * The strip under a cell that computed with Dask (see data.ts for notebook/).
 */

import { DOMUtils } from '@jupyterlab/apputils';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { PartialJSONObject } from '@lumino/coreutils';
import { Poll } from '@lumino/polling';
import { Widget } from '@lumino/widgets';

import { APIError, cellReport } from '../api/client';
import { IAlert } from '../api/types';
import { CommandIDs, IAlertsModel, IPlotPanes, MimeTypes } from '../tokens';
import { KeyedParts } from '../ui/dom';
import {
  cellAlerts,
  ICellData,
  readCellData,
  readCellReport,
  summaryLines
} from './celldata';
import {
  alertRow,
  cellDetails,
  cellErrors,
  cellStatus,
  groupBars,
  make,
  stripButton,
  summaryHTML
} from './cellparts';
import { CellFinding, cellSource } from './cellfinding';
import { timeShare } from './timeshare';

/** The kernel updates a running cell's output twice a second; the strip follows at that rate. */
const FOLLOW_INTERVAL = 500;
/** Answers "no report" tolerated before the strip stops following (the kernel writes its file
 * at most twice a second, so the first questions may come before it). */
const MISSING_TOLERATED = 20;
const FINE_METRICS = '/individual-fine-performance-metrics';

/**
 * What a cell computed with Dask: its tasks by group with a bar each, time, throughput, and when
 * the work ends, where the time went, bytes, peak memory and errors.
 *
 * #### Notes
 * While the cell runs the kernel updates the output itself. JupyterLab takes no updates for a
 * cell that has ended, so a strip whose work goes on after its cell follows the kernel's report
 * through the server, and writes the settled report into the output, so the notebook saves it.
 */
export class CellStrip extends Widget implements IRenderMime.IRenderer {
  constructor(options: CellStrip.IOptions) {
    super();
    this.addClass('jp-dashdock-CellStrip');
    this.id = DOMUtils.createDomID(); // names the time region the toggle controls
    this._commands = options.commands;
    this._panes = options.panes;
    this._trans = options.trans;
    this._alerts = options.alerts ?? null;
    // The alerts live beside the body, which is rebuilt: a focused action keeps its focus.
    this._body = make('div');
    this._alertList = make('ul', {
      className: 'jp-dashdock-CellStrip-alerts',
      ariaLabel: this._trans.__('Alerts raised while this cell ran'),
      hidden: true
    });
    this._finding = new CellFinding(this._trans);
    this.node.append(this._body, this._finding.node, this._alertList);
    this._alertRows = new KeyedParts<IAlert>({
      key: alert => alert.id,
      create: () => ({
        node: make('li', { className: 'jp-dashdock-CellStrip-alert' })
      }),
      update: (part, alert) =>
        alertRow(part.node, alert, this._alerts!, this._commands, this._trans)
    });
    this._alerts?.changed.connect(this._showAlerts, this);
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this._model = model;
    this._data = readCellData(model.data[MimeTypes.cell]);
    this._render();
    this._showAlerts();
    if (this._data && !this._data.report.settled && this._data.kernelId) {
      this._follow();
    }
    return Promise.resolve();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._alerts?.changed.disconnect(this._showAlerts, this);
    this._poll?.dispose();
    super.dispose();
  }

  /** The alerts of the cell's source raised while its work ran, each with its actions. */
  private _showAlerts(): void {
    const data = this._data;
    if (!this._alerts || !data?.dashboard || this.isDisposed) {
      return;
    }
    if (this._alertSource === null) {
      // Asked once at a time; a failure is asked again at the next change of the alerts.
      this._alertSource = cellSource(this._data, this._trans).then(
        source => {
          this._showAlerts();
          return source;
        },
        () => {
          this._alertSource = null;
          return '';
        }
      );
      return;
    }
    void this._alertSource.then(source => {
      if (!source || this.isDisposed || !this._data) {
        return;
      }
      const alerts = cellAlerts(
        this._alerts!.alerts,
        source,
        this._data.report,
        Date.now() / 1000
      );
      this._alertList.hidden = !alerts.length;
      this._alertRows.render(this._alertList, alerts);
    });
  }

  private _follow(): void {
    if (this._poll) {
      return;
    }
    this._poll = new Poll({
      factory: () => this._refresh(),
      frequency: { interval: FOLLOW_INTERVAL, backoff: true, max: 10_000 },
      standby: () => document.hidden,
      name: 'dashdock:cell-strip'
    });
  }

  private async _refresh(): Promise<void> {
    const data = this._data;
    if (!data || !data.kernelId || data.report.settled) {
      this._stopFollowing();
      return;
    }
    let answer: { report: unknown };
    try {
      answer = await cellReport(data.kernelId, data.cellId);
    } catch (error) {
      if (
        error instanceof APIError &&
        error.status === 404 &&
        ++this._missing >= MISSING_TOLERATED
      ) {
        this._note = this._trans.__(
          'No longer followed: the kernel has no report of this cell (it may have stopped).'
        );
        this._render();
        this._stopFollowing();
        return;
      }
      throw error; // the poll backs off
    }
    this._missing = 0;
    const report = readCellReport(answer.report);
    if (!report || this.isDisposed) {
      return;
    }
    this._data = { ...data, report };
    this._render();
    this._showAlerts();
    if (report.settled) {
      this._stopFollowing();
      this._save(answer.report as PartialJSONObject);
    }
  }

  private _stopFollowing(): void {
    const poll = this._poll;
    this._poll = null;
    // Not from inside its own factory: dispose after this tick.
    setTimeout(() => poll?.dispose(), 0);
  }

  /** The settled report into the output itself: what the notebook saves and others show. */
  private _save(report: PartialJSONObject): void {
    const model = this._model;
    if (!model || !this._data) {
      return;
    }
    const raw = model.data[MimeTypes.cell] as PartialJSONObject;
    const lines = summaryLines(this._data);
    model.setData({
      data: {
        ...model.data,
        [MimeTypes.cell]: { ...raw, report },
        'text/plain': lines.join('\n'),
        'text/html': summaryHTML(lines)
      }
    });
  }

  private _render(): void {
    const data = this._data;
    const trans = this._trans;
    // The body is rebuilt: an action that had the focus gets it back in the new body.
    const focused =
      document.activeElement instanceof HTMLElement &&
      this._body.contains(document.activeElement)
        ? document.activeElement.dataset.action
        : undefined;
    this._body.replaceChildren();
    this._renderBody(data, trans);
    this._finding.follow(data);
    if (focused) {
      this._body
        .querySelector<HTMLElement>(`[data-action="${focused}"]`)
        ?.focus();
    }
  }

  private _renderBody(data: ICellData | null, trans: TranslationBundle): void {
    if (!data) {
      this._body.append(
        make('div', {
          className: 'jp-dashdock-CellStrip-note',
          textContent: trans.__(
            'This cell strip is damaged and cannot be shown.'
          )
        })
      );
      return;
    }
    const { report } = data;
    this.node.dataset.state = report.settled
      ? report.erred
        ? 'erred'
        : 'done'
      : 'running';
    this.node.setAttribute(
      'aria-label',
      trans.__('What cell %1 computed with Dask', data.label)
    );
    this.node.setAttribute('role', 'group');

    const head = make('div', { className: 'jp-dashdock-CellStrip-head' });
    head.append(
      make('span', {
        className: 'jp-dashdock-CellStrip-title',
        textContent: trans.__('Dask · cell %1', data.label)
      }),
      make('span', {
        className: 'jp-dashdock-CellStrip-status',
        textContent: cellStatus(data, trans)
      }),
      this._button(
        'task-stream',
        trans.__('Task stream'),
        trans.__("This cell's tasks on the recorded task stream"),
        () => this._openTaskStream()
      ),
      this._timeToggle()
    );
    this._body.append(head, groupBars(data, trans));
    if (this._showTime) {
      const time = timeShare(report, trans);
      time.id = `${this.id}-time`;
      time.append(
        this._button(
          'fine-metrics',
          trans.__('Cluster-wide: Fine Performance Metrics'),
          trans.__(
            "Dask's Fine Performance Metrics of the whole cluster; its span filter shows this cell as “%1”",
            data.span
          ),
          () => this._openFineMetrics()
        )
      );
      this._body.append(time);
    }
    if (report.settled) {
      this._body.append(cellDetails(data, trans));
    }
    if (report.erred) {
      this._body.append(cellErrors(data, trans));
    }
    if (this._note) {
      this._body.append(
        make('div', {
          className: 'jp-dashdock-CellStrip-note',
          textContent: this._note
        })
      );
    }
  }

  /** "Where time went": shows or hides the cell's own time, group by group. */
  private _timeToggle(): HTMLButtonElement {
    const toggle = this._button(
      'time',
      this._trans.__('Where time went'),
      this._trans.__("This cell's thread time by task group"),
      async () => {
        this._showTime = !this._showTime;
        this._render();
      }
    );
    toggle.setAttribute('aria-expanded', String(this._showTime));
    toggle.setAttribute('aria-controls', `${this.id}-time`);
    return toggle;
  }

  private _button(
    name: string,
    label: string,
    title: string,
    action: () => Promise<unknown>
  ): HTMLButtonElement {
    return stripButton(name, label, title, () => {
      action().catch(error => {
        this._note = String(error instanceof Error ? error.message : error);
        this._render();
      });
    });
  }

  private async _openTaskStream(): Promise<void> {
    const data = this._data!;
    // The span the cell's tasks ran in holds all of them; the scheduler's times of the cell's
    // submission and end may miss an edge task by the hop between scheduler and worker.
    const submitted = data.report.submitted;
    const [start, end] = data.report.ran ?? [
      submitted,
      submitted + Math.max(data.report.wall, 0.001)
    ];
    await this._commands.execute(CommandIDs.openHistoryPane, {
      source: await cellSource(this._data, this._trans),
      page: 'task-stream',
      start,
      end,
      runName: this._trans.__('cell %1', data.label)
    });
  }

  private async _openFineMetrics(): Promise<void> {
    this._panes.open({
      source: await cellSource(this._data, this._trans),
      path: FINE_METRICS,
      name: this._trans.__('Fine Performance Metrics')
    });
  }

  private _commands: CommandRegistry;
  private _panes: IPlotPanes;
  private _alerts: IAlertsModel | null;
  private _alertSource: Promise<string> | null = null;
  private _body: HTMLElement;
  private _alertList: HTMLUListElement;
  private _finding: CellFinding;
  private _alertRows: KeyedParts<IAlert>;
  private _trans: TranslationBundle;
  private _model: IRenderMime.IMimeModel | null = null;
  private _data: ICellData | null = null;
  private _poll: Poll | null = null;
  private _note = '';
  private _showTime = false;
  private _missing = 0;
}

export namespace CellStrip {
  export interface IOptions {
    commands: CommandRegistry;
    panes: IPlotPanes;
    trans: TranslationBundle;
    /** Where the alerts come from; without it the strip lists none. */
    alerts?: IAlertsModel | null;
  }
}
