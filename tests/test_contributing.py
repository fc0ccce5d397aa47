"""docs/contributing.md stays true: its Python blocks run, its excerpts are the code, and
the paths and floors it names exist.

The guide's blocks are of three kinds:

- a block after ``<!-- excerpt: <path> -->`` quotes real code: it must appear verbatim in
  that file (so the explanation around it is about today's code);
- a block starting with ``R +=`` or ``E +=`` is a record or an edge sample, written for a
  module of ``tests/records/``: it is run in a namespace like that module's and the
  generic checkers run on what it made;
- every other block is an example: the blocks of one section run in order, in one
  namespace, as a reader would paste them.

The builder example (section 3) is written against ``families.elementwise``; until that
builder is on this branch, its tests are skipped with that reason.
"""

import re
from pathlib import Path

import numpy as np
import pytest
import scipy.special as sc
from numpy.testing import assert_allclose, assert_array_equal

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.core.primitive import PRIMITIVES
from diffkit.ops import families
from diffkit.testing import assert_jacobians_agree, check_grads, check_vmap
from diffkit.testing.edges import check_edge

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "contributing.md"
TEXT = GUIDE.read_text()

# ``families.elementwise`` is today the module ``ops.elementwise`` (imported by families);
# the builder is a function of that name.
HAS_BUILDER = callable(getattr(families, "elementwise", None))
needs_builder = pytest.mark.skipif(
    not HAS_BUILDER, reason="the guide's unary example uses families.elementwise, the one "
    "elementwise builder, which is not on this branch yet")

_BLOCK = re.compile(r"(?:<!-- excerpt: (?P<source>\S+) -->\n)?```python\n(?P<code>.*?)```",
                    re.S)


def sections():
    """``{section number: [(excerpt source or None, code), ...]}`` for the ``## N.``
    sections of the guide."""
    found = {}
    for part in re.split(r"^## ", TEXT, flags=re.M)[1:]:
        number = re.match(r"(\d+)\.", part)
        if number:
            found[int(number.group(1))] = [(m.group("source"), m.group("code"))
                                           for m in _BLOCK.finditer(part)]
    return found


SECTIONS = sections()


def examples(section):
    return [code for source, code in SECTIONS[section]
            if source is None and not code.startswith(("R +=", "E +="))]


def snippets(prefix):
    return [code for blocks in SECTIONS.values() for source, code in blocks
            if source is None and code.startswith(prefix)]


def run(codes, namespace=None):
    namespace = {} if namespace is None else namespace
    for i, code in enumerate(codes):
        exec(compile(code, f"{GUIDE.relative_to(ROOT)} block {i}", "exec"), namespace)
    return namespace


@pytest.fixture
def registry():
    """The primitives an example defines leave the registry after the test (the
    completeness tests read it). Names the example defines are free during the test, in
    case diffkit gains them later."""
    before = dict(PRIMITIVES)
    for name in ("sindg", "cosdg"):
        PRIMITIVES.pop(name, None)
    yield
    PRIMITIVES.clear()
    PRIMITIVES.update(before)


def test_the_guide_has_its_seven_sections_and_every_example_block_is_tested():
    assert sorted(SECTIONS) == list(range(1, 8))
    counted = sum(len(blocks) for blocks in SECTIONS.values())
    assert counted == TEXT.count("```python"), "a Python block outside the numbered sections"
    assert len(examples(3)) == 2 and len(snippets("R +=")) == 1 and len(snippets("E +=")) == 1


# --- section 1: the floors ------------------------------------------------------------------


def test_the_floors_are_the_layer_table_and_the_picture_is_drawn_from_it():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    with (ROOT / "diffkit" / "layers.toml").open("rb") as f:
        table = tomllib.load(f)
    floors = re.split(r"^## ", TEXT, flags=re.M)[1]
    named = re.findall(r"^- \*\*(\w+)\*\*", floors, re.M)
    assert named == [floor["name"] for floor in table["floor"]]   # bottom first, all of them
    assert "<!-- layers: picture -->" in floors
    assert "(layers.md)" in floors and "[[lazy]]" in floors


