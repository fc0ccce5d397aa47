"""Chunked work and where it runs: ``chunk_size=``, ``executor=`` and ``progress=`` of the
transformations.

A Jacobian is a stack of independent rows (one per unit vector of the swept side), a
``vmap`` a stack of independent examples, a sparse derivative a stack of colours. The
transformations cut that stack into chunks of ``chunk_size`` rows and hand this module a
*task*: a picklable callable ``task(start, stop, data)`` computing rows ``start:stop``
(``data`` is what the caller sliced for those rows, the batch of a ``vmap``, or ``None``).
``run_chunks`` runs the tasks here, one after the other (``executor=None``: this is what
bounds peak memory), or on an executor, and gives the results back in order.

Executors, recognised by what they can do (duck typing), so that nothing here imports
them:

- an adapter registered with ``register_executor`` by a higher floor, asked first.
  ``diffkit.distributed`` registers the one for ``dask.distributed.Client`` when
  ``import diffkit`` runs: the api floor cannot import the features floor, so the upper
  floor puts itself into this slot (the same pattern as the NumPy protocol on ``Tracer``).
  It scatters large constants once per call (again if a worker holding them dies) and
  shows diffkit's progress bar as results arrive; dask itself is imported only when a
  Client is actually passed.
- a ``concurrent.futures.Executor`` or any object with a ``submit(fn, *args)`` returning
  futures (``ProcessPoolExecutor``, ``ThreadPoolExecutor``, MPI's ``MPIPoolExecutor``,
  Ray's pool...).
- a map-like callable ``workers(fun, iterable)`` returning the results in order: SciPy's
  ``workers=`` convention (``multiprocessing.Pool(...).map``, ``map`` itself).

SciPy's ``workers=`` also takes an integer, the number of processes of a pool made for the
call (``-1``: one per CPU). The ``diffkit.scipy.optimize`` adapters accept it through
``integer_workers``: a ``ProcessPoolExecutor`` of that size lives for the whole solve and is
shut down when it returns.

What travels: the task (the user's function and the point, with every constant it closes
over) is pickled once per call with cloudpickle, so closures and lambdas work; each chunk
item carries only its bounds and its slice of the batch. A process pool or a map has no
way to share data between tasks, so those bytes go with every task (a Dask client
scatters the task to each worker once instead). A ``ThreadPoolExecutor`` shares memory and
gets the task itself. On a worker process, ``run_task`` limits BLAS to one
thread (threadpoolctl, once per process), so that ``n`` workers on ``n`` cores do not each
start ``n`` BLAS threads; the caller's own process is never changed.

What comes back is checked before anything is assembled: every chunk exactly once, each
with its number of rows (``check``); a missing chunk raises ``ChunkError``, it never
becomes zeros. A task that raised re-raises its original exception here, with the
worker's traceback as its ``__cause__`` and a note naming the chunk.

How the default chunk size is chosen (``executor`` given, ``chunk_size=None``): a task
costs an executor 0.2 to 1 ms (Dask) or more (process pools pickle each item), so a chunk
should carry about ``TARGET_SECONDS`` (0.1 s) of work. The caller runs a pilot here, rows
1, 2, 4, 8 ... at a time, until one pilot chunk takes ``PILOT_SECONDS`` (20 ms) or the
rows run out; the pilot's results are kept, not thrown away. From the time per row of the
last pilot chunk, a chunk gets ``TARGET_SECONDS / time_per_row`` rows, but no more than an
equal share of the remaining rows per worker, so that every worker has work. Give
``chunk_size`` yourself to bound the memory of a task, or for results that do not depend
on timing (the rows of a chunk are computed in one batched pass; a batched BLAS product
can round differently for another batch size).
"""

import concurrent.futures
import contextvars
import functools
import math
import os
import pickle
import sys
import time
import traceback

from . import tree_util
from .core.trace import Tracer
from .core.zeros import shape_of
from .errors import ChunkError, MissingDependencyError, OptionError

__all__ = ["run_chunks", "register_executor", "register_lazy_array", "lazy_array_handler",
           "spans", "run_task", "WorkerTraceback", "TARGET_SECONDS", "PILOT_SECONDS",
           "integer_workers"]

TARGET_SECONDS = 0.1   # the work a chunk should carry when the chunk size is chosen for you
PILOT_SECONDS = 0.02   # the pilot grows until one chunk takes this long


