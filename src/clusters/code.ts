/**
 * The code that connects a notebook to a managed cluster, and where it goes (see model.ts for
 * clusters/).
 */

import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { IConsoleTracker } from '@jupyterlab/console';
import { INotebookTracker, NotebookActions } from '@jupyterlab/notebook';
import { MimeData } from '@lumino/coreutils';

import { ICluster } from '../api/types';

/** The mime type under which a notebook accepts dropped cells. */
const JUPYTER_CELLS_MIME = 'application/vnd.jupyter.cells';

/**
 * The code that connects a notebook to a cluster.
 */
export function clientCode(cluster: ICluster): string {
  // JSON's string quoting is also a valid Python string literal, whatever the name holds.
  if (cluster.provider === 'gateway') {
    // The gateway's client connects through its proxy, with the user's credentials.
    return [
      'from dask_gateway import Gateway',
      '',
      `cluster = Gateway().connect(${JSON.stringify(cluster.name)})`,
      'client = cluster.get_client()',
      'client'
    ].join('\n');
  }
  return [
    'from dask.distributed import Client',
    '',
    `client = Client(${JSON.stringify(cluster.scheduler)})`,
    'client'
  ].join('\n');
}

/**
 * What a dragged cluster carries: a code cell a notebook accepts on drop, and the code as text.
 */
export function clientCodeMimeData(cluster: ICluster): MimeData {
  const code = clientCode(cluster);
  const mimeData = new MimeData();
  mimeData.setData(JUPYTER_CELLS_MIME, [
    {
      cell_type: 'code',
      source: code,
      outputs: [],
      execution_count: null,
      metadata: {}
    }
  ]);
  mimeData.setData('text/plain', code);
  return mimeData;
}

/**
 * Put `code` where the user works: the prompt of the current console, else a new cell below the
 * active one of the current notebook.
 */
export function insertCode(
  code: string,
  where: {
    shell: JupyterFrontEnd.IShell;
    notebooks: INotebookTracker | null;
    consoles: IConsoleTracker | null;
  }
): void {
  const current = where.shell.currentWidget;
  const notebook = where.notebooks?.currentWidget;
  const console = where.consoles?.currentWidget;
  if (console && (current === console || !notebook)) {
    console.console.promptCell?.model.sharedModel.setSource(code);
    return;
  }
  if (notebook) {
    NotebookActions.insertBelow(notebook.content);
    notebook.content.activeCell?.model.sharedModel.setSource(code);
    where.shell.activateById(notebook.id);
  }
}
