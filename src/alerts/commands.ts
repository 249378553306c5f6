/**
 * The `open-alerts` command: the alerts panel, one per source filter, brought to the front if open.
 */

import { MainAreaWidget } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';

import { CommandIDs } from '../tokens';
import { AlertsModel } from './model';
import { AlertsPanel } from './panel';
import type { IMainArea } from '../ui/mainarea';

export function addAlertCommands(options: {
  commands: CommandRegistry;
  shell: IMainArea;
  model: AlertsModel;
  trans: TranslationBundle;
  sourceName: (id: string) => string;
}): void {
  const { commands, shell, model, trans, sourceName } = options;
  const open = new Map<string, MainAreaWidget<AlertsPanel>>();
  commands.addCommand(CommandIDs.openAlerts, {
    label: trans.__('Show Dask Alerts'),
    caption: trans.__(
      'The recent alerts of the Dask schedulers dashdock follows, newest first'
    ),
    describedBy: {
      args: {
        type: 'object',
        properties: {
          source: {
            type: 'string',
            description: trans.__('Only the alerts of this source id')
          }
        }
      }
    },
    execute: args => {
      const source = typeof args.source === 'string' ? args.source : null;
      const key = source ?? '';
      let widget = open.get(key);
      if (widget === undefined || widget.isDisposed) {
        const content = new AlertsPanel({
          model,
          commands,
          trans,
          sourceName,
          source
        });
        widget = new MainAreaWidget({ content });
        widget.id = `dashdock-alerts-${key || 'all'}`;
        widget.title.label = source
          ? trans.__('Dask Alerts: %1', sourceName(source))
          : trans.__('Dask Alerts');
        widget.title.closable = true;
        open.set(key, widget);
        shell.add(widget, 'main');
        void model.refresh();
      }
      shell.activateById(widget.id);
      return widget;
    }
  });
}
