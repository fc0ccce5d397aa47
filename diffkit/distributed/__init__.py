"""Running diffkit's chunked work on Dask: ``executor=client`` and lazy ``vmap`` of dask
arrays.

Why this package exists apart from the transformations: ``diffkit.api`` stands on the api
floor, below this one (``diffkit/layers.toml``), and may not import it. So the api floor
owns the protocol and this package plugs into it:

- ``diffkit.chunking`` (api floor) cuts the work into chunks, recognises executors by what
  they can do (``submit``, or a map-like callable: nothing imported) and keeps two slots,
  ``register_executor`` and ``register_lazy_array``.
- This package fills the slots when ``import diffkit`` imports it (the entry floor does).
  Neither module imports dask at import time; dask is imported when a Dask client or a
  dask array actually reaches a transformation, so diffkit imports and works without it.

What needs Dask lives here:

- ``client.py``: a ``dask.distributed.Client`` (anything with ``scatter``, ``submit`` and
  ``gather``) as executor. The task, which holds the user's function with every constant it
  closes over and the point, is scattered to every worker once per call; the chunk tasks
  refer to it, under keys no other call shares. Dask retries a task whose worker died;
  chunks whose scattered task died with every worker holding it are sent again with the
  task scattered anew; what cannot be had raises ``ChunkError``, never a partial result.
- ``arrays.py``: ``vmap`` over ``dask.array.Array`` arguments builds a lazy dask array, one
  block of results per block of examples, computed out of core by whatever scheduler runs
  it. Its tasks are named after a token of the function, its constants and its inputs.
- ``keys.py``: what that token holds beyond what dask's ``tokenize`` sees (the module
  globals the user's functions read), and the random draws that make it random.

Without dask installed, a client passed as ``executor`` raises ``MissingDependencyError``
naming ``pip install 'diffkit[distributed]'``.
"""

from ..chunking import register_executor, register_lazy_array
from .arrays import is_dask_array, vmap_dask_arrays
from .client import ClientRunner, is_client

__all__ = ["ClientRunner", "is_client", "is_dask_array", "vmap_dask_arrays"]

register_executor(is_client, ClientRunner)
register_lazy_array(is_dask_array, vmap_dask_arrays)
