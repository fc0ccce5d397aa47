"""Dask keys of diffkit's work: ``vmap`` over dask arrays names its tasks after the function,
its constants and its inputs, so that several diffkit graphs computed together, or one
after the other on a cluster, each give their own values (compared with the plain NumPy
loop); ``executor=client`` keys every call's futures apart; a worker killed mid-run gives
the complete result or an error saying that workers died, never a partial array."""

import concurrent.futures
import multiprocessing
import os
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import ChunkError

da = pytest.importorskip("dask.array", reason="pip install 'diffkit[distributed]'")
dask = pytest.importorskip("dask", reason="pip install 'diffkit[distributed]'")
pytest.importorskip("cloudpickle", reason="pip install 'diffkit[distributed]'")

RNG = np.random.default_rng(27)
PARENT = os.getpid()
W = RNG.normal(size=(3, 3))   # a module constant read by ``reads_w`` (reassigned in a test)


@pytest.fixture(scope="module", autouse=True)
def _by_value(by_value):
    by_value(__name__)


def rows(fun, xs):
    """The plain NumPy loop: ``fun`` on each row of ``xs``, stacked."""
    return np.stack([fun(x) for x in xs])


def close(actual, expected):
    assert actual.shape == expected.shape
    assert_allclose(actual, expected, rtol=1e-12, atol=1e-15)


def reads_w(x):
    return dnp.tanh(W @ x)


def scaled(c, x):
    return dnp.sin(c * x) + c


# --- the functions of the generated cases: (name, diffkit's f(c)(x), NumPy's f(c, x)) -----

def _sin(c):
    return lambda x: dnp.sin(c * x)


def _tanh_squared(c):
    return lambda x: dnp.tanh(x + c) ** 2


def _grad_of_sum_of_sin(c):   # d/dx sum(sin(c x)) = c cos(c x)
    return dk.grad(lambda x: dnp.sum(dnp.sin(c * x)))


def _times_row_sum(c):
    return lambda x: c * x * dnp.sum(x)


FUNCTIONS = [
    (_sin, lambda c, x: np.sin(c * x)),
    (_tanh_squared, lambda c, x: np.tanh(x + c) ** 2),
    (_grad_of_sum_of_sin, lambda c, x: c * np.cos(c * x)),
    (_times_row_sum, lambda c, x: c * x * np.sum(x)),
]


def build(spec, inputs):
    """The lazy ``vmap`` of a case: ``spec = (function, constant, how)``, the constant
    closed over (``how == "closure"``) or passed as an unmapped argument."""
    which, c, how = spec
    make, _ = FUNCTIONS[which]
    if how == "closure":
        return dk.vmap(make(c))(inputs)
    return dk.vmap(lambda c_, x: make(c_)(x), in_axes=(None, 0))(np.float64(c), inputs)


def expected(spec, values):
    which, c, _ = spec
    return rows(lambda x: FUNCTIONS[which][1](c, x), values)


# --- several graphs in one compute, on the local schedulers -----------------------------

@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_two_graphs_in_one_compute(scheduler):
    values = RNG.normal(size=(20, 3))
    xs = da.from_array(values, chunks=(5, 3))
    a = dk.vmap(lambda x: dnp.sin(x))(xs)
    b = dk.vmap(lambda x: dnp.cos(x))(xs)
    assert a.name != b.name
    got_a, got_b, gap = dask.compute(a, b, (a - b).mean(), scheduler=scheduler)
    close(got_a, rows(np.sin, values))
    close(got_b, rows(np.cos, values))
    assert_allclose(gap, np.mean(np.sin(values) - np.cos(values)), rtol=1e-12)


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_three_graphs_in_one_compute(scheduler):
    values = RNG.normal(size=(24, 3))
    xs = da.from_array(values, chunks=(6, 3))
    other = da.from_array(values[:18], chunks=(9, 3))   # other rows, other blocks
    graphs = [dk.vmap(scaled, in_axes=(None, 0))(2.0, xs),   # a constant argument
              dk.vmap(scaled, in_axes=(None, 0))(3.0, xs),   # another constant
              dk.vmap(scaled, in_axes=(None, 0))(2.0, other)]
    assert len({g.name for g in graphs}) == 3
    results = dask.compute(*graphs, scheduler=scheduler)
    for got, c, v in zip(results, [2.0, 3.0, 2.0], [values, values, values[:18]]):
        close(got, rows(lambda x, c=c: np.sin(c * x) + c, v))