def spans(total, size, start=0):
    """The ``(start, stop)`` bounds of consecutive chunks covering rows ``start:total``: as
    few chunks as ``size`` allows, of equal sizes (within one row), so that no chunk is a
    small remainder. (A batch of one example takes NumPy's matrix-vector products, which
    can round the last bit differently from the matrix-matrix ones of a larger batch.)"""
    rows = total - start
    if rows <= 0:
        return []
    count = math.ceil(rows / max(int(size), 1))
    base, extra = divmod(rows, count)
    bounds = []
    for i in range(count):
        stop = start + base + (i < extra)
        bounds.append((start, stop))
        start = stop
    return bounds


# --- the slots the features floor fills ---------------------------------------------------

_ADAPTERS = []          # (recognise(executor) -> bool, make(executor, name) -> runner)
_LAZY_ARRAYS = []       # (recognise(leaf) -> bool, handler)


def register_executor(recognise, make):
    """Let a higher floor run chunks on executors it knows: ``recognise(executor)`` says
    whether ``make(executor, name)`` gives a runner for it (asked before the built-in
    kinds). A runner has ``workers`` (how many tasks run at once) and
    ``run(task, items, progress, name)``, giving ``(index, result)`` pairs."""
    _ADAPTERS.append((recognise, make))


def register_lazy_array(recognise, handler):
    """Let a higher floor take over ``vmap`` when an argument leaf is a lazy array it knows
    (a ``dask.array.Array``): ``handler`` is returned by ``lazy_array_handler``."""
    _LAZY_ARRAYS.append((recognise, handler))
    _HANDLER_OF_TYPE.clear()


_HANDLER_OF_TYPE = {}   # type -> its handler, or False: asked once per type


def lazy_array_handler(leaves):
    """The registered handler for the first lazy array among ``leaves``, or None. (Every
    ``vmap`` call asks: the answer is remembered per type of leaf.)"""
    if not _LAZY_ARRAYS:
        return None
    for leaf in leaves:
        kind = type(leaf)
        handler = _HANDLER_OF_TYPE.get(kind)
        if handler is None:
            handler = next((h for recognise, h in _LAZY_ARRAYS if recognise(leaf)), False)
            if len(_HANDLER_OF_TYPE) < 256:
                _HANDLER_OF_TYPE[kind] = handler
        if handler:
            return handler
    return None


# --- on the worker ------------------------------------------------------------------------


class WorkerTraceback(Exception):
    """The traceback of an exception raised in a task on a worker, as text; attached as the
    ``__cause__`` of the exception re-raised in the caller."""

    def __str__(self):
        return "\n" + self.args[0]


_BLAS_LIMITED = False


def _one_blas_thread():
    """Limit this worker process's BLAS (and OpenMP) pools to one thread, once."""
    global _BLAS_LIMITED
    if _BLAS_LIMITED:
        return
    _BLAS_LIMITED = True
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"   # for libraries loaded later
    try:
        import threadpoolctl
    except ImportError:  # optional: without it, only libraries loaded later are limited
        return
    threadpoolctl.threadpool_limits(1)


def run_task(task, item):
    """Run one chunk: the entry point on a worker. ``task`` is the task or its cloudpickle
    bytes; ``item`` is ``(index, start, stop, data, caller_pid)``. Returns
    ``(index, result)``. In another process than the caller's, BLAS gets one thread. An
    exception leaves with its traceback's text (it survives pickling) for the caller."""
    index, start, stop, data, caller = item
    if os.getpid() != caller:
        _one_blas_thread()
    if isinstance(task, bytes):   # cloudpickle's output loads with pickle
        task = pickle.loads(task)
    try:
        return index, task(start, stop, data)
    except Exception as error:
        error.diffkit_worker_traceback = traceback.format_exc()
        raise


class _Bound:
    """``run_task`` with its task bound: picklable (a module-level function and bytes)."""

    __slots__ = ("task",)

    def __init__(self, task):
        self.task = task

    def __call__(self, item):
        return run_task(self.task, item)

    def __reduce__(self):
        return _Bound, (self.task,)


def pickled(task, name):
    """``task`` as cloudpickle bytes (closures and lambdas included)."""
    try:
        import cloudpickle
    except ImportError:   # optional dependency, named in the error
        raise MissingDependencyError(
            f"{name}: executor= sends the function to other processes with cloudpickle, "
            "which is not installed: pip install 'diffkit[distributed]' (or cloudpickle)"
        ) from None
    return cloudpickle.dumps(task)


