"""Tests for diffkit.tree_util: flattening, structures, mapping, prefixes and transposes."""

from __future__ import annotations

import collections
import importlib.util
import pathlib
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st


def _load_tree_util():
    """Import diffkit.tree_util without needing the rest of the package to import."""
    try:
        from diffkit import tree_util
        return tree_util
    except ImportError:
        path = pathlib.Path(__file__).resolve().parents[1] / "diffkit" / "tree_util.py"
        spec = importlib.util.spec_from_file_location("_diffkit_tree_util_standalone", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module


tu = _load_tree_util()

Point = collections.namedtuple("Point", ["x", "y"])


class Box:
    """A custom node: one child (``value``) and static data (``label``)."""

    def __init__(self, value, label):
        self.value, self.label = value, label

    def __eq__(self, other):
        return type(other) is Box and self.value == other.value and self.label == other.label

    def __repr__(self):
        return f"Box({self.value!r}, {self.label!r})"


tu.register_pytree_node(Box, lambda b: ((b.value,), b.label), lambda label, ch: Box(ch[0], label))


class Opaque:
    """An unregistered object: a leaf."""


# --- flatten / unflatten ---------------------------------------------------------------------

def test_round_trip_nested():
    a, b = np.arange(3.0), np.ones((2, 2))
    tree = (a, [1.0, b], {"z": 2, "a": (3, None)}, Point(4, [5]))
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves[0] is a and leaves[2] is b
    assert leaves[1] == 1.0 and leaves[3:] == [3, 2, 4, 5]
    assert treedef.num_leaves == 7
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert type(rebuilt) is tuple and type(rebuilt[1]) is list and type(rebuilt[3]) is Point
    assert rebuilt[0] is a and rebuilt[1][1] is b
    assert rebuilt[2] == {"a": (3, None), "z": 2}
    assert rebuilt[3] == Point(4, [5])


def test_flat_tuple_fast_path_matches_general_path():
    x, y = np.zeros(2), np.ones(3)
    leaves, treedef = tu.tree_flatten((x, y, 1.5))
    assert len(leaves) == 3 and leaves[0] is x and leaves[1] is y and leaves[2] == 1.5
    general = tu.tree_structure((x, y, 1.5), is_leaf=lambda _: False)
    assert treedef == general and hash(treedef) == hash(general)
    assert repr(treedef) == "PyTreeDef((*, *, *))"
    assert tu.tree_unflatten(treedef, [1, 2, 3]) == (1, 2, 3)


def test_dict_children_in_sorted_key_order():
    leaves, treedef = tu.tree_flatten({"b": 1, "c": 2, "a": 0})
    assert leaves == [0, 1, 2]
    assert repr(treedef) == "PyTreeDef({'a': *, 'b': *, 'c': *})"
    # insertion order does not matter for the structure
    assert treedef == tu.tree_structure({"a": 5, "c": 6, "b": 7})
    assert list(tu.tree_unflatten(treedef, [7, 8, 9]).items()) == [("a", 7), ("b", 8), ("c", 9)]


def test_dict_with_unsortable_keys_raises():
    with pytest.raises(TypeError, match="sortable"):
        tu.tree_flatten({1: "a", "b": 2})


def test_none_is_an_empty_node_not_a_leaf():
    leaves, treedef = tu.tree_flatten(None)
    assert leaves == [] and treedef.num_leaves == 0
    assert not tu.treedef_is_leaf(treedef)
    assert tu.tree_unflatten(treedef, []) is None
    leaves, treedef = tu.tree_flatten((1, None, [None, 2]))
    assert leaves == [1, 2]
    assert repr(treedef) == "PyTreeDef((*, None, [None, *]))"
    assert tu.tree_unflatten(treedef, ["p", "q"]) == ("p", None, [None, "q"])


def test_namedtuple_is_a_node():
    leaves, treedef = tu.tree_flatten(Point(1, (2, 3)))
    assert leaves == [1, 2, 3]
    assert repr(treedef) == "PyTreeDef(Point(x=*, y=(*, *)))"
    rebuilt = tu.tree_unflatten(treedef, [4, 5, 6])
    assert type(rebuilt) is Point and rebuilt == Point(4, (5, 6))
    # a namedtuple and a plain tuple of the same arity are different structures
    assert treedef != tu.tree_structure((1, (2, 3)))


def test_leaves_arrays_scalars_strings_objects():
    obj = Opaque()
    for leaf in (np.ones(3), np.float32(1), 2.0, 3, "s", obj, np.array(4.0)):
        leaves, treedef = tu.tree_flatten(leaf)
        assert len(leaves) == 1 and leaves[0] is leaf
        assert tu.treedef_is_leaf(treedef) and repr(treedef) == "PyTreeDef(*)"


def test_custom_registered_node():
    tree = [Box((1, 2), "tag"), 3]
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [1, 2, 3]
    assert repr(treedef) == "PyTreeDef([Box['tag']((*, *)), *])"
    assert tu.tree_unflatten(treedef, [7, 8, 9]) == [Box((7, 8), "tag"), 9]
    # aux data takes part in equality
    assert treedef != tu.tree_structure([Box((1, 2), "other"), 3])
    assert treedef == tu.tree_structure([Box((5, 6), "tag"), 0])
    with pytest.raises(ValueError, match="already registered"):
        tu.register_pytree_node(Box, lambda b: ((), None), lambda a, c: None)


def test_is_leaf_stops_descent():
    tree = {"a": (1, 2), "b": [3]}
    leaves, treedef = tu.tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), 3]
    assert tu.tree_unflatten(treedef, ["A", "B"]) == {"a": "A", "b": ["B"]}