def test_names_are_the_same_only_for_the_same_function_constants_and_inputs():
    values = RNG.normal(size=(12, 3))
    xs = da.from_array(values, chunks=(4, 3))

    def name(*args, fun=scaled, **options):
        return dk.vmap(fun, in_axes=(None, 0), **options)(*args).name

    first = name(2.0, xs)
    assert name(2.0, xs) == first                          # deterministic: dask shares it
    assert name(2.5, xs) != first                          # another constant
    assert name(2.0, da.from_array(values + 1, chunks=(4, 3))) != first     # other data
    assert name(2.0, da.from_array(values, chunks=(6, 3))) != first         # other blocks
    assert name(2.0, xs, chunk_size=2) != first            # other batched passes
    assert name(2.0, xs, fun=lambda c, x: dnp.cos(c * x)) != first          # other function
    shifted = dk.vmap(lambda c, x: scaled(c, x), in_axes=(None, 1))(2.0, xs.T)
    assert shifted.name != first                           # the batch on another axis
    close(shifted.compute(scheduler="sync"), rows(lambda x: np.sin(2.0 * x) + 2.0, values))


def test_a_module_constant_changed_between_two_graphs(monkeypatch):
    values = RNG.normal(size=(8, 3))
    xs = da.from_array(values, chunks=(4, 3))
    before = dk.vmap(reads_w)(xs)
    old = before.compute(scheduler="sync")
    monkeypatch.setattr(sys.modules[__name__], "W", 2.0 * W)
    after = dk.vmap(reads_w)(xs)
    assert after.name != before.name   # reads_w is pickled by name: W is in the key
    close(old, rows(lambda x: np.tanh(W / 2.0 @ x), values))
    close(after.compute(scheduler="sync"), rows(lambda x: np.tanh(W @ x), values))


def test_random_draws_get_a_graph_of_their_own():
    values = RNG.normal(size=(10, 2))
    xs = da.from_array(values, chunks=(5, 2))
    generator = np.random.default_rng(1)

    def noisy(x):
        return x + generator.normal(size=x.shape)

    def legacy(x):
        return x + np.random.normal(size=x.shape)

    for fun in (noisy, legacy):
        a, b = dk.vmap(fun)(xs), dk.vmap(fun)(xs)
        assert a.name != b.name
        got_a, got_b = dask.compute(a, b, scheduler="sync")
        assert got_a.shape == got_b.shape == values.shape
        assert np.all(got_a != got_b)   # each graph its own draws, as two plain calls


def test_a_function_dask_cannot_tokenize_gets_a_graph_of_its_own():
    lock = threading.Lock()   # cannot be pickled: no deterministic token

    def locked(x):
        with lock:
            return dnp.exp(-x)

    values = RNG.normal(size=(9, 2))
    xs = da.from_array(values, chunks=(3, 2))
    a, b = dk.vmap(locked)(xs), dk.vmap(locked)(xs)
    assert a.name != b.name
    for got in dask.compute(a, b, scheduler="sync"):
        close(got, rows(lambda x: np.exp(-x), values))


SPECS = st.tuples(st.integers(0, len(FUNCTIONS) - 1), st.sampled_from([0.5, 1.0, 2.0, -1.5]),
                  st.sampled_from(["closure", "argument"]))


@st.composite
def cases(draw):
    """Two or three graphs: each a function, a constant and an input (one of two arrays of
    generated shapes and blocks)."""
    inputs = []
    for _ in range(2):
        n, width = draw(st.integers(1, 12)), draw(st.integers(1, 3))
        block, seed = draw(st.integers(1, n)), draw(st.integers(0, 2 ** 32 - 1))
        inputs.append((np.random.default_rng(seed).normal(size=(n, width)), block))
    graphs = draw(st.lists(st.tuples(SPECS, st.integers(0, 1)), min_size=2, max_size=3))
    return inputs, graphs


