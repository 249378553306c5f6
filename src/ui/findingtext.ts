/**
 * A diagnosis finding in the reader's language (pure; see format.ts for ui/). The server says each
 * finding in English too (its report and its API carry those words); the Lab says it again from
 * the finding's kind and evidence, so that a language pack translates every sentence. A kind this
 * Lab does not know, or evidence without what a sentence needs, keeps the server's words.
 */

import type { TranslationBundle } from '@jupyterlab/translation';

import { formatBytes, formatCount } from './format';

/** What a sentence is made of: the wire finding's fields that matter here (api/types.ts). */
export interface IFindingWords {
  kind: string;
  share: number;
  title: string;
  detail: string;
  advice: string;
  evidence: Record<string, unknown>;
}

type Trans = Pick<TranslationBundle, '__' | '_n'>;

/** 0.0073 -> '7.3 ms', 2.5 -> '2.50 s', 340 -> '340 s': as the server writes seconds. */
export function formatSeconds(value: number): string {
  if (value >= 100) {
    return `${formatCount(Math.round(value))} s`;
  }
  if (value >= 1) {
    return `${value.toFixed(2)} s`;
  }
  if (value < 0.00005) {
    return '< 0.1 ms';
  }
  return `${(value * 1000).toFixed(1)} ms`;
}

function numberOf(evidence: Record<string, unknown>, name: string): number {
  const value = evidence[name];
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new RangeError(name); // the server's words instead
  }
  return value;
}

function countOf(evidence: Record<string, unknown>, name: string): number {
  const value = evidence[name];
  if (Array.isArray(value)) {
    return value.length;
  }
  if (value && typeof value === 'object') {
    return Object.keys(value).length;
  }
  return numberOf(evidence, name);
}

/** The first of a straggler's listed tasks (the longest), when the evidence has one whole. */
function longestTask(
  evidence: Record<string, unknown>
): { key: string; seconds: number; median: number } | null {
  const tasks = evidence.tasks;
  const first: unknown = Array.isArray(tasks) ? tasks[0] : null;
  if (!first || typeof first !== 'object') {
    return null;
  }
  const { key, seconds, group_median } = first as Record<string, unknown>;
  return typeof key === 'string' &&
    typeof seconds === 'number' &&
    typeof group_median === 'number'
    ? { key, seconds, median: group_median }
    : null;
}

