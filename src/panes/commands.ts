/**
 * The commands that open panes: one plot (or a picker over all of them), the default layout, and
 * Dask's own "launch" command (see pane.ts for panes/).
 */

import { ILayoutRestorer } from '@jupyterlab/application';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';

import { parseDashboardLink } from '../api/urls';
import { CommandIDs, IPanePlacement, ISourcesModel } from '../tokens';
import { PaneManager } from './manager';
import { pickPlot } from './picker';
import { RATES } from './rates';

/**
 * Add the pane commands to `commands`.
 */
export function addPaneCommands(
  commands: CommandRegistry,
  panes: PaneManager,
  model: ISourcesModel,
  trans: TranslationBundle
): void {
  commands.addCommand(CommandIDs.openPlot, {
    label: args =>
      args.name
        ? trans.__('Open %1', args.name as string)
        : trans.__('Open Dask Plot…'),
    describedBy: {
      args: {
        type: 'object',
        description: trans.__(
          'Without source and path, a picker over the plots of every source opens.'
        ),
        properties: {
          source: { type: 'string', description: trans.__('Source id') },
          path: {
            type: 'string',
            description: trans.__('Plot path, e.g. /individual-task-stream')
          },
          follows: {
            type: 'string',
            description: trans.__(
              'For a host:port source: the source whose health the pane shows'
            )
          },
          name: { type: 'string' },
          sourceName: {
            type: 'string',
            description: trans.__(
              "The source's name as last known, shown if the source is gone"
            )
          },
          id: { type: 'string' },
          rate: { type: 'number', enum: [...RATES] },
          mode: { type: 'string' },
          ref: { type: 'string' }
        }
      }
    },
    execute: async args => {
      if (!model.sources.length) {
        // After a reload the restorer runs this before the sidebar has fetched anything.
        await model.refresh().catch(() => undefined);
      }
      if (!args.source || !args.path) {
        const choice = await pickPlot(model, trans);
        return choice ? panes.open(choice) : null;
      }
      return panes.open(
        {
          source: args.source as string,
          path: args.path as string,
          follows: args.follows as string | undefined,
          name: args.name as string | undefined,
          sourceName: args.sourceName as string | undefined,
          id: args.id as string | undefined,
          rate: args.rate as number | undefined
        },
        {
          mode: args.mode as IPanePlacement['mode'],
          ref: args.ref as string | undefined
        }
      );
    }
  });

  commands.addCommand(CommandIDs.openLayout, {
    label: trans.__('Open Default Dask Dashboard Layout'),
    describedBy: {
      args: {
        type: 'object',
        properties: {
          source: { type: 'string', description: trans.__('Source id') }
        }
      }
    },
    isEnabled: args => !!(args.source || model.selected),
    execute: async args => {
      const source = (args.source as string | undefined) ?? model.selected?.id;
      return source ? panes.openLayout(source) : [];
    }
  });

  commands.addCommand(CommandIDs.populateAndLaunch, {
    label: trans.__('Launch Dask Dashboard Layout'),
    describedBy: {
      args: {
        type: 'object',
        properties: {
          url: {
            type: 'string',
            description: trans.__('A dashboard link, direct or proxied')
          }
        }
      }
    },
    execute: async args => {
      const link = parseDashboardLink(String(args.url ?? ''));
      const source = link.source ?? (await model.add(link.url)).id;
      return commands.execute(CommandIDs.openLayout, { source });
    }
  });
}

/**
 * Have the layout restorer reopen plot panes where they were, with their ids and rates.
 */
export function restorePanes(
  restorer: ILayoutRestorer,
  panes: PaneManager
): void {
  void restorer.restore(panes.tracker, {
    command: CommandIDs.openPlot,
    args: pane => ({
      source: pane.source,
      path: pane.path,
      ...(pane.follows ? { follows: pane.follows } : {}),
      name: pane.plotName,
      sourceName: pane.sourceName,
      id: pane.id,
      rate: pane.rate
    }),
    name: pane => pane.id
  });
}
