"""The vocabulary of findings: what each kind means, what to do about it, and where Dask explains it.

The words are the ones Dask's dashboard guide teaches people to read the plots with (white space in
the Task Stream, red transfers, orange disk, a white Processing bar); the advice is the remedy its
documentation gives.
"""

from __future__ import annotations

from dataclasses import dataclass

_DOCS = "https://docs.dask.org/en/stable"
_DISTRIBUTED = "https://distributed.dask.org/en/stable"


@dataclass(frozen=True)
class Kind:
    name: str
    advice: str
    docs: str


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind(
            "small-tasks",
            "Tasks this short spend much of their time in Dask's own overhead: make them larger "
            "(bigger chunks or partitions; each task should take well over 100 ms).",
            f"{_DOCS}/best-practices.html",
        ),
        Kind(
            "scheduler-bound",
            "The scheduler cannot hand out tasks as fast as the workers finish them: fewer, larger tasks.",
            f"{_DOCS}/best-practices.html",
        ),
        Kind(
            "spilling",
            "Workers wrote data to disk and read it back: give them more memory, or persist less and "
            "use smaller chunks so that what a computation holds fits.",
            f"{_DISTRIBUTED}/worker-memory.html",
        ),
        Kind(
            "memory-pause",
            "Workers stopped running tasks until their memory went down: more memory per worker, "
            "smaller chunks, or fewer results kept at once.",
            f"{_DISTRIBUTED}/worker-memory.html",
        ),
        Kind(
            "transfer",
            "Tasks waited for data from other workers: fewer, larger chunks along the axes that are "
            "combined, or an algorithm that moves less (a shuffle-free layout, rechunking once).",
            f"{_DOCS}/array-chunks.html",
        ),
        Kind(
            "straggler",
            "A few long tasks held the end while the other threads idled: split the long ones "
            "(uneven partitions, a skewed key) so the work ends together.",
            f"{_DOCS}/dataframe-best-practices.html",
        ),
        Kind(
            "low-parallelism",
            "There were fewer tasks ready than threads: a chain of dependent steps or too few "
            "partitions. Use more partitions, or run independent work at the same time.",
            f"{_DOCS}/dataframe-best-practices.html",
        ),
        Kind(
            "imbalance",
            "Some workers idled while others were busy: the work or its data sat on a few workers. "
            "Rebalance or scatter the data, or avoid pinning tasks to workers.",
            f"{_DISTRIBUTED}/work-stealing.html",
        ),
        Kind(
            "errors",
            "Time went to tasks that erred, and to their retries: fix the error (see Exceptions).",
            f"{_DISTRIBUTED}/killed.html",
        ),
        Kind(
            "worker-lost",
            "A worker died and its results were computed again: usually memory (see Workers Memory); "
            "give workers more memory or make chunks smaller.",
            f"{_DISTRIBUTED}/killed.html",
        ),
        Kind(
            "non-cpu",
            "Task threads were off the CPU: the GIL (pure-Python code), I/O, or more threads than "
            "cores. Use processes rather than threads for Python code, or fewer threads per worker.",
            f"{_DOCS}/best-practices.html",
        ),
    )
}

# Off the CPU where every worker runs one task at a time: no task thread contends for another's GIL.
ONE_THREAD_NON_CPU = (
    "Each worker ran one task at a time, so this is not tasks contending for the GIL: they waited "
    "on I/O (disk, network, a sleep) or for a core. Tasks that wait on I/O overlap with more threads "
    "per worker; workers that outnumber the cores need fewer of them."
)
