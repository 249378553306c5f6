import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, IThemeManager, WidgetTracker } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { UUID } from '@lumino/coreutils';

import { PlotPane, RATES } from '../widgets/pane';
import { CommandIDs, IPanePlacement, IPlotPanes, ISourcesModel, TRANSLATION_DOMAIN } from '../tokens';

const PLUGIN_ID = 'dashdock:panes';
const DEFAULT_LAYOUT = [
  '/individual-task-stream',
  '/individual-progress',
  '/individual-workers-memory',
  '/individual-graph'
];

/**
 * Plot panes: creating, tracking and restoring them, and the open-plot / open-layout commands.
 */
export const panesPlugin: JupyterFrontEndPlugin<IPlotPanes> = {
  id: PLUGIN_ID,
  description: 'Opens the plots of Dask dashboards as panes and restores them after a reload.',
  autoStart: true,
  requires: [ISourcesModel],
  provides: IPlotPanes,
  optional: [ILayoutRestorer, ISettingRegistry, ICommandPalette, IThemeManager, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    model: ISourcesModel,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null,
    palette: ICommandPalette | null,
    themeManager: IThemeManager | null,
    translator: ITranslator | null
  ): IPlotPanes => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const tracker = new WidgetTracker<PlotPane>({ namespace: 'dashdock-plots' });
    const config = { layout: DEFAULT_LAYOUT, hiddenGrace: 5, defaultRate: 0, followTheme: true };
    const isDark = () =>
      config.followTheme && !!themeManager?.theme && !themeManager.isLight(themeManager.theme);

    const create = (options: IPlotPanes.IOptions): PlotPane => {
      const pane = new PlotPane({
        source: options.source,
        path: options.path,
        follows: options.follows,
        name: options.name || Private.nameFromPath(options.path),
        id: options.id || `dashdock-plot-${UUID.uuid4()}`,
        rate: options.rate ?? config.defaultRate,
        hiddenGrace: config.hiddenGrace,
        model,
        trans
      });
      pane.setDark(isDark());
      // Tracked here so that panes placed by a drop are restored like any other.
      void tracker.add(pane);
      return pane;
    };

    const panes: IPlotPanes = {
      create,
      open: (options, placement: IPanePlacement = {}) => {
        const { mode, ref } = placement.mode ? placement : Private.tile(tracker.currentWidget);
        const pane = create(options);
        app.shell.add(pane, 'main', { mode, ref: ref ?? null });
        app.shell.activateById(pane.id);
        return pane;
      }
    };

    app.commands.addCommand(CommandIDs.openPlot, {
      label: args => (args.name ? trans.__('Open %1', args.name as string) : trans.__('Open Dask Plot')),
      describedBy: {
        args: {
          type: 'object',
          required: ['source', 'path'],
          properties: {
            source: { type: 'string', description: trans.__('Source id') },
            path: { type: 'string', description: trans.__('Plot path, e.g. /individual-task-stream') },
            follows: { type: 'string', description: trans.__('For a host:port source: the source whose health the pane shows') },
            name: { type: 'string' },
            id: { type: 'string' },
            rate: { type: 'number', enum: RATES },
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
        return panes.open(
          {
            source: args.source as string,
            path: args.path as string,
            follows: args.follows as string | undefined,
            name: args.name as string | undefined,
            id: args.id as string | undefined,
            rate: args.rate as number | undefined
          },
          { mode: args.mode as IPanePlacement['mode'], ref: args.ref as string | undefined }
        );
      }
    });

    app.commands.addCommand(CommandIDs.openLayout, {
      label: trans.__('Open Default Dask Dashboard Layout'),
      describedBy: {
        args: { type: 'object', properties: { source: { type: 'string', description: trans.__('Source id') } } }
      },
      isEnabled: args => !!(args.source || model.selected),
      execute: async args => {
        const source = (args.source as string | undefined) ?? model.selected?.id;
        if (!source) {
          return [];
        }
        const offered = await model.plots(source);
        const plots = config.layout
          .map(path => offered.find(plot => plot.path === path))
          .filter((plot): plot is NonNullable<typeof plot> => !!plot);
        // A grid: the first plot top left, the third to its right, the second below the first,
        // the fourth below the third; any further plots tile as clicks do.
        const steps: [number, IPanePlacement['mode'], number | null][] = [
          [0, 'split-right', null],
          [2, 'split-right', 0],
          [1, 'split-bottom', 0],
          [3, 'split-bottom', 2]
        ];
        const opened = new Map<number, PlotPane>();
        for (const [index, mode, refIndex] of steps) {
          const plot = plots[index];
          if (plot) {
            const ref = refIndex === null ? undefined : opened.get(refIndex)?.id;
            opened.set(index, panes.open({ source, path: plot.path, name: plot.name }, { mode, ref }) as PlotPane);
          }
        }
        plots.slice(steps.length).forEach(plot => panes.open({ source, path: plot.path, name: plot.name }));
        return [...opened.values()];
      }
    });

    app.commands.addCommand(CommandIDs.populateAndLaunch, {
      label: trans.__('Launch Dask Dashboard Layout'),
      describedBy: {
        args: {
          type: 'object',
          properties: { url: { type: 'string', description: trans.__('A dashboard link, direct or proxied') } }
        }
      },
      execute: async args => {
        const link = Private.sourceOfLink(String(args.url ?? ''));
        const source = link.source ?? (await model.add(link.url)).id;
        return app.commands.execute(CommandIDs.openLayout, { source });
      }
    });

    palette?.addItem({ command: CommandIDs.openLayout, category: trans.__('Dask') });
    palette?.addItem({ command: CommandIDs.openPlot, category: trans.__('Dask'), args: {} });

    if (restorer) {
      void restorer.restore(tracker, {
        command: CommandIDs.openPlot,
        args: pane => ({
          source: pane.source,
          path: pane.path,
          ...(pane.follows ? { follows: pane.follows } : {}),
          name: pane.title.label,
          id: pane.id,
          rate: pane.rate
        }),
        name: pane => pane.id
      });
    }

    if (settingRegistry) {
      void Promise.all([settingRegistry.load(PLUGIN_ID), app.restored])
        .then(([settings]) => {
          const apply = () => {
            config.layout = (settings.get('layout').composite as string[]) ?? DEFAULT_LAYOUT;
            config.hiddenGrace = settings.get('hiddenGrace').composite as number;
            config.defaultRate = Private.rateFromSetting(settings.get('defaultRate').composite as string);
            config.followTheme = settings.get('followTheme').composite as boolean;
            tracker.forEach(pane => {
              pane.setHiddenGrace(config.hiddenGrace);
              pane.setDark(isDark());
            });
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(error => console.warn('dashdock: could not load settings', error));
    }

    themeManager?.themeChanged.connect(() => tracker.forEach(pane => pane.setDark(isDark())));

    return panes;
  }
};

namespace Private {
  /**
   * Where a clicked plot goes: beside the main area's content for the first pane, then by
   * halving the last active pane along its longer side, so panes tile instead of thinning out.
   */
  export function tile(last: PlotPane | null): IPanePlacement {
    if (!last || !last.isAttached) {
      return { mode: 'split-right' };
    }
    const { width, height } = last.node.getBoundingClientRect();
    return { mode: width >= height ? 'split-right' : 'split-bottom', ref: last.id };
  }

  /**
   * What a dashboard link names: a source id (`.../dashdock/proxy/<id>/...`), or a URL to add
   * (`.../dashdock/proxy/<host>:<port>/...` as kernels link it, or the scheduler's own URL).
   */
  export function sourceOfLink(link: string): { source?: string; url: string } {
    const proxied = /\/dashdock\/proxy\/([^/?#]+)/.exec(link);
    if (!proxied) {
      return { url: link };
    }
    const target = decodeURIComponent(proxied[1]);
    return target.includes(':') ? { url: `http://${target}` } : { source: target, url: link };
  }

  /** 'live' | '1s' | '5s' -> seconds between redraws. */
  export function rateFromSetting(value: string): number {
    return value === '1s' ? 1 : value === '5s' ? 5 : 0;
  }

  /** '/individual-task-stream' -> 'Task Stream', for panes opened by path alone. */
  export function nameFromPath(path: string): string {
    const last = path.split('/').filter(Boolean).pop() ?? path;
    return last
      .replace(/\.html$/, '')
      .replace(/^individual-/, '')
      .split('-')
      .map(word => word.charAt(0).toUpperCase() + word.slice(1))
      .join(' ');
  }
}