def reraise(error, index, spans_, name):
    """Re-raise a task's exception in the caller, with the worker's traceback."""
    where = "" if index is None else \
        f" (chunk {index}, rows {spans_[index][0]}:{spans_[index][1]})"
    if hasattr(error, "add_note"):
        error.add_note(f"{name}: raised in a task on a worker{where}")
    text = getattr(error, "diffkit_worker_traceback", None)
    if text is not None and error.__cause__ is None:
        error.__cause__ = WorkerTraceback(text)
    raise error


# --- runners --------------------------------------------------------------------------------


class _SubmitRunner:
    """A ``concurrent.futures.Executor``, or anything with ``submit`` returning futures."""

    def __init__(self, executor, name):
        self.executor = executor
        self.local = isinstance(executor, concurrent.futures.ThreadPoolExecutor)
        self.workers = getattr(executor, "_max_workers", None) or os.cpu_count() or 1

    def run(self, task, items, progress, name):
        fn = _Bound(task if self.local else pickled(task, name))
        if self.local:   # a thread runs each task in a copy of the caller's context
            # (contextvars: settings such as linear_solve_options hold there as here)
            futures = {self.executor.submit(contextvars.copy_context().run, fn, item): item[0]
                       for item in items}
        else:
            futures = {self.executor.submit(fn, item): item[0] for item in items}
        bar = Progress(len(futures), name) if progress else None
        try:
            for future in concurrent.futures.as_completed(futures):
                try:
                    yield future.result()
                except Exception as error:
                    reraise(error, futures[future], [it[1:3] for it in items], name)
                if bar is not None:
                    bar.update()
        finally:
            for future in futures:
                future.cancel()
            if bar is not None:
                bar.close()


class _MapRunner:
    """A map-like callable ``workers(fun, iterable)`` (SciPy's ``workers=``)."""

    def __init__(self, executor, name):
        self.executor = executor
        self.workers = getattr(getattr(executor, "__self__", None), "_processes", None) \
            or os.cpu_count() or 1

    def run(self, task, items, progress, name):
        fn = _Bound(task if self.executor is map else pickled(task, name))
        bar = Progress(len(items), name) if progress else None
        try:
            for result in self.executor(fn, items):
                yield result
                if bar is not None:
                    bar.update()
        except Exception as error:
            reraise(error, None, [], name)
        finally:
            if bar is not None:
                bar.close()


def runner(executor, name):
    """The runner for ``executor`` (see the module notes for the kinds recognised)."""
    for recognise, make in _ADAPTERS:
        if recognise(executor):
            return make(executor, name)
    if isinstance(executor, concurrent.futures.Executor) or \
            callable(getattr(executor, "submit", None)):
        return _SubmitRunner(executor, name)
    if callable(executor):
        return _MapRunner(executor, name)
    raise OptionError(
        f"{name}: executor must be None, a concurrent.futures.Executor (or an object with "
        "submit), a dask.distributed.Client, or a map-like callable workers(fun, iterable); "
        f"got {type(executor).__name__}")


def integer_workers(solver):
    """Decorate a solver taking ``workers=`` so that an integer ``n`` there means a pool of
    ``n`` processes (``-1``: one per CPU), as in SciPy; the pool serves the whole call and
    is shut down when it returns. Other values pass through unchanged."""

    @functools.wraps(solver)
    def with_pool(*args, **kwargs):
        workers = kwargs.get("workers")
        if workers is None or isinstance(workers, bool) or not isinstance(workers, int):
            return solver(*args, **kwargs)
        if workers == -1:
            workers = os.cpu_count() or 1
        if workers < 1:
            raise OptionError(f"{solver.__name__}: workers={kwargs['workers']} is not a number "
                              "of processes; pass a positive integer, -1 for one per CPU, "
                              "an executor or a map-like callable")
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
            return solver(*args, **{**kwargs, "workers": pool})

    return with_pool


# --- progress ------------------------------------------------------------------------------


class Progress:
    """A progress bar over ``total`` chunks: tqdm's when it is installed, else one line on
    stderr rewritten in place."""

    def __init__(self, total, name):
        self.total, self.done, self.name = total, 0, name
        try:
            import tqdm  # optional: a nicer bar where it is installed
        except ImportError:
            self.bar = None
            self._line()
        else:
            self.bar = tqdm.tqdm(total=total, desc=name, unit="chunk")

    def _line(self):
        sys.stderr.write(f"\r{self.name}: {self.done}/{self.total} chunks")
        sys.stderr.flush()

    def update(self, n=1):
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        else:
            self._line()

    def close(self):
        if self.bar is not None:
            self.bar.close()
        else:
            sys.stderr.write("\n")
            sys.stderr.flush()


