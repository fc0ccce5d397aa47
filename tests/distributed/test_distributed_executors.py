"""``executor=`` with a Dask ``LocalCluster`` and a ``ProcessPoolExecutor``: the results
equal the local ones bit for bit (same ``chunk_size``: the same batched passes), pytrees
and closures over large constants travel, a user error in one chunk comes back with the
worker's traceback, and a worker killed mid-task loses nothing."""

import concurrent.futures
import os
import traceback

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import OptionError

pytest.importorskip("cloudpickle", reason="pip install 'diffkit[distributed]'")

RNG = np.random.default_rng(11)
X = RNG.normal(size=12)
W = RNG.normal(size=(16, 12))
PARENT = os.getpid()


def marker_once(path):
    """True the first time it is called, over all processes, for this ``path``."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


@pytest.fixture(scope="module", autouse=True)
def _by_value(by_value):
    by_value(__name__)


@pytest.fixture(params=["client", "pool"])
def executor(request):
    return request.getfixturevalue(request.param)


def vector(x):      # R^12 -> R^16
    return dnp.tanh(W @ x) * dnp.sum(x ** 2)


def scalar(x):
    return dnp.sum(dnp.log1p(dnp.exp(W @ x))) + dnp.prod(dnp.cos(x[:4]))


@pytest.mark.parametrize("build", [
    lambda **kw: dk.jacfwd(vector, **kw),
    lambda **kw: dk.jacrev(vector, **kw),
    lambda **kw: dk.jacobian(vector, **kw),
    lambda **kw: dk.jacobian(vector, mode="fwd", **kw),
    lambda **kw: dk.hessian(scalar, **kw),
], ids=["jacfwd", "jacrev", "jacobian", "jacobian-fwd", "hessian"])
def test_jacobians_equal_local_bit_for_bit(build, executor):
    local = build(chunk_size=5)(X)
    assert_array_equal(build(chunk_size=5, executor=executor)(X), local)


def test_vmap_of_grad_equals_local(executor):
    xs, ys = RNG.normal(size=(40, 12)), RNG.normal(size=40)

    def loss(w, x, y):
        return dnp.log1p(dnp.exp(-y * dnp.dot(x, w)))

    per_example = dk.vmap(dk.grad(loss), in_axes=(None, 0, 0), chunk_size=7)
    local = per_example(X, xs, ys)
    assert_array_equal(dk.vmap(dk.grad(loss), in_axes=(None, 0, 0), chunk_size=7,
                               executor=executor)(X, xs, ys), local)
    margin = ys * (xs @ X)
    np.testing.assert_allclose(local, (-ys / (1 + np.exp(margin)))[:, None] * xs, rtol=1e-7)


def test_sparse_jacobian_and_hessian_equal_local(executor):
    def chain(x):
        return dnp.sin(x[1:]) * x[:-1] ** 2

    def energy(x):
        return dnp.sum((x[1:] - x[:-1]) ** 2 * dnp.cosh(x[1:]))

    for mode in ("forward", "reverse"):
        local = dk.sparse_jacobian(chain, mode=mode)(X)
        far = dk.sparse_jacobian(chain, mode=mode, chunk_size=1, executor=executor)(X)
        assert_array_equal(far.toarray(), local.toarray())
    local = dk.sparse_hessian(energy)(X)
    far = dk.sparse_hessian(energy, chunk_size=2, executor=executor)(X)
    assert_array_equal(far.toarray(), local.toarray())
    np.testing.assert_allclose(local.toarray(), dk.hessian(energy)(X), rtol=1e-7, atol=1e-12)


def test_pytrees_in_and_out(executor):
    def model(params, scale):
        h = dnp.tanh(params["w"] @ params["x"] + params["b"])
        return {"h": h * scale, "parts": (dnp.sum(h), params["b"] ** 2)}

    params = {"w": W[:5, :4], "x": X[:4], "b": X[4:9]}
    for jac in (dk.jacfwd, dk.jacrev):
        local = jac(model, chunk_size=3)(params, 2.0)
        far = jac(model, chunk_size=3, executor=executor)(params, 2.0)
        for a, b in zip(dk.tree_util.tree_leaves(far), dk.tree_util.tree_leaves(local)):
            assert_array_equal(a, b)
        assert dk.tree_util.tree_structure(far) == dk.tree_util.tree_structure(local)
    batched = dk.vmap(model, in_axes=({"w": None, "x": 0, "b": 0}, None), chunk_size=2,
                      executor=executor)
    xs = {"w": W[:5, :4], "x": RNG.normal(size=(7, 4)), "b": RNG.normal(size=(7, 5))}
    local = dk.vmap(model, in_axes=({"w": None, "x": 0, "b": 0}, None), chunk_size=2)(xs, 2.0)
    far = batched(xs, 2.0)
    assert_array_equal(far["h"], local["h"])
    assert_array_equal(far["parts"][0], local["parts"][0])


def test_closure_over_a_large_constant_is_sent_once(client):
    big = RNG.normal(size=(500, 1000))   # 4 MB, closed over

    def f(x):
        return dnp.tanh(big[:16, :12] @ x) + dnp.sum(big) * 1e-6 * x[:16 % 12 + 4].sum()

    class Watched:
        """The client, counting what travels."""

        def __init__(self, client):
            self.client, self.scattered, self.submitted = client, 0, []

        def scatter(self, data, **kw):
            self.scattered += 1
            return self.client.scatter(data, **kw)

        def submit(self, fn, *args, **kw):
            import cloudpickle
            self.submitted.append(len(cloudpickle.dumps(args[1:])))
            return self.client.submit(fn, *args, **kw)

        def __getattr__(self, name):
            return getattr(self.client, name)

    watched = Watched(client)
    local = dk.jacrev(f, chunk_size=3)(X)
    assert_array_equal(dk.jacrev(f, chunk_size=3, executor=watched)(X), local)
    assert watched.scattered == 1 and len(watched.submitted) == 6
    assert max(watched.submitted) < 10_000   # the chunks carry their bounds, not the constant


def test_default_chunk_size_equals_unchunked_for_elementwise_work(executor):
    def f(x):
        return dnp.sin(x) * dnp.exp(x[::-1]) + dnp.sum(x)

    xs = RNG.normal(size=200)
    assert_array_equal(dk.jacrev(f, executor=executor)(xs), dk.jacrev(f)(xs))
    assert_array_equal(dk.vmap(lambda x: dnp.sin(x) ** 2, executor=executor)(xs),
                       np.sin(xs) ** 2)


def test_a_user_error_in_one_chunk(executor, tmp_path):
    marker = str(tmp_path / "raised")

    def fails_in_one_chunk(x):
        if os.getpid() != PARENT and marker_once(marker):
            raise ValueError("a user error in one chunk")
        return dnp.sin(x)

    with pytest.raises(ValueError, match="a user error in one chunk") as info:
        dk.jacrev(fails_in_one_chunk, chunk_size=3, executor=executor)(X)
    text = "".join(traceback.format_exception(info.value))
    assert "fails_in_one_chunk" in text   # the worker's traceback, as the cause
    assert "raised in a task on a" in text and "chunk" in text


def test_a_killed_worker_is_retried_and_the_result_complete(client, tmp_path):
    marker = str(tmp_path / "killed")

    def dies_once(x):
        if os.getpid() != PARENT and marker_once(marker):
            os._exit(13)    # the worker's process dies mid-task
        return dnp.tanh(W @ x) ** 2

    local = dk.jacrev(dies_once, chunk_size=4)(X)
    far = dk.jacrev(dies_once, chunk_size=4, executor=client)(X)
    assert os.path.exists(marker)   # a worker did die
    assert_array_equal(far, local)


def test_other_executors_and_progress(capsys):
    local = dk.jacrev(vector, chunk_size=4)(X)
    with concurrent.futures.ThreadPoolExecutor(2) as threads:
        assert_array_equal(dk.jacrev(vector, chunk_size=4, executor=threads)(X), local)
    assert_array_equal(dk.jacrev(vector, chunk_size=4, executor=map, progress=True)(X), local)
    assert "4/4" in capsys.readouterr().err   # tqdm's bar, or the plain line


def test_progress_on_a_client(client):
    local = dk.jacfwd(vector, chunk_size=2)(X)
    assert_array_equal(dk.jacfwd(vector, chunk_size=2, executor=client, progress=True)(X),
                       local)


def test_executor_inside_another_transformation_is_an_error(pool):
    with pytest.raises(OptionError, match="outermost"):
        dk.grad(lambda x: dnp.sum(dk.jacrev(vector, executor=pool)(x)))(X)
    with pytest.raises(OptionError, match="executor"):
        dk.jacrev(vector, executor=42)(X)


def test_dask_array_vmap_on_the_cluster(client):
    da = pytest.importorskip("dask.array", reason="pip install 'diffkit[distributed]'")
    xs = da.random.default_rng(3).normal(size=(2_000, 12), chunks=(500, 12))
    per_example = dk.vmap(dk.grad(lambda w, x: dnp.sum(dnp.tanh(W @ (w * x)))),
                          in_axes=(None, 0))(X, xs)
    assert isinstance(per_example, da.Array) and per_example.chunks[0] == (500,) * 4
    values = xs.compute()
    local = dk.vmap(dk.grad(lambda w, x: dnp.sum(dnp.tanh(W @ (w * x)))), in_axes=(None, 0),
                    chunk_size=500)(X, values)
    assert_array_equal(per_example.compute(), local)   # computed on the cluster
