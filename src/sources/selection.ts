/**
 * The sidebar's selected source, kept across reloads of the Lab (see model.ts for sources/).
 */

import { IStateDB } from '@jupyterlab/statedb';

import { SourcesModel } from './model';

/** Where the Lab keeps which source the sidebar shows, so that a reload shows it again. */
const SELECTION_KEY = 'dashdock:sources:selected';

/**
 * The selected source is restored from the Lab's state database, then saved whenever it changes.
 * Saving starts only once the saved one is read: the first listing selects the first source, which
 * must not overwrite the choice being restored.
 */
export function rememberSelection(model: SourcesModel, state: IStateDB): void {
  let saved: string | null = null;
  void state
    .fetch(SELECTION_KEY)
    .then(value => {
      if (typeof value === 'string') {
        model.prefer(value);
      }
    })
    .catch(error =>
      console.warn('dashdock: could not read the selection', error)
    )
    .then(() => {
      model.changed.connect(() => {
        const id = model.selected?.id ?? null;
        if (id !== null && id !== saved) {
          saved = id;
          void state.save(SELECTION_KEY, id);
        }
      });
    });
}
