/**
 * Asking for the credentials of a dashboard behind authentication (see model.ts for sources/).
 */

import { Dialog, showDialog } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import type { ICredentials } from '../api/types';
import { hostAndPort } from '../api/urls';
import { element } from '../ui/dom';

/** Where a token usually goes, for each kind: the name field starts with it. */
const USUAL_NAMES: Record<ICredentials['kind'], string> = {
  header: 'Authorization',
  query: 'token',
  cookie: 'session'
};

/**
 * The form: where the credential goes, its name, and its value (a password field, so it is not
 * shown on screen). The value goes to the server once and is never shown again.
 */
class CredentialsForm
  extends Widget
  implements Dialog.IBodyWidget<ICredentials | null>
{
  constructor(trans: TranslationBundle) {
    super();
    this.addClass('jp-dashdock-Credentials');
    const note = element('p', 'jp-dashdock-Credentials-note', this.node);
    note.textContent = trans.__(
      'dashdock keeps them on the server (readable only by you) and adds them to every request to this dashboard. They are never shown again or sent to your browser.'
    );
    this._kind = this._field(
      trans.__('Sent as'),
      element('select', 'jp-mod-styled')
    );
    const kinds: [ICredentials['kind'], string][] = [
      ['header', trans.__('A header')],
      ['query', trans.__('A query parameter')],
      ['cookie', trans.__('A cookie')]
    ];
    for (const [kind, label] of kinds) {
      const option = element('option', '', this._kind);
      option.value = kind;
      option.textContent = label;
    }
    this._name = this._field(
      trans.__('Name'),
      element('input', 'jp-mod-styled')
    );
    this._name.value = USUAL_NAMES.header;
    this._value = this._field(
      trans.__('Value'),
      element('input', 'jp-mod-styled')
    );
    this._value.type = 'password';
    this._value.autocomplete = 'off';
    this._value.placeholder = trans.__('e.g. Bearer 3f2a…');
    this._kind.addEventListener('change', () => {
      const kind = this._kind.value as ICredentials['kind'];
      this._name.value = USUAL_NAMES[kind];
      this._value.placeholder =
        kind === 'header' ? trans.__('e.g. Bearer 3f2a…') : '';
    });
  }

  getValue(): ICredentials | null {
    const name = this._name.value.trim();
    const value = this._value.value.trim();
    return name && value
      ? { kind: this._kind.value as ICredentials['kind'], name, value }
      : null;
  }

  protected onAfterAttach(): void {
    this._value.focus();
  }

  private _field<T extends HTMLElement>(label: string, control: T): T {
    const row = element('label', 'jp-dashdock-Credentials-field', this.node);
    element('span', '', row).textContent = label;
    row.appendChild(control);
    return control;
  }

  private _kind: HTMLSelectElement;
  private _name: HTMLInputElement;
  private _value: HTMLInputElement;
}

/**
 * Ask for the credentials of the dashboard at `url`; null when the user cancels or leaves a field
 * empty. `why` is the server's message (what it answered).
 */
export async function askCredentials(
  url: string,
  why: string,
  trans: TranslationBundle
): Promise<ICredentials | null> {
  // The dialog names the dashboard's host and port: the credentials go to that server only.
  const host = hostAndPort(url);
  const body = new CredentialsForm(trans);
  const reason = element('p', 'jp-dashdock-Credentials-why');
  reason.textContent = why;
  body.node.prepend(reason);
  const result = await showDialog({
    title: trans.__('Credentials for %1', host),
    body,
    buttons: [
      Dialog.cancelButton({ label: trans.__('Cancel') }),
      Dialog.okButton({ label: trans.__('Use them') })
    ],
    focusNodeSelector: 'input[type="password"]'
  });
  return result.button.accept ? result.value : null;
}
