"""A ``dask.distributed.Client`` as the executor of chunked work (see the package notes).

How a call runs: the task (function, point and constants) goes to every worker once with
``client.scatter(..., broadcast=True)``; each chunk is a ``client.submit`` of ``run_task``
with that future, the chunk's bounds and its slice of the batch (sent with the task, so
that the scheduler still has it if a worker dies). The results are taken as they finish
and handed back with their chunk number; ``diffkit.chunking`` checks that each chunk came
back once before anything is assembled. An exception raised by the user's function is
re-raised in the caller, the original type with the worker's traceback. Dask's nannies
start workers with one BLAS thread; ``run_task`` makes sure. ``progress=True`` draws
diffkit's bar (tqdm's, or a line on stderr), moved as each result is taken: Dask's own
console bar waits for every future first, and never returns when one is cancelled.

Keys: every future of a call is named ``<name>-<uuid4>-chunk-<i>`` (and the scattered task
gets a random key), so no two calls, on this client or on another client of the same
scheduler, ever share a key: one call's results cannot be handed to another, and one
call's ``cancel`` at its end cannot cancel another's tasks. (The results are not kept
between calls, so a deterministic key would buy nothing.)

When a worker dies:

- a chunk it was running is run again on another worker by Dask (up to
  ``distributed.scheduler.allowed-failures`` times); a chunk whose workers all died that
  often raises ``ChunkError`` saying so, with what to do;
- a finished chunk whose result was only on that worker is computed again by Dask (the
  scheduler holds each chunk's task);
- the scattered task cannot be computed again: if every worker holding it died, Dask
  cancels the chunks waiting for it. Those chunks are sent again with the task scattered
  anew, up to ``ROUNDS`` scatters in all; after that, ``ChunkError`` says the workers kept
  dying. The result is complete or there is an error: never a partial array.
"""

import uuid

from ..chunking import Progress, WorkerTraceback, run_task
from ..errors import ChunkError, MissingDependencyError

__all__ = ["is_client", "ClientRunner", "ROUNDS"]

ROUNDS = 3   # scatters of the task per call: the first, and two after losing every copy


def is_client(executor):
    """Whether ``executor`` looks like a ``dask.distributed.Client`` (duck typing: it can
    ``scatter``, ``submit`` and ``gather``)."""
    return all(callable(getattr(executor, m, None)) for m in ("scatter", "submit", "gather"))


def _distributed(name):
    try:
        import distributed  # optional dependency: only a Client needs it
    except ImportError:
        raise MissingDependencyError(
            f"{name}: executor= got a Dask client, but dask.distributed cannot be imported "
            "here: pip install 'diffkit[distributed]'") from None
    return distributed


def _run_chunk(task, index, start, stop, data, caller):
    return run_task(task, (index, start, stop, data, caller))


class ClientRunner:
    """Runs the chunks of one transformation call on a Dask client."""

    def __init__(self, client, name):
        self.distributed = _distributed(name)
        self.client = client
        try:
            self.workers = max(1, sum(client.nthreads().values()))
        except Exception:   # a client-like object without nthreads: assume one
            self.workers = 1

    def run(self, task, items, progress, name):
        """Yield ``(index, result)`` for every item ``(index, start, stop, data, caller)``,
        each once, in the order they finish; raise when one cannot be had."""
        waiting = {item[0]: item for item in items}
        lost = None
        for round_ in range(ROUNDS):
            lost = yield from self._round(task, waiting, progress, name, round_)
            if not waiting:
                return
        raise ChunkError(
            f"{name}: Dask workers died {ROUNDS} times while holding this call's function "
            f"and constants, and chunk(s) {sorted(waiting)} never ran; nothing was "
            "assembled. Workers die when they run out of memory (give chunk_size to bound "
            "a task's memory, or give the workers more), crash in compiled code, or are "
            "stopped; the workers' logs say which.") from lost

    def _round(self, task, waiting, progress, name, round_):
        """Scatter the task and submit a task per chunk of ``waiting``; yield each result
        and remove its chunk from ``waiting``. Returns the error of the chunks Dask
        cancelled because every copy of the scattered task was lost (they stay waiting),
        or None."""
        client, distributed = self.client, self.distributed
        shared = self._scatter(task, name, round_)
        call = f"{name or 'diffkit'}-{uuid.uuid4().hex}"
        futures = {client.submit(_run_chunk, shared, *item, pure=False,
                                 key=f"{call}-chunk-{index}"): item
                   for index, item in waiting.items()}
        lost = None
        bar = Progress(len(futures), name) if progress else None
        try:
            for future in distributed.as_completed(futures):
                item = futures[future]
                try:
                    result = future.result()
                except distributed.KilledWorker as error:
                    raise ChunkError(_killed_message(name, item)) from error
                except Exception as error:
                    if future.status != "cancelled":   # the user's function raised
                        _reraise(error, item, name)
                    lost = error                       # its input died with the workers
                    continue
                del waiting[item[0]]
                if bar is not None:
                    bar.update()
                yield result
        finally:
            client.cancel(list(futures))
            shared.release()
            if bar is not None:
                bar.close()
        return lost

    def _scatter(self, task, name, round_):
        try:
            [shared] = self.client.scatter([task], broadcast=True, hash=False)
        except TimeoutError as error:   # no worker came within the client's timeout
            again = " again after workers died" if round_ else ""
            raise ChunkError(f"{name}: no Dask worker could take the function and its "
                             f"constants{again} ({error}); start workers, or check why "
                             "they die (their logs)") from error
        return shared


def _killed_message(name, item):
    index, start, stop = item[:3]
    return (f"{name}: chunk {index} (rows {start}:{stop}) was lost: every Dask worker that "
            "ran it died while running it (distributed.scheduler.allowed-failures times); "
            "nothing was assembled. A worker dies when it runs out of memory (give a "
            "smaller chunk_size, or the workers more memory), crashes in compiled code, or "
            "is stopped; the workers' logs say which.")


def _reraise(error, item, name):
    if hasattr(error, "add_note"):
        index, start, stop = item[:3]
        error.add_note(f"{name}: raised in a task on a Dask worker (chunk {index}, rows "
                       f"{start}:{stop})")
    text = getattr(error, "diffkit_worker_traceback", None)
    if text is not None and error.__cause__ is None:
        error.__cause__ = WorkerTraceback(text)
    raise error