def test_the_paths_the_guide_names_exist():
    named = set(re.findall(r"`((?:diffkit|tests|docs|benchmarks|notebooks)/[\w/.]*)`", TEXT))
    assert len(named) > 20
    missing = sorted(p for p in named if not (ROOT / p).exists()
                     and p not in ("diffkit/ops/special_trig.py",))   # "or a new module"
    assert not missing, f"docs/contributing.md names paths that do not exist: {missing}"


# --- section 3: a unary elementwise primitive from the builder -------------------------------


def summed(f):
    return lambda x: dnp.sum(f(x))


@needs_builder
def test_the_unary_example_defines_sindg_and_cosdg_with_exact_derivatives(registry):
    ns = run(examples(3))
    sindg, cosdg, degree = ns["sindg"], ns["cosdg"], ns["DEGREE"]
    assert degree == np.pi / 180
    assert ns["sindg_p"].name == "sindg" and ns["sindg_p"].missing_rules() == []
    for name in ("sindg", "cosdg"):   # the builder made their sparsity rules: diagonal
        assert ns[f"{name}_p"].sparsity is not None
        assert_array_equal(dk.jacobian_sparsity(ns[name])(np.ones(3)).toarray(), np.eye(3))
    assert sindg.__module__ == "diffkit.scipy.special" and "degrees" in sindg.__doc__
    x = np.array([0.0, 30.0, 90.0, 135.0, -400.0])
    assert_array_equal(sindg(x), sc.sindg(x))
    # closed forms, both engines: d sindg = (pi/180) cosdg, d cosdg = -(pi/180) sindg
    for f, slope, curvature in ((sindg, degree * sc.cosdg(x), -degree ** 2 * sc.sindg(x)),
                                (cosdg, -degree * sc.sindg(x), -degree ** 2 * sc.cosdg(x))):
        forward, reverse = dk.jacfwd(f)(x), dk.jacrev(f)(x)
        assert_array_equal(forward, reverse)
        assert_allclose(np.diag(forward), slope, rtol=1e-7, atol=1e-20)
        assert_allclose(np.diag(dk.hessian(summed(f))(x)), curvature,
                        rtol=1e-7, atol=1e-20)
        check_grads(f, (np.array([10.0, 47.0, 100.0]),), order=2)
        check_vmap(f, (np.linspace(-200.0, 200.0, 12).reshape(3, 4),))
        # float32 stays float32
        grad32 = dk.grad(summed(f))(x.astype(np.float32))
        assert grad32.dtype == np.float32
        assert_allclose(grad32, slope, rtol=1e-5, atol=1e-6)


@needs_builder
def test_the_records_of_the_example_pass_the_generic_checker(registry):
    from records import domains, op_record
    from test_primitives import BATCH, axis_configs, batched_args

    public = run(examples(3))
    special = type("special", (), {"sindg": public["sindg"], "cosdg": public["cosdg"]})
    ns = {"R": [], "sp": special, "Domain": domains.Domain, "unary": op_record.unary,
          "UNARY": [((),), ((3,),), ((2, 3),)]}
    made = run(snippets("R +="), ns)["R"]
    assert [r.name for r in made] == ["sindg", "cosdg"]
    rng = np.random.default_rng(0)
    for record in made:
        for shapes in record.shapes:
            args = tuple(record.domain(i).sample(s, rng) for i, s in enumerate(shapes))
            check_grads(record.fun, args, order=record.order)
            assert_jacobians_agree(record.fun, *args)
            for in_axes in axis_configs(shapes):
                check_vmap(record.fun, batched_args(7, record, shapes, in_axes),
                           in_axes=in_axes)
    assert BATCH not in {d for r in made for case in r.shapes for s in case for d in s}