def test_unflatten_wrong_number_of_leaves():
    treedef = tu.tree_structure((1, [2, 3]))
    with pytest.raises(ValueError, match=r"expects 3 leaves, got 2"):
        tu.tree_unflatten(treedef, [1, 2])
    with pytest.raises(ValueError, match=r"expects 3 leaves, got 4"):
        tu.tree_unflatten(treedef, iter([1, 2, 3, 4]))


def test_treedef_equality_hash_and_children():
    d1 = tu.tree_structure((1, [2, 3], {"a": 4}))
    d2 = tu.tree_structure(("p", ["q", "r"], {"a": "s"}))
    assert d1 == d2 and hash(d1) == hash(d2) and len({d1, d2}) == 1
    assert repr(d1) == "PyTreeDef((*, [*, *], {'a': *}))"
    assert d1 != tu.tree_structure((1, (2, 3), {"a": 4}))
    assert d1 != tu.tree_structure((1, [2, 3], {"b": 4}))
    assert d1 != tu.tree_structure((1, [2, 3, 4], {"a": 4}))
    assert d1 != "not a treedef"
    kids = tu.treedef_children(d1)
    assert [repr(k) for k in kids] == ["PyTreeDef(*)", "PyTreeDef([*, *])", "PyTreeDef({'a': *})"]
    assert repr(tu.tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tu.tree_structure(())) == "PyTreeDef(())"


# --- tree_map ----------------------------------------------------------------------------------

def test_tree_map_single_and_multiple_trees():
    tree = {"w": np.ones(2), "b": (1.0, None)}
    out = tu.tree_map(lambda x: x * 2, tree)
    np.testing.assert_array_equal(out["w"], [2.0, 2.0])
    assert out["b"] == (2.0, None)
    summed = tu.tree_map(lambda x, y, z: x + y + z, (1, [2]), (10, [20]), (100, [200]))
    assert summed == (111, [222])


def test_tree_map_with_prefix_structure_passes_subtrees():
    out = tu.tree_map(lambda k, sub: (k, sub), ("a", "b"), ([1, 2], {"x": 3}))
    assert out == (("a", [1, 2]), ("b", {"x": 3}))