@settings(max_examples=40, deadline=None)
@given(cases())
def test_distinct_graphs_give_their_own_values(case):
    inputs, graphs = case
    arrays = [da.from_array(v, chunks=(b, v.shape[1])) for v, b in inputs]
    lazy = [build(spec, arrays[k]) for spec, k in graphs]
    # what decides a graph's values: the same for two graphs exactly when their names are
    decided = [(spec, inputs[k][0].shape, inputs[k][0].tobytes(), inputs[k][1])
               for spec, k in graphs]
    for i in range(len(lazy)):
        for j in range(i + 1, len(lazy)):
            assert (lazy[i].name == lazy[j].name) == (decided[i] == decided[j])
    results = dask.compute(*lazy, scheduler="sync")
    for (spec, k), got in zip(graphs, results):
        close(got, expected(spec, inputs[k][0]))


# --- on a cluster: together, one after the other, at once -------------------------------

def test_graphs_together_and_in_sequence_on_a_client(client):
    first, second = RNG.normal(size=(100, 3)), RNG.normal(size=(60, 3))
    xs = da.from_array(first, chunks=(25, 3))
    ys = da.from_array(second, chunks=(20, 3))
    a = dk.vmap(lambda x: dnp.sin(x))(xs)
    b = dk.vmap(lambda x: dnp.cos(x))(ys)          # other rows in other blocks
    c = dk.vmap(scaled, in_axes=(None, 0))(0.5, xs)
    want = [rows(np.sin, first), rows(np.cos, second),
            rows(lambda x: np.sin(0.5 * x) + 0.5, first)]
    for got, w in zip(dask.compute(a, b, c), want):   # the client is the default scheduler
        close(got, w)
    for graph, w in zip([a, b, c, b, a], [want[0], want[1], want[2], want[1], want[0]]):
        close(graph.compute(), w)
    held = client.persist(a)        # the cluster keeps a's blocks while b, c run
    close(b.compute(), want[1])
    close(client.compute(c).result(), want[2])
    close(held.compute(), want[0])


def test_executor_calls_in_sequence_and_at_once(client):
    x = RNG.normal(size=10)

    def jacobian(c):   # d/dx sin(c x) * sum(x) = c cos(c x) sum(x) diag + sin(c x) 1^T
        return np.diag(c * np.cos(c * x) * np.sum(x)) + np.outer(np.sin(c * x), np.ones(10))

    def call(c):
        return dk.jacrev(lambda x: dnp.sin(c * x) * dnp.sum(x), chunk_size=3,
                         executor=client)(x)

    for c in (1.0, 2.0, 1.0, -0.5):
        close(call(c), jacobian(c))
    with concurrent.futures.ThreadPoolExecutor(3) as threads:
        results = list(threads.map(call, [1.0, 2.0, 3.0, -0.5, 1.0, 2.0]))
    for c, got in zip([1.0, 2.0, 3.0, -0.5, 1.0, 2.0], results):
        close(got, jacobian(c))


class Watched:
    """A client that records the keys of the chunks submitted to it, and loses the first
    ``losses`` scattered tasks (cancelled at once, as when every worker holding one dies)."""

    def __init__(self, client, losses=0):
        self.client, self.losses, self.scattered, self.keys = client, losses, 0, []

    def scatter(self, data, **options):
        [future] = self.client.scatter(data, **options)
        self.scattered += 1
        if self.scattered <= self.losses:
            self.client.cancel([future], force=True)
        return [future]

    def submit(self, fn, *args, **options):
        self.keys.append(options["key"])
        return self.client.submit(fn, *args, **options)

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_every_call_has_keys_of_its_own(client):
    x = RNG.normal(size=8)
    watched = Watched(client)
    local = dk.jacfwd(lambda x: dnp.exp(x) * x[0], chunk_size=2)(x)
    for _ in range(2):
        close(dk.jacfwd(lambda x: dnp.exp(x) * x[0], chunk_size=2, executor=watched)(x),
              local)
    assert len(watched.keys) == 8 and len(set(watched.keys)) == 8   # 4 chunks, 2 calls


