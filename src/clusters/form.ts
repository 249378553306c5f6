/**
 * The "New cluster" form: where the cluster runs, its options and its size (see model.ts for
 * clusters/). The server describes the fields (a gateway's cluster options, or the local cluster
 * class's keyword arguments) and checks the values again.
 */

import { Dialog, showDialog } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { clusterForm } from '../api/client';
import type {
  ClusterProvider,
  IClusterRequest,
  IFormField
} from '../api/types';
import { element } from '../ui/dom';

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/**
 * The form's body. Fields load from the server for the chosen provider; only the values the user
 * changed are sent, so a field left alone keeps the class's or the gateway's own default.
 */
class ClusterForm
  extends Widget
  implements Dialog.IBodyWidget<IClusterRequest>
{
  constructor(
    providers: ClusterProvider[],
    trans: TranslationBundle,
    again?: { request: IClusterRequest; why: string }
  ) {
    super();
    this.addClass('jp-dashdock-ClusterForm');
    this._trans = trans;
    this._again = again ?? null;
    this._provider = this._row(
      trans.__('Runs on'),
      element('select', 'jp-mod-styled'),
      this.node
    );
    this._provider.name = 'provider';
    for (const provider of providers) {
      const option = element('option', '', this._provider);
      option.value = provider;
      option.textContent =
        provider === 'gateway'
          ? trans.__('Dask Gateway')
          : trans.__('This Jupyter server');
    }
    this._provider.value =
      again?.request.provider && providers.includes(again.request.provider)
        ? again.request.provider
        : providers[providers.length - 1];
    this._provider.addEventListener('change', () => void this._load());
    this._workers = this._row(
      trans.__('Workers'),
      element('input', 'jp-mod-styled'),
      this.node
    );
    this._workers.name = 'workers';
    this._workers.type = 'number';
    this._workers.min = '0';
    this._workers.placeholder = trans.__('default');
    this._status = element('p', 'jp-dashdock-ClusterForm-status', this.node);
    this._status.setAttribute('role', 'status');
    this._fields = element('div', 'jp-dashdock-ClusterForm-fields', this.node);
    void this._load();
  }

  getValue(): IClusterRequest {
    const request: IClusterRequest = {
      provider: this._provider.value as ClusterProvider
    };
    if (this._workers.value !== '') {
      request.workers = Number(this._workers.value);
    }
    const options: Record<string, unknown> = {};
    for (const [field, control] of this._controls) {
      const value = Private.read(field, control);
      if (JSON.stringify(value) !== JSON.stringify(field.default)) {
        options[field.name] = value;
      }
    }
    if (Object.keys(options).length) {
      request.options = options;
    }
    return request;
  }

  /**
   * The fields of the chosen provider; a failure says why in the form (it can still be sent).
   * A form shown again after the server refused it holds what was sent, and says why.
   */
  private async _load(): Promise<void> {
    const trans = this._trans;
    const provider = this._provider.value as ClusterProvider;
    const load = ++this._loads;
    const again =
      this._again?.request.provider === provider ? this._again : null;
    this._workers.value =
      again?.request.workers !== undefined
        ? String(again.request.workers)
        : provider === 'gateway'
          ? '1'
          : '';
    this._controls = [];
    this._fields.replaceChildren();
    this._status.textContent = trans.__('Loading the options…');
    let fields: IFormField[];
    try {
      fields = await clusterForm(provider);
    } catch (error: any) {
      if (load === this._loads) {
        this._status.textContent = String(error?.message ?? error);
      }
      return;
    }
    if (load !== this._loads || this.isDisposed) {
      return; // the user chose another provider meanwhile
    }
    this._status.textContent = again
      ? again.why
      : fields.length
        ? ''
        : trans.__('This cluster has no options to choose.');
    for (const field of fields) {
      const control = this._row(
        field.label,
        Private.control(field, trans),
        this._fields
      );
      const sent = again?.request.options?.[field.name];
      if (sent !== undefined) {
        Private.write(field, control, sent);
      }
      this._controls.push([field, control]);
    }
  }

  private _row<T extends HTMLElement>(
    label: string,
    control: T,
    parent: HTMLElement
  ): T {
    const row = element('label', 'jp-dashdock-ClusterForm-field', parent);
    element('span', '', row).textContent = label;
    row.appendChild(control);
    return control;
  }

  private _trans: TranslationBundle;
  private _again: { request: IClusterRequest; why: string } | null;
  private _loads = 0;
  private _provider: HTMLSelectElement;
  private _workers: HTMLInputElement;
  private _status: HTMLElement;
  private _fields: HTMLElement;
  private _controls: [IFormField, Control][] = [];
}

/**
 * Ask where and how to start a cluster; null when the user cancels. `again`: the request the
 * server refused and why, shown in the form to be corrected.
 */
export async function askNewCluster(
  providers: ClusterProvider[],
  trans: TranslationBundle,
  again?: { request: IClusterRequest; why: string }
): Promise<IClusterRequest | null> {
  const result = await showDialog({
    title: trans.__('New cluster'),
    body: new ClusterForm(providers, trans, again),
    buttons: [
      Dialog.cancelButton({ label: trans.__('Cancel') }),
      Dialog.okButton({ label: trans.__('Start') })
    ],
    focusNodeSelector: 'select[name="provider"]'
  });
  return result.button.accept ? result.value : null;
}

namespace Private {
  /** The input for a field, holding its default. */
  export function control(
    field: IFormField,
    trans: TranslationBundle
  ): Control {
    if (field.type === 'select') {
      const select = element('select', 'jp-mod-styled');
      for (const choice of field.options ?? []) {
        const option = element('option', '', select);
        option.value = choice;
        option.textContent = choice;
      }
      select.value = String(field.default);
      select.name = field.name;
      return select;
    }
    if (field.type === 'mapping') {
      const area = element('textarea', 'jp-mod-styled');
      area.name = field.name;
      area.rows = 3;
      area.value = JSON.stringify(field.default ?? {});
      return area;
    }
    const input = element('input', 'jp-mod-styled');
    input.name = field.name;
    if (field.type === 'bool') {
      input.type = 'checkbox';
      input.checked = Boolean(field.default);
      return input;
    }
    if (field.type === 'int' || field.type === 'float') {
      input.type = 'number';
      input.step = field.type === 'int' ? '1' : 'any';
      if (field.min !== undefined) {
        input.min = String(field.min);
      }
      if (field.max !== undefined) {
        input.max = String(field.max);
      }
    }
    // No default: the class decides unless the user types something.
    input.value = field.default === null ? '' : String(field.default);
    input.placeholder = trans.__('default');
    return input;
  }

  /** Put a value that was sent back into its control. */
  export function write(
    field: IFormField,
    control: Control,
    value: unknown
  ): void {
    if (field.type === 'bool') {
      (control as HTMLInputElement).checked = Boolean(value);
    } else if (field.type === 'mapping' && typeof value !== 'string') {
      control.value = JSON.stringify(value);
    } else {
      control.value = value === null ? '' : String(value);
    }
  }

  /** What a control holds, in its field's type (text that is no JSON object goes as text: the
   * server says what is wrong with it). */
  export function read(field: IFormField, control: Control): unknown {
    if (field.type === 'bool') {
      return (control as HTMLInputElement).checked;
    }
    if (field.type === 'int' || field.type === 'float') {
      return control.value === '' ? field.default : Number(control.value);
    }
    if (field.type === 'string' && control.value === '') {
      return field.default;
    }
    if (field.type === 'mapping') {
      try {
        return JSON.parse(control.value || '{}');
      } catch {
        return control.value;
      }
    }
    return control.value;
  }
}