/** Each kind's title (after "N % of thread time") and detail, from its evidence. */
function sentences(
  trans: Trans,
  kind: string,
  percent: string,
  evidence: Record<string, unknown>
): { title: string; detail: string } | null {
  const n = (name: string) => numberOf(evidence, name);
  switch (kind) {
    case 'errors': {
      const erred = n('erred');
      return {
        title: trans._n(
          '%2 % of thread time went to %3 task that erred',
          '%2 % of thread time went to %3 tasks that erred',
          erred,
          percent,
          formatCount(erred)
        ),
        detail: trans.__(
          'The time erred tasks ran (%1 of them succeeded on a retry): it bought nothing.',
          formatCount(n('retried'))
        )
      };
    }
    case 'worker-lost': {
      const recomputed = n('recomputed');
      return {
        title: trans._n(
          '%2 % of thread time went to computing again what %1 lost worker held',
          '%2 % of thread time went to computing again what %1 lost workers held',
          countOf(evidence, 'workers'),
          percent
        ),
        detail: trans._n(
          '%2 task finished on a worker that then left, and ran again elsewhere.',
          '%2 tasks finished on a worker that then left, and ran again elsewhere.',
          recomputed,
          formatCount(recomputed)
        )
      };
    }
    case 'transfer': {
      const spans = n('spans');
      return {
        title: trans.__(
          '%1 % of thread time went to moving data between workers',
          percent
        ),
        detail: trans._n(
          '%2 transfer to tasks on %3 (red in the Task Stream) lasting %4 in all.',
          '%2 transfers to tasks on %3 (red in the Task Stream) lasting %4 in all.',
          spans,
          formatCount(spans),
          trans._n('%1 worker', '%1 workers', n('worker_count')),
          formatSeconds(n('seconds'))
        )
      };
    }
    case 'spilling': {
      const workers = n('worker_count');
      const bytes = n('spilled_bytes');
      return {
        title: bytes
          ? trans._n(
              '%2 % of thread time went to reading and writing spilled data: %3 on %1 worker',
              '%2 % of thread time went to reading and writing spilled data: %3 on %1 workers',
              workers,
              percent,
              formatBytes(bytes)
            )
          : trans._n(
              '%2 % of thread time went to reading and writing spilled data on %1 worker',
              '%2 % of thread time went to reading and writing spilled data on %1 workers',
              workers,
              percent
            ),
        detail: trans.__(
          '%1 reads and writes of spilled data (orange in the Task Stream), %2 in all.',
          formatCount(n('spans')),
          formatSeconds(n('seconds'))
        )
      };
    }
    case 'non-cpu':
      return {
        title: trans.__(
          '%1 % of thread time was spent by task threads off the CPU (the GIL, I/O, or waiting for a core)',
          percent
        ),
        detail: trans.__(
          "Dask's Fine Performance Metrics: %1 off the CPU against %2 on it.",
          formatSeconds(n('thread_noncpu_seconds')),
          formatSeconds(n('thread_cpu_seconds'))
        )
      };
    case 'imbalance':
      return {
        title: trans.__(
          '%1 % of thread time was idle on some workers while others were saturated',
          percent
        ),
        detail: trans.__(
          'Idle threads of workers while another had all of its threads busy and was given more tasks.'
        )
      };
    case 'low-parallelism':
      return {
        title: trans.__(
          '%1 % of thread time was idle: fewer tasks ran than the %2 threads could',
          percent,
          formatCount(n('threads'))
        ),
        detail: trans.__(
          'Idle threads while no worker was saturated and work was still running: too few tasks ready.'
        )
      };
    case 'straggler': {
      // `long_tasks` and `ends` are newer than `tasks` (the five longest) and `tail_seconds`.
      const running =
        typeof evidence.long_tasks === 'number'
          ? n('long_tasks')
          : countOf(evidence, 'tasks');
      const ends = typeof evidence.ends === 'number' ? n('ends') : 1;
      const tail = formatSeconds(n('tail_seconds'));
      const title =
        ends > 1
          ? trans._n(
              '%2 % of thread time was idle at the end of %3 computations (%4 in all) while %1 long task ran',
              '%2 % of thread time was idle at the end of %3 computations (%4 in all) while %1 long tasks ran',
              running,
              percent,
              formatCount(ends),
              tail
            )
          : trans._n(
              '%2 % of thread time was idle in the last %3 while %1 long task ran',
              '%2 % of thread time was idle in the last %3 while %1 long tasks ran',
              running,
              percent,
              tail
            );
      const idle = trans.__(
        'Idle threads at the end, while at most a quarter of them were busy.'
      );
      const longest = longestTask(evidence);
      return {
        title,
        detail: longest
          ? `${idle} ${trans.__(
              "The longest: %1, %2 against its group's median of %3.",
              longest.key,
              formatSeconds(longest.seconds),
              formatSeconds(longest.median)
            )}`
          : idle
      };
    }
    case 'memory-pause':
      return {
        title: trans._n(
          '%2 % of thread time was idle on %1 worker paused for memory',
          '%2 % of thread time was idle on %1 workers paused for memory',
          countOf(evidence, 'workers'),
          percent
        ),
        detail: trans.__(
          'Idle threads of workers while Dask had paused them (memory above its pause threshold).'
        )
      };
    case 'scheduler-bound':
      return {
        title: trans.__(
          '%1 % of thread time was idle while the scheduler was saturated for %2',
          percent,
          formatSeconds(n('saturated_seconds'))
        ),
        detail: trans.__(
          "Idle threads while the scheduler's process ran at %1 % of a core or more (at most %2 %) or its event loop ticked every %3 ms or slower (at worst %4 ms; Dask's is 20): it could not hand out tasks faster.",
          n('cpu_threshold').toFixed(0),
          n('scheduler_cpu_max').toFixed(0),
          (n('loop_threshold') * 1000).toFixed(0),
          (n('loop_interval_max') * 1000).toFixed(0)
        )
      };
    case 'small-tasks':
      return {
        title: trans.__(
          "%1 % of thread time went to Dask's overhead between tasks (%2 tasks, median %3)",
          percent,
          formatCount(n('tasks')),
          formatSeconds(n('median_seconds'))
        ),
        detail: trans.__(
          'The gaps under 100 ms between one task and the next on one thread, while tasks were this short.'
        )
      };
    default:
      return null;
  }
}

