"""Without dask and cloudpickle installed, diffkit imports and works; executor= that needs
them says what to install."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import sys
    for name in ("dask", "distributed", "cloudpickle"):   # as if not installed
        sys.modules[name] = None
    import concurrent.futures
    import numpy as np
    import diffkit as dk
    import diffkit.numpy as dnp
    from diffkit.errors import MissingDependencyError

    assert not any(m.split(".")[0] in ("dask", "distributed") for m in sys.modules
                   if sys.modules[m] is not None)
    x = np.linspace(0.1, 1.0, 6)
    f = lambda x: dnp.sin(x) * dnp.sum(x)
    local = dk.jacrev(f)(x)
    assert np.array_equal(dk.jacrev(f, chunk_size=2)(x), local)
    with concurrent.futures.ThreadPoolExecutor(2) as threads:   # shares memory: no pickling
        assert np.array_equal(dk.jacrev(f, chunk_size=2, executor=threads)(x), local)
    assert np.array_equal(dk.jacrev(f, chunk_size=2, executor=map)(x), local)

    class Client:   # a Dask client where dask cannot be imported
        def scatter(self, *a, **k): pass
        def submit(self, *a, **k): pass
        def gather(self, *a, **k): pass

    for executor, words in [(Client(), "dask.distributed cannot be imported"),
                            (concurrent.futures.ProcessPoolExecutor(1), "cloudpickle")]:
        try:
            dk.jacrev(f, chunk_size=2, executor=executor)(x)
        except MissingDependencyError as error:
            assert words in str(error) and "diffkit[distributed]" in str(error), error
        else:
            raise AssertionError("no error")
    print("ok")
""")


def test_diffkit_works_without_dask_and_cloudpickle():
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"
