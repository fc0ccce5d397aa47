"""A ``dask.distributed.Client`` as the executor of chunked work (see the package notes).

How a call runs: the task (function, point and constants) goes to every worker once with
``client.scatter(..., broadcast=True)``; each chunk is a ``client.submit`` of ``run_task``
with that future, the chunk's bounds and its slice of the batch (sent with the task, so
that the scheduler still has it if a worker dies). The results are taken as they finish
and handed back with their chunk number; ``diffkit.chunking`` checks that each chunk came
back once before anything is assembled. A worker that dies mid-task has its tasks run
again elsewhere (Dask's ``distributed.scheduler.allowed-failures``); an exception raised
by the user's function is re-raised in the caller, the original type with the worker's
traceback. Dask's nannies start workers with one BLAS thread; ``run_task`` makes sure.
"""

import uuid

from ..chunking import WorkerTraceback, run_task
from ..errors import MissingDependencyError

__all__ = ["is_client", "ClientRunner"]


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
        client, distributed = self.client, self.distributed
        [shared] = client.scatter([task], broadcast=True, hash=False)
        tag = f"{name or 'diffkit'}-{uuid.uuid4().hex[:8]}"
        futures = [client.submit(_run_chunk, shared, *item, pure=False,
                                 key=f"{tag}-chunk-{item[0]}")
                   for item in items]
        numbers = {f.key: item[0] for f, item in zip(futures, items)}
        bounds = {item[0]: item[1:3] for item in items}
        try:
            if progress:
                distributed.progress(futures, notebook=False)
            for future in distributed.as_completed(futures):
                try:
                    yield future.result()
                except Exception as error:
                    _reraise(error, numbers[future.key], bounds, name)
        finally:
            client.cancel(futures)
            shared.release()


def _reraise(error, index, bounds, name):
    if hasattr(error, "add_note"):
        start, stop = bounds[index]
        error.add_note(f"{name}: raised in a task on a Dask worker (chunk {index}, rows "
                       f"{start}:{stop})")
    text = getattr(error, "diffkit_worker_traceback", None)
    if text is not None and error.__cause__ is None:
        error.__cause__ = WorkerTraceback(text)
    raise error