@pytest.mark.parametrize("progress", [False, True])
def test_a_lost_task_is_scattered_again(client, progress):
    x = RNG.normal(size=9)
    watched = Watched(client, losses=2)
    got = dk.jacrev(lambda x: dnp.sin(x) * dnp.sum(x), chunk_size=3, executor=watched,
                    progress=progress)(x)
    close(got, np.diag(np.cos(x) * np.sum(x)) + np.outer(np.sin(x), np.ones(9)))
    assert watched.scattered == 3   # lost twice, then the complete result


def test_a_task_lost_every_time_is_an_error_naming_dead_workers(client):
    watched = Watched(client, losses=99)
    with pytest.raises(ChunkError, match="workers died .* times") as info:
        dk.vmap(lambda x: dnp.sin(x), chunk_size=2, executor=watched)(RNG.normal(size=6))
    assert "nothing was assembled" in str(info.value) and "chunk_size" in str(info.value)


# --- workers killed mid-run ---------------------------------------------------------------

def marker_once(path):
    """True the first time it is called, over all processes, for this ``path``."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def dies_once(marker, scale):
    """``tanh(scale x)^2``, whose first call with examples on a worker kills the worker."""
    def f(x):
        if os.getpid() != PARENT and np.shape(x)[0] and marker_once(marker):
            os._exit(13)
        return dnp.tanh(scale * x) ** 2
    return f


@pytest.fixture
def fragile_client():
    """Two worker processes of one thread, for killing. Their nannies start them from a
    fork server with diffkit loaded, so that a killed worker is back in a fraction of a
    second; a worker away for a while is not given up (``lost-worker-timeout``)."""
    distributed = pytest.importorskip("distributed", reason="a LocalCluster needs "
                                      "dask.distributed: pip install 'diffkit[distributed]'")
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() \
        else "spawn"
    with dask.config.set({"distributed.worker.multiprocessing-method": method,
                          "distributed.deploy.lost-worker-timeout": "1h"}):
        if method == "forkserver":
            distributed.utils.get_mp_context()   # dask's preloads first, then these
            multiprocessing.get_context(method).set_forkserver_preload(
                ["distributed", "numpy", "cloudpickle", "diffkit"])
        cluster = distributed.LocalCluster(n_workers=2, processes=True,
                                           threads_per_worker=1, dashboard_address=None)
        with distributed.Client(cluster) as client:
            yield client
        cluster.close()


@pytest.mark.slow
def test_killed_workers_never_give_a_partial_or_wrong_array(fragile_client, tmp_path):
    client = fragile_client
    values = RNG.normal(size=(48, 2))
    xs = da.from_array(values, chunks=(8, 2))
    point = RNG.normal(size=12)
    for i in range(20):
        marker, scale = str(tmp_path / f"killed-{i}"), 1.0 + 0.1 * i
        if i % 2:   # executor=client: the Jacobian of the elementwise map is diagonal
            got = dk.jacrev(dies_once(marker, scale), chunk_size=3, executor=client)(point)
            t = np.tanh(scale * point)
            close(got, np.diag(2 * t * (1 - t ** 2) * scale))
        else:       # a lazy vmap, computed on the cluster
            got = client.compute(dk.vmap(dies_once(marker, scale))(xs)).result()
            close(got, rows(lambda x, s=scale: np.tanh(s * x) ** 2, values))
        assert os.path.exists(marker)   # a worker did die
    # a task allowed no failure: the error says workers died, and nothing comes back (both
    # workers up first, so that the scattered task outlives the death and the chunk fails)
    client.wait_for_workers(2, timeout=120)
    client.run_on_scheduler(lambda dask_scheduler: setattr(dask_scheduler,
                                                           "allowed_failures", 0))
    with pytest.raises(ChunkError, match="died while running it"):
        dk.jacrev(dies_once(str(tmp_path / "last-jacrev"), 3.0), chunk_size=3,
                  executor=client)(point)
    with pytest.raises(Exception, match="workers died") as info:
        client.compute(dk.vmap(dies_once(str(tmp_path / "last-vmap"), 3.0))(xs)).result()
    assert type(info.value).__name__ == "KilledWorker"   # Dask's own, from the compute