def test_tree_map_structure_mismatch_errors():
    with pytest.raises(ValueError, match=r"expected a tuple with 2 children, got a tuple with 3"):
        tu.tree_map(lambda x, y: x, (1, 2), (1, 2, 3))
    with pytest.raises(ValueError, match=r"at \[1\], expected a list with 1 children"):
        tu.tree_map(lambda x, y: x, (1, [2]), (1, (2,)))
    with pytest.raises(ValueError, match=r"expected a dict with keys \['a'\], got a dict"):
        tu.tree_map(lambda x, y: x, {"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match=r"got a leaf of type int"):
        tu.tree_map(lambda x, y: x, [1, [2]], [1, 2])
    # the message names both structures
    with pytest.raises(ValueError, match=r"PyTreeDef\(\(\*, \*, \*\)\).*PyTreeDef\(\(\*, \*\)\)"):
        tu.tree_map(lambda x, y: x, (1, 2), (1, 2, 3))


# --- broadcast_prefix ----------------------------------------------------------------------------

def test_broadcast_prefix_int():
    full = (np.ones(2), {"a": np.ones(3), "b": [np.ones(1), None]})
    assert tu.broadcast_prefix(0, full) == [0, 0, 0]
    assert tu.broadcast_prefix(1, np.ones(4)) == [1]


def test_broadcast_prefix_none_is_a_prefix_leaf():
    full = ({"a": 1, "b": 2}, 3)
    assert tu.broadcast_prefix(None, full) == [None, None, None]
    assert tu.broadcast_prefix((None, 0), full) == [None, None, 0]
    # None in the full tree is an empty node: it contributes no entries
    assert tu.broadcast_prefix((0, None), (1, None)) == [0]


def test_broadcast_prefix_tuple_and_dict():
    full = ([1, 2], {"x": 3, "y": (4, 5)}, 6)
    assert tu.broadcast_prefix((0, 1, None), full) == [0, 0, 1, 1, 1, None]
    assert tu.broadcast_prefix(([0, 1], {"x": None, "y": 2}, 3), full) == [0, 1, None, 2, 2, 3]
    assert tu.broadcast_prefix({"b": 1, "a": 0}, {"a": (1, 2), "b": 3}) == [0, 0, 1]
    assert tu.broadcast_prefix(Point(0, None), Point([1, 2], 3)) == [0, 0, None]


def test_broadcast_prefix_is_leaf():
    full = ((1, 2), [3])
    out = tu.broadcast_prefix(("p", "q"), full, is_leaf=lambda x: isinstance(x, list))
    assert out == ["p", "p", "q"]


def test_broadcast_prefix_mismatch_errors():
    with pytest.raises(ValueError) as info:
        tu.broadcast_prefix((0, 0), (1, 2, 3))
    msg = str(info.value)
    assert "PyTreeDef((*, *))" in msg and "PyTreeDef((*, *, *))" in msg
    assert "2 children" in msg and "3 children" in msg
    with pytest.raises(ValueError, match=r"at \[1\]\['b'\], expected a tuple"):
        tu.broadcast_prefix((0, {"b": (0, 1)}), (1, {"b": 2}))
    with pytest.raises(ValueError, match=r"expected a dict with keys \['a'\]"):
        tu.broadcast_prefix({"a": 0}, {"a": 1, "b": 2})
    with pytest.raises(ValueError, match="expected a list"):
        tu.broadcast_prefix([0, 1], (1, 2))


# --- tree_transpose ------------------------------------------------------------------------------

def test_tree_transpose_dict_of_tuples():
    outer = tu.tree_structure({"out1": 0, "out2": 0})
    inner = tu.tree_structure((0, [0]))
    tree = {"out1": ("A", ["B"]), "out2": ("C", ["D"])}
    out = tu.tree_transpose(outer, inner, tree)
    assert out == ({"out1": "A", "out2": "C"}, [{"out1": "B", "out2": "D"}])
    # transposing back gives the original
    assert tu.tree_transpose(inner, outer, out) == tree


def test_tree_transpose_with_leaf_outer_or_inner():
    leaf = tu.tree_structure(0)
    pair = tu.tree_structure((0, 0))
    assert tu.tree_transpose(leaf, pair, (1, 2)) == (1, 2)
    assert tu.tree_transpose(pair, leaf, (1, 2)) == (1, 2)
    empty = tu.tree_structure(())
    assert tu.tree_transpose(empty, pair, ()) == ((), ())


def test_tree_transpose_mismatch():
    outer = tu.tree_structure([0, 0])
    inner = tu.tree_structure((0, 0))
    with pytest.raises(ValueError, match=r"to have structure PyTreeDef\(\(\*, \*\)\)"):
        tu.tree_transpose(outer, inner, [(1, 2), (3,)])
    with pytest.raises(ValueError, match="expected a list"):
        tu.tree_transpose(outer, inner, ((1, 2), (3, 4)))


# --- property: round trips over random nested structures ----------------------------------------

_leaves = st.one_of(
    st.integers(), st.floats(allow_nan=False), st.text(max_size=3), st.booleans(),
)


def _nodes(children):
    return st.one_of(
        st.lists(children, max_size=4).map(tuple),
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=3), children, max_size=4),
        st.tuples(children, children).map(lambda xy: Point(*xy)),
        st.tuples(children, st.sampled_from(["u", "v"])).map(lambda cl: Box(*cl)),
        st.none(),
    )


_trees = st.recursive(_leaves, _nodes, max_leaves=20)


@given(_trees)
def test_round_trip_property(tree):
    leaves, treedef = tu.tree_flatten(tree)
    assert treedef.num_leaves == len(leaves)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert rebuilt == tree
    assert tu.tree_structure(rebuilt) == treedef
    assert hash(tu.tree_structure(rebuilt)) == hash(treedef)
    # leaves come back as the same objects, in the same order
    assert all(a is b for a, b in zip(tu.tree_leaves(rebuilt), leaves))
    # relabelling leaves keeps the structure; tree_map agrees with flatten/unflatten
    relabelled = tu.tree_unflatten(treedef, range(len(leaves)))
    assert tu.tree_leaves(relabelled) == list(range(len(leaves)))
    assert tu.tree_map(lambda x: x, tree) == tree
    # a prefix leaf broadcasts to every leaf; the full structure is its own prefix
    assert tu.broadcast_prefix(7, tree) == [7] * len(leaves)
    assert tu.broadcast_prefix(relabelled, tree) == list(range(len(leaves)))
