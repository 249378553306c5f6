/**
 * `dashdock:open-history`, `dashdock:export-trace`, and the command the layout restorer reopens
 * window panes with (see model.ts for history/).
 */

import { ILayoutRestorer } from '@jupyterlab/application';
import { showErrorMessage } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { CommandIDs } from '../tokens';
import { HistoryManager } from './manager';
import { WINDOW_PAGES, WindowPage } from './pane';

/**
 * Opens a window pane: the layout restorer reopens them with it, a cell strip opens its cell's
 * task stream (by source: the run being recorded). Not in the palette.
 */
export const OPEN_HISTORY_PANE = CommandIDs.openHistoryPane;

/**
 * Add the History commands to `commands`.
 */
export function addHistoryCommands(
  commands: CommandRegistry,
  manager: HistoryManager,
  trans: TranslationBundle
): void {
  const windowArgs = {
    start: {
      type: 'number',
      description: trans.__('Start of the window, Unix seconds')
    },
    end: {
      type: 'number',
      description: trans.__('End of the window, Unix seconds')
    }
  };

  commands.addCommand(CommandIDs.openHistory, {
    label: trans.__('Open Dask History'),
    caption: trans.__(
      'Show what was recorded of a run: its overview, and the task stream, progress and memory of a window'
    ),
    describedBy: {
      args: {
        type: 'object',
        description: trans.__(
          'Without id or source, the run being recorded (else the newest) of any source.'
        ),
        properties: {
          id: { type: 'string', description: trans.__('Run id') },
          source: {
            type: 'string',
            description: trans.__(
              'Source id: its run being recorded, else its newest'
            )
          },
          ...windowArgs,
          runName: { type: 'string' },
          viewId: { type: 'string' }
        }
      }
    },
    execute: async args => {
      try {
        return await manager.openHistory({
          id: Private.text(args, 'id'),
          source: Private.text(args, 'source'),
          start: Private.number(args, 'start'),
          end: Private.number(args, 'end'),
          runName: Private.text(args, 'runName'),
          viewId: Private.text(args, 'viewId')
        });
      } catch (error: any) {
        void showErrorMessage(
          trans.__('Cannot open History'),
          String(error?.message ?? error)
        );
        throw error;
      }
    }
  });

  commands.addCommand(CommandIDs.exportTrace, {
    label: trans.__('Export Chrome Trace'),
    caption: trans.__(
      'Download a recorded run (or a window of it) as a Chrome trace, for Perfetto or chrome://tracing'
    ),
    describedBy: {
      args: {
        type: 'object',
        required: ['id'],
        properties: {
          id: { type: 'string', description: trans.__('Run id') },
          ...windowArgs
        }
      }
    },
    isEnabled: args => !!Private.text(args, 'id'),
    execute: args => {
      manager.exportTrace(Private.text(args, 'id') ?? '', {
        start: Private.number(args, 'start'),
        end: Private.number(args, 'end')
      });
    }
  });

  commands.addCommand(OPEN_HISTORY_PANE, {
    label: trans.__('Open History Pane'),
    describedBy: {
      args: {
        type: 'object',
        required: ['page', 'start', 'end'],
        properties: {
          run: { type: 'string' },
          source: { type: 'string' },
          runName: { type: 'string' },
          page: { type: 'string', enum: [...WINDOW_PAGES] },
          ...windowArgs,
          id: { type: 'string' }
        }
      }
    },
    execute: async args => {
      const source = Private.text(args, 'source');
      const page = Private.text(args, 'page') as WindowPage | undefined;
      const start = Private.number(args, 'start');
      const end = Private.number(args, 'end');
      const run =
        Private.text(args, 'run') ??
        (source ? (await manager.runOf(source, start)).id : undefined);
      if (
        !run ||
        !page ||
        !WINDOW_PAGES.includes(page) ||
        start === undefined ||
        end === undefined ||
        start > end
      ) {
        throw new Error(
          `${OPEN_HISTORY_PANE}: run or source, page, start and end`
        );
      }
      return manager.openPane({
        run,
        runName: Private.text(args, 'runName') ?? run,
        page,
        window: { start, end },
        id: Private.text(args, 'id')
      });
    }
  });
}

namespace Private {
  export function text(
    args: ReadonlyPartialJSONObject,
    key: string
  ): string | undefined {
    const value = args[key];
    return typeof value === 'string' && value ? value : undefined;
  }

  export function number(
    args: ReadonlyPartialJSONObject,
    key: string
  ): number | undefined {
    const value = args[key];
    return typeof value === 'number' && Number.isFinite(value)
      ? value
      : undefined;
  }
}

/**
 * Have the layout restorer reopen History views and window panes as they were.
 */
export function restoreHistory(
  restorer: ILayoutRestorer,
  manager: HistoryManager
): void {
  void restorer.restore(manager.views, {
    command: CommandIDs.openHistory,
    args: view => ({
      id: view.run,
      runName: view.runName,
      viewId: view.id,
      ...(view.window ?? {})
    }),
    name: view => view.id
  });
  void restorer.restore(manager.panes, {
    command: OPEN_HISTORY_PANE,
    args: pane => ({
      run: pane.run,
      runName: pane.runName,
      page: pane.page,
      start: pane.window.start,
      end: pane.window.end,
      id: pane.id
    }),
    name: pane => pane.id
  });
}