@needs_builder
@pytest.mark.filterwarnings("error::diffkit.errors.PerformanceWarning")
def test_the_edge_samples_of_the_example_pass_check_edge(registry, monkeypatch):
    import dataclasses

    from records import edge_sample
    from records.ops import RECORD_BY_NAME

    public = run(examples(3))
    for name in ("sindg", "cosdg"):
        record = dataclasses.replace(RECORD_BY_NAME.get("special_erf"),
                                     name=f"special_{name}", fun=public[name])
        monkeypatch.setitem(RECORD_BY_NAME, record.name, record)

    def sp(name, *args, **flags):   # as in tests/records/edges/special.py
        return edge_sample.edge(f"special_{name}", *args, **flags)

    samples = run(snippets("E +="), {"E": [], "sp": sp})["E"]
    assert [s.record for s in samples] == ["special_sindg", "special_cosdg"]
    for sample in samples:
        assert sample.reference is getattr(sc, sample.record.removeprefix("special_"))
        with np.errstate(all="ignore"):
            check_edge(sample.fun, sample.args, reference=sample.reference,
                       differentiable=bool(sample.differentiable), fd_side=sample.fd_side,
                       jacobian=sample.jacobian, hessian=sample.hessian,
                       second_order=sample.second_order, batching=sample.batching,
                       dtypes=sample.dtypes, value_rtol=sample.value_rtol, ulps=sample.ulps,
                       fd_rtol=sample.fd_rtol)


# --- section 4: batching rules ---------------------------------------------------------------


def test_the_quoted_batching_rules_are_the_code():
    excerpts = [(source, code) for blocks in SECTIONS.values() for source, code in blocks
                if source is not None]
    assert [source for source, _ in excerpts] == ["diffkit/ops/reductions.py",
                                                  "diffkit/ops/linalg.py"]
    for source, code in excerpts:
        assert code in (ROOT / source).read_text(), (
            f"docs/contributing.md quotes {source}, which no longer holds that code: update "
            "the excerpt and the explanation around it")


@pytest.mark.filterwarnings("error::diffkit.errors.PerformanceWarning")
def test_the_batching_example_runs_and_the_rules_do_what_the_guide_says():
    run(examples(4))
    xs = np.arange(24.0).reshape(4, 2, 3)
    # cumsum: the data axis moves to axis + 1 under the batch
    assert_array_equal(dk.vmap(lambda x: dnp.cumsum(x, axis=1))(xs), np.cumsum(xs, axis=2))
    # einsum: a fresh leading letter for the batched operand only
    b = np.arange(6.0).reshape(3, 2)
    assert_allclose(dk.vmap(lambda a: dnp.einsum("ij,jk->ik", a, b))(xs),
                    np.einsum("aij,jk->aik", xs, b), rtol=1e-15)
    # and the rules compose: vmap of a gradient through cumsum (d/dx sum(cumsum(x)**2))
    grads = dk.vmap(dk.grad(lambda x: dnp.sum(dnp.cumsum(x) ** 2)))(xs.reshape(4, 6))
    expected = [np.cumsum(2 * np.cumsum(x)[::-1])[::-1] for x in xs.reshape(4, 6)]
    assert_allclose(grads, expected, rtol=1e-7)


# --- section 5: a transformation ------------------------------------------------------------


def test_the_counting_transformation_runs_and_composes():
    ns = run(examples(5))
    count_flat, x = ns["count_flat"], np.array([0.5, -1.0])

    @dk.custom_jvp
    def square(x):
        return x * x

    @square.defjvp
    def square_jvp(primals, tangents):
        return square(primals[0]), 2 * primals[0] * tangents[0]

    (value,), counts = count_flat(lambda x: [dnp.sum(square(x))], [x])
    assert value == 1.25 and counts == {"square": 1, "sum": 1}   # process_custom counted it
    # under jvp the count trace is inner and the forward engine outer: values keep tangents
    out, tangent = dk.jvp(lambda x: count_flat(lambda x: [dnp.sum(square(x))], [x])[0][0],
                          (x,), (np.array([1.0, 2.0]),))
    assert_allclose(tangent, 2 * 0.5 * 1.0 + 2 * -1.0 * 2.0, rtol=1e-15)
    assert ns["CountTrace"].name == "count"


# --- sections 6 and 7: commands -------------------------------------------------------------


def test_the_test_and_benchmark_commands_name_real_options_and_files():
    commands = [line for line in TEXT.splitlines()
                if line.startswith(("python -m pytest", "python benchmarks/run.py"))]
    assert len(commands) >= 6
    run_py = (ROOT / "benchmarks" / "run.py").read_text()
    for command in commands:
        for option in re.findall(r"(--[a-z]+)", command.split("#")[0]):
            assert f'"{option}"' in run_py, f"benchmarks/run.py has no option {option}"
        for path in re.findall(r"(tests/\S+\.py)", command):
            assert (ROOT / path).is_file(), path