/** What to do about each kind: the remedy Dask's documentation gives. */
function adviceOf(
  trans: Trans,
  kind: string,
  evidence: Record<string, unknown>
): string | null {
  switch (kind) {
    case 'small-tasks':
      return trans.__(
        "Tasks this short spend much of their time in Dask's own overhead: make them larger (bigger chunks or partitions; each task should take well over 100 ms)."
      );
    case 'scheduler-bound':
      return trans.__(
        'The scheduler cannot hand out tasks as fast as the workers finish them: fewer, larger tasks.'
      );
    case 'spilling':
      return trans.__(
        'Workers wrote data to disk and read it back: give them more memory, or persist less and use smaller chunks so that what a computation holds fits.'
      );
    case 'memory-pause':
      return trans.__(
        'Workers stopped running tasks until their memory went down: more memory per worker, smaller chunks, or fewer results kept at once.'
      );
    case 'transfer':
      return trans.__(
        'Tasks waited for data from other workers: fewer, larger chunks along the axes that are combined, or an algorithm that moves less (a shuffle-free layout, rechunking once).'
      );
    case 'straggler':
      return trans.__(
        'A few long tasks held the end while the other threads idled: split the long ones (uneven partitions, a skewed key) so the work ends together.'
      );
    case 'low-parallelism':
      return trans.__(
        'There were fewer tasks ready than threads: a chain of dependent steps or too few partitions. Use more partitions, or run independent work at the same time.'
      );
    case 'imbalance':
      return trans.__(
        'Some workers idled while others were busy: the work or its data sat on a few workers. Rebalance or scatter the data, or avoid pinning tasks to workers.'
      );
    case 'errors':
      return trans.__(
        'Time went to tasks that erred, and to their retries: fix the error (see Exceptions).'
      );
    case 'worker-lost':
      return trans.__(
        'A worker died and its results were computed again: usually memory (see Workers Memory); give workers more memory or make chunks smaller.'
      );
    case 'non-cpu':
      // One task per worker: no task thread holds another's GIL (diagnosis/kinds.py).
      if (evidence.threads_per_worker === 1) {
        return trans.__(
          'Each worker ran one task at a time, so this is not tasks contending for the GIL: they waited on I/O (disk, network, a sleep) or for a core. Tasks that wait on I/O overlap with more threads per worker; workers that outnumber the cores need fewer of them.'
        );
      }
      return trans.__(
        'Task threads were off the CPU: the GIL (pure-Python code), I/O, or more threads than cores. Use processes rather than threads for Python code, or fewer threads per worker.'
      );
    default:
      return null;
  }
}

/** The finding's title, detail and advice in the reader's language (the server's words when this
 * Lab cannot say them). */
export function findingWords(
  trans: Trans,
  finding: IFindingWords
): { title: string; detail: string; advice: string } {
  const percent = Math.round(100 * finding.share).toString();
  let said: { title: string; detail: string } | null = null;
  try {
    said = sentences(trans, finding.kind, percent, finding.evidence ?? {});
  } catch {
    said = null; // evidence without a number a sentence needs: an older or newer server
  }
  return {
    title: said?.title ?? finding.title,
    detail: said?.detail ?? finding.detail,
    advice:
      adviceOf(trans, finding.kind, finding.evidence ?? {}) ?? finding.advice
  };
}
