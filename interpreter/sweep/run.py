"""Running a sweep's tasks: in this process, in local worker processes, or on a Dask cluster.

Whatever runs them, each task is answered by ``cells.run_cell`` from its own content alone, and the
results are put in cell order afterwards: the rows are the same for any ``-j``, any Dask cluster and any
rerun. Each result is stored (cells.store) as soon as it arrives in this process, so Ctrl-C, a lost
worker or a closed laptop leaves every finished cell for the next run, which starts from them.

Local workers are forked from this process (where it can fork), so they start with the rulesets the spec
check loaded; they ignore Ctrl-C, which this process handles by stopping them.

Dask (``--dask tcp://HOST:8786`` or a scheduler file): tasks go to the cluster with ``Client.map``, in
chunks, and come back with ``as_completed``. Dask serialises each task with pickle: what is sent is only
the plain data built here (cells.make_task: paths, text, numbers, lists and dicts of the checked spec)
and a reference to ``run_cell``; what comes back is the plain data ``run_cell`` returns. Nothing a user
wrote is ever unpickled here. A Dask scheduler runs whatever its clients send, so connect only to a
cluster you control, and give its workers the same Umpire and the same files at the same paths (a shared
folder, or the same checkout on every machine): the task names the ruleset and overlay files by path.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable, Iterator

from . import cells


def _ignore_interrupt() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_chunk(chunk: list) -> list:
    """(index, result) for each (index, task) of a chunk: the unit of work a local or Dask worker runs."""
    return [(i, cells.run_cell(task)) for i, task in chunk]


def _chunks(pending: list, workers: int) -> list[list]:
    """Chunks small enough to share the work out evenly (and to show progress), large enough that a cheap
    cell's cost is not swamped by sending it."""
    size = max(1, min(64, len(pending) // max(1, workers * 16)))
    return [pending[k:k + size] for k in range(0, len(pending), size)]


def local_results(pending: list, jobs: int) -> Iterator[tuple[int, dict]]:
    import multiprocessing
    if jobs <= 1 or len(pending) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for i, task in pending:
            yield i, cells.run_cell(task)
        return
    pool = multiprocessing.get_context("fork").Pool(min(jobs, len(pending)), initializer=_ignore_interrupt)
    try:
        for done in pool.imap_unordered(_run_chunk, _chunks(pending, jobs)):
            yield from done
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def dask_results(pending: list, where: str) -> Iterator[tuple[int, dict]]:
    """Results from a Dask cluster: ``where`` is a scheduler address (tcp://HOST:PORT) or a scheduler file."""
    from pathlib import Path

    from ..errors import InputError
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise InputError("--dask needs Dask's distributed scheduler, which is not installed (from a checkout: "
                         "pip install -e '.[sweep]'; or pip install distributed)") from None
    try:
        client = Client(scheduler_file=where, timeout="20s") if Path(where).is_file() else Client(where, timeout="20s")
    except (OSError, TimeoutError, ValueError) as e:
        raise InputError(f"cannot reach the Dask scheduler at {where}: {e}",
                         hint="give its address (tcp://HOST:8786) or its scheduler file") from None
    futures = []
    try:
        workers = max(1, sum(client.nthreads().values()))
        chunks = _chunks(pending, workers)
        futures = client.map(_run_chunk, chunks, pure=False)
        for _, done in as_completed(futures, with_results=True):
            yield from done
    finally:
        if futures:
            client.cancel(futures)
        client.close()


def run_tasks(tasks: list[dict], jobs: int = 1, dask: str | None = None, use_store: bool = True,
              progress: Callable[[int, int, int], None] | None = None) -> tuple[list, int]:
    """Every task's result, in task order, and how many came from the store.

    ``progress(done, total, from_store)`` is called as results arrive. On KeyboardInterrupt the finished
    results are already stored; the interrupt goes on to the caller."""
    results: list = [None] * len(tasks)
    pending = []
    for i, task in enumerate(tasks):
        found = cells.stored(task["key"]) if use_store else None
        if found is not None:
            results[i] = found
        else:
            pending.append((i, task))
    reused = len(tasks) - len(pending)
    done = reused
    if progress:
        progress(done, len(tasks), reused)
    source = dask_results(pending, dask) if dask else local_results(pending, jobs)
    for i, result in source:
        results[i] = result
        if use_store:
            cells.store(tasks[i]["key"], result)
        done += 1
        if progress:
            progress(done, len(tasks), reused)
    return results, reused


class Bar:
    """A progress bar on standard error with an estimate of the time left (from the cells run, not those
    read back from the store); only on a terminal, else one line at the end."""

    def __init__(self, stream=None, every: float = 0.2):
        self.stream = stream or sys.stderr
        self.tty = getattr(self.stream, "isatty", lambda: False)()
        self.start = time.perf_counter()
        self.last = 0.0
        self.every = every

    def __call__(self, done: int, total: int, reused: int) -> None:
        now = time.perf_counter()
        if not self.tty or (done < total and now - self.last < self.every):
            return
        self.last = now
        elapsed = now - self.start
        ran = done - reused
        rate = ran / elapsed if elapsed > 0 and ran else 0
        left = f"{(total - done) / rate:,.0f}s left" if rate else "estimating"
        width = 30
        filled = int(width * done / total) if total else width
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} cells"
                          + (f" ({reused:,} done before)" if reused else "") + f", {left}   ")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def tasks_of(spec) -> list[dict]:
    """Every task of the spec, cell by cell, each overlay set in the spec's order within a cell."""
    from .spec import cell_data
    keys = [cells.ruleset_key(spec.root, v.overlays) for v in spec.variants]
    out = []
    for cell in spec.cells:
        data = cell_data(spec, cell)
        for v, rkey in zip(spec.variants, keys):
            out.append(cells.make_task(rkey, spec.root, v.overlays, spec.situation_file, data, spec.question))
    return out


def run_sweep(spec, jobs: int = 1, dask: str | None = None, use_store: bool = True, progress=None):
    """The spec's rows (output.build_rows), how many cells were read back from the store, and the tasks."""
    from .output import build_rows
    tasks = tasks_of(spec)
    if tasks:
        check_question(spec, tasks[0], use_store)
    results, reused = run_tasks(tasks, jobs, dask, use_store, progress)
    for result in results:          # a cell the first one did not show it for (one refused before the question)
        if result.get("question"):
            _question_error(spec, result)
    return build_rows(spec, tasks, results), reused, tasks


def check_question(spec, task: dict, use_store: bool) -> None:
    """Run the first cell here before the rest: a question the results cannot answer (a --by field they do
    not have) is the spec's error, at its line, not a row of the same reason for every cell."""
    found = cells.stored(task["key"]) if use_store else None
    if found is not None:
        return
    result = cells.run_cell(task)
    if result.get("question"):
        _question_error(spec, result)
    if use_store:
        cells.store(task["key"], result)


def _question_error(spec, result: dict):
    from ..errors import InputError
    kind = next(iter(spec.question))
    raise InputError(result["reason"], spec.doc.at(("question", kind, "by")), result.get("hint"))