# --- the driver ----------------------------------------------------------------------------


def _pilot(task, total, data, results):
    """Run rows 1, 2, 4 ... here until a chunk takes ``PILOT_SECONDS``; the rows done and the
    estimated seconds per row."""
    start, size, per_row = 0, 1, 0.0
    while start < total:
        stop = min(total, start + size)
        began = time.perf_counter()
        results.append((start, stop, task(start, stop, data(start, stop))))
        elapsed = time.perf_counter() - began
        per_row, start = elapsed / (stop - start), stop
        if elapsed >= PILOT_SECONDS:
            break
        size *= 2
    return start, per_row


def auto_chunk_size(per_row, remaining, workers):
    """Rows per chunk for about ``TARGET_SECONDS`` of work, at most an equal share of the
    ``remaining`` rows per worker."""
    size = math.ceil(TARGET_SECONDS / per_row) if per_row > 0 else remaining
    return max(1, min(size, math.ceil(remaining / max(workers, 1))))


def run_chunks(task, total, chunk_size=None, executor=None, progress=False, name="",
               data=None, check=None, local=None):
    """Rows ``0:total`` by chunks: a list of ``(start, stop, result)`` in order.

    ``task(start, stop, data(start, stop))`` computes a chunk (``data`` defaults to
    nothing). Without an executor the chunks run here, one after the other (one chunk of
    everything when ``chunk_size`` is None). ``check(result, start, stop)`` raises when a
    result does not have the rows it should. ``local``, if given, is the task to run in
    this process instead of ``task`` (the pilot, and everything without an executor): one
    that reuses work already done here, where ``task`` must start afresh on a worker."""
    data = data or (lambda start, stop: None)
    local = local or task
    if executor is None:
        bounds = spans(total, chunk_size or total or 1)
        bar = Progress(len(bounds), name) if progress and len(bounds) > 1 else None
        results = []
        for start, stop in bounds:
            results.append((start, stop, local(start, stop, data(start, stop))))
            if bar is not None:
                bar.update()
        if bar is not None:
            bar.close()
        return _checked(results, total, check, name)
    run = runner(executor, name)
    results, first = [], 0
    if chunk_size is None:
        first, per_row = _pilot(local, total, data, results)
        chunk_size = auto_chunk_size(per_row, total - first, run.workers)
    bounds = spans(total, chunk_size, first)
    caller = os.getpid()
    items = [(i, start, stop, data(start, stop), caller) for i, (start, stop) in enumerate(bounds)]
    found = [None] * len(bounds)
    seen = [False] * len(bounds)
    if items:
        for index, result in run.run(task, items, progress, name):
            if not 0 <= index < len(bounds) or seen[index]:
                raise ChunkError(f"{name}: an executor returned chunk {index} unexpectedly "
                                 f"(expected each of 0..{len(bounds) - 1} once)")
            seen[index], found[index] = True, result
    missing = [i for i, s in enumerate(seen) if not s]
    if missing:
        raise ChunkError(f"{name}: the executor returned no result for chunk(s) {missing} "
                         f"of {len(bounds)}; nothing was assembled")
    results += [(start, stop, r) for (start, stop), r in zip(bounds, found)]
    return _checked(results, total, check, name)


def require_concrete(leaves, executor, name):
    """``executor=`` needs plain values: the tasks leave this process (or thread)."""
    if executor is not None and any(isinstance(x, Tracer) for x in leaves):
        raise OptionError(f"{name}: executor= cannot be used inside another transformation "
                          "(its inputs are traced values, which cannot leave this process); "
                          "give the executor to the outermost transformation")


def rows_check(axis):
    """A ``check`` for ``run_chunks``: every array of a chunk's result (of its first part,
    for ``axis=-1``: the tangents of ``jacfwd``) has ``stop - start`` rows on ``axis``."""
    def check(parts, start, stop):
        for p in tree_util.tree_leaves(parts[0] if axis == -1 else parts):
            if shape_of(p)[axis] != stop - start:
                raise ChunkError(f"a chunk for rows {start}:{stop} came back with "
                                 f"{shape_of(p)[axis]} rows")
    return check


def _checked(results, total, check, name):
    """Every row exactly once, in order, and each result as ``check`` wants it."""
    expected = 0
    for start, stop, result in results:
        if start != expected:
            raise ChunkError(f"{name}: rows {expected}:{start} have no chunk")
        if check is not None:
            check(result, start, stop)
        expected = stop
    if expected != total:
        raise ChunkError(f"{name}: rows {expected}:{total} have no chunk")
    return results
