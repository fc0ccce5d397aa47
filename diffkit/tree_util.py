"""Pytrees: nested containers of arrays, split into a flat list of leaves and a structure.

A pytree is either a *leaf* or a *node* with children. Nodes are tuples, lists, dicts
(children in sorted key order), ``None`` (a node with no children), namedtuples (any tuple
subclass with ``_fields``) and the types given to :func:`register_pytree_node`. Everything
else -- arrays, scalars, arbitrary objects -- is a leaf.

``tree_flatten(tree)`` returns ``(leaves, treedef)``; ``tree_unflatten(treedef, leaves)``
rebuilds the tree. A :class:`PyTreeDef` is immutable, hashable and compares with ``==``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "PyTreeDef", "register_pytree_node", "tree_flatten", "tree_unflatten", "tree_map",
    "tree_leaves", "tree_structure", "treedef_children", "treedef_is_leaf",
    "broadcast_prefix", "tree_transpose", "flatten_as",
]


class _Node:
    """How one container type splits into ``(children, aux_data)`` and is rebuilt."""

    __slots__ = ("type", "flatten", "unflatten")

    def __init__(self, nodetype: type, flatten: Callable[..., Any],
                 unflatten: Callable[..., Any]) -> None:
        self.type, self.flatten, self.unflatten = nodetype, flatten, unflatten


_registry: dict[type, _Node] = {}
_namedtuple_nodes: dict[type, _Node] = {}


def register_pytree_node(nodetype: type[Any],
                         flatten: Callable[[Any], tuple[Iterable[Any], Any]],
                         unflatten: Callable[[Any, Iterable[Any]], Any]) -> None:
    """Make ``nodetype`` a pytree node (exact type match; subclasses stay leaves).

    ``flatten(obj) -> (children, aux_data)``; ``unflatten(aux_data, children) -> obj``.
    ``aux_data`` is the static part of the node: it should be hashable and comparable with
    ``==``, because it takes part in the equality of tree structures.

    Examples:
        >>> from diffkit.tree_util import register_pytree_node, tree_flatten, tree_leaves
        >>> class Layer:
        ...     def __init__(self, weight, name):
        ...         self.weight, self.name = weight, name
        >>> register_pytree_node(Layer, lambda layer: ((layer.weight,), layer.name),
        ...                      lambda name, children: Layer(children[0], name))
        >>> tree_flatten(Layer(np.ones(2), "dense"))
        ([array([1., 1.])], PyTreeDef(Layer['dense'](*)))
        >>> dk.grad(lambda layer: dnp.sum(layer.weight ** 2))(Layer(np.ones(2), "dense")).weight
        array([2., 2.])

        Subclasses stay leaves, and a type is registered once:

        >>> class Sublayer(Layer):
        ...     pass
        >>> len(tree_leaves(Sublayer(np.ones(2), "sub")))
        1
        >>> register_pytree_node(Layer, None, None)
        Traceback (most recent call last):
            ...
        ValueError: Layer is already registered as a pytree node
    """
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__qualname__} is already registered as a pytree node")
    _registry[nodetype] = _Node(nodetype, flatten, unflatten)


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError:
        raise TypeError(f"pytree dict keys must be sortable, got keys {list(d)!r}") from None


register_pytree_node(tuple, lambda t: (t, None), lambda _, ch: tuple(ch))
register_pytree_node(list, lambda t: (t, None), lambda _, ch: list(ch))
register_pytree_node(type(None), lambda _: ((), None), lambda _a, _c: None)
def _flatten_dict(d: dict) -> tuple[tuple, tuple]:
    keys = _sorted_keys(d)
    return tuple(d[k] for k in keys), keys


register_pytree_node(dict, _flatten_dict, lambda keys, ch: dict(zip(keys, ch)))


def _node_of(t: type) -> _Node | None:
    """The node record for type ``t``, or None when values of ``t`` are leaves."""
    node = _registry.get(t)
    if node is None and issubclass(t, tuple) and hasattr(t, "_fields"):
        node = _namedtuple_nodes.get(t)
        if node is None:
            node = _namedtuple_nodes[t] = _Node(t, lambda x: (x, None), lambda _, ch: t(*ch))
    return node


def _aux_eq(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


class _Mismatch(ValueError):
    """Raised by ``PyTreeDef._up_to``; the public callers turn it into a full message."""


def _describe(node: _Node | None, aux: Any, n: int, tree: Any = None) -> str:
    if node is None:
        return f"a leaf of type {type(tree).__name__}"
    if node.type is dict:
        return f"a dict with keys {list(aux)!r}"
    if node.type is type(None):
        return "None"
    return f"a {node.type.__name__} with {n} children"


class PyTreeDef:
    """The structure of a pytree: node types, static data and arity, with leaves as holes.

    Examples:
        >>> from diffkit.tree_util import tree_structure
        >>> treedef = tree_structure({"a": 1.0, "b": (2.0, 3.0)})
        >>> treedef, treedef.num_leaves
        (PyTreeDef({'a': *, 'b': (*, *)}), 3)
        >>> treedef.unflatten(["x", "y", "z"])
        {'a': 'x', 'b': ('y', 'z')}
        >>> treedef == tree_structure({"a": 0, "b": (0, 0)}), len({treedef: 1, treedef: 2})
        (True, 1)
        >>> treedef.flatten_up_to({"a": [7, 8], "b": (2, 3)})    # subtrees at the leaves
        [[7, 8], 2, 3]
    """

    __slots__ = ("node", "aux", "_children", "num_leaves", "_flat", "_hash")

    def __init__(self, node: _Node | None, aux: Any, children: Iterable[PyTreeDef]) -> None:
        self.node, self.aux, self._children = node, aux, tuple(children)
        self.num_leaves = 1 if node is None else sum(c.num_leaves for c in self._children)
        self._flat = node is not None and all(c.node is None for c in self._children)
        self._hash = None

    def children(self) -> list[PyTreeDef]:
        """The treedefs of this node's immediate children (empty for a leaf)."""
        return list(self._children)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Rebuild a tree of this structure from ``leaves`` (exactly ``num_leaves`` of them)."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"tree_unflatten: {self!r} expects {self.num_leaves} leaves, "
                             f"got {len(leaves)}")
        if self._flat:
            return self.node.unflatten(self.aux, leaves)
        if self.node is None:
            return leaves[0]
        return self._build(iter(leaves))

    def _build(self, it):
        if self.node is None:
            return next(it)
        return self.node.unflatten(self.aux, [c._build(it) for c in self._children])

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of ``tree`` found at the leaves of this (prefix) structure.

        Raises ValueError naming both structures and where they differ.
        """
        out: list[Any] = []
        try:
            self._up_to(tree, out, "")
        except _Mismatch as e:
            raise ValueError(f"tree structure {tree_structure(tree)!r} does not match "
                             f"{self!r}: {e}") from None
        return out

    def _up_to(self, tree, out, path, exact=None):
        """Append the subtrees of ``tree`` at this structure's leaves to ``out``; with
        ``exact`` (an ``is_leaf`` test), each of them must be a leaf too."""
        if self.node is None:
            node = None if exact is None or exact(tree) else _node_of(type(tree))
            if node is not None:
                children, aux = node.flatten(tree)
                raise _Mismatch(f"at {path or 'the root'}, expected a leaf, got "
                                f"{_describe(node, aux, len(tuple(children)))}")
            out.append(tree)
            return
        node = _node_of(type(tree))
        children, aux = node.flatten(tree) if node is not None else ((), None)
        children = tuple(children)
        if (node is None or node.type is not self.node.type or len(children) != len(self._children)
                or not _aux_eq(aux, self.aux)):
            raise _Mismatch(f"at {path or 'the root'}, expected "
                            f"{_describe(self.node, self.aux, len(self._children))}, "
                            f"got {_describe(node, aux, len(children), tree)}")
        if node.type is dict:
            steps = [f"[{k!r}]" for k in aux]
        elif node is _namedtuple_nodes.get(node.type):
            steps = [f".{f}" for f in node.type._fields]
        else:
            steps = [f"[{i}]" for i in range(len(children))]
        for c, sub, step in zip(self._children, children, steps):
            c._up_to(sub, out, path + step, exact)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        if self is other:
            return True
        if self.num_leaves != other.num_leaves or (self.node is None) != (other.node is None):
            return False
        return self.node is None or (
            self.node.type is other.node.type and len(self._children) == len(other._children)
            and _aux_eq(self.aux, other.aux) and self._children == other._children)

    def __hash__(self) -> int:
        if self._hash is None:
            try:
                aux_hash = hash(self.aux)
            except TypeError:
                aux_hash = 0
            self._hash = hash((self.node and self.node.type, aux_hash, self._children))
        return self._hash

    def __repr__(self) -> str:
        return f"PyTreeDef({self._str()})"

    def _str(self) -> str:
        if self.node is None:
            return "*"
        parts = [c._str() for c in self._children]
        t = self.node.type
        if t is tuple:
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        if t is list:
            return "[" + ", ".join(parts) + "]"
        if t is dict:
            return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(self.aux, parts)) + "}"
        if t is type(None):
            return "None"
        if self.node is _namedtuple_nodes.get(t):
            return f"{t.__name__}(" + ", ".join(f"{f}={p}" for f, p in zip(t._fields, parts)) + ")"
        return f"{t.__name__}[{self.aux!r}](" + ", ".join(parts) + ")"


_LEAF = PyTreeDef(None, None, ())
_flat_tuple_defs: dict[int, PyTreeDef] = {}


def _flat_tuple_def(n: int) -> PyTreeDef:
    """The (shared, cached) structure of a tuple of ``n`` leaves."""
    treedef = _flat_tuple_defs.get(n)
    if treedef is None:
        treedef = _flat_tuple_defs[n] = PyTreeDef(_registry[tuple], None, (_LEAF,) * n)
    return treedef


def _flatten(tree, leaves, is_leaf) -> PyTreeDef:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF
    node = _node_of(type(tree))
    if node is None:
        leaves.append(tree)
        return _LEAF
    children, aux = node.flatten(tree)
    return PyTreeDef(node, aux, [_flatten(c, leaves, is_leaf) for c in children])


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    """Split ``tree`` into a list of leaves (depth first, left to right) and its structure.

    ``is_leaf(x) -> bool``, if given, stops the descent at any ``x`` for which it is true.

    Examples:
        >>> from diffkit.tree_util import tree_flatten
        >>> tree_flatten({"b": (1, 2), "a": [3, None]})    # dict keys in sorted order
        ([3, 1, 2], PyTreeDef({'a': [*, None], 'b': (*, *)}))
        >>> tree_flatten([1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple))
        ([1, (2, 3)], PyTreeDef([*, *]))
        >>> tree_flatten({1: "a", "b": 2})
        Traceback (most recent call last):
            ...
        TypeError: pytree dict keys must be sortable, got keys [1, 'b']
    """
    if is_leaf is None:
        if type(tree) is tuple:  # fast path: a flat tuple of arrays
            for x in tree:
                t = type(x)
                if t in _registry or (issubclass(t, tuple) and hasattr(t, "_fields")):
                    break
            else:
                return list(tree), _flat_tuple_def(len(tree))
        elif _node_of(type(tree)) is None:  # fast path: one array (or tracer) on its own
            return [tree], _LEAF
    leaves: list = []
    return leaves, _flatten(tree, leaves, is_leaf)


def flatten_as(treedef: PyTreeDef, tree: Any,
               is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, which must have exactly the structure ``treedef``.

    ``is_leaf`` as in :func:`tree_flatten` (e.g. to let ``None`` stand for a leaf); a
    ``None`` node of ``treedef`` still matches ``None``. Raises ValueError naming both
    structures and the path where they first differ.

    Examples:
        >>> from diffkit.tree_util import flatten_as, tree_structure
        >>> flatten_as(tree_structure((0, [0])), (1, [2]))
        [1, 2]
        >>> flatten_as(tree_structure((0, 0)), (1, None), is_leaf=lambda x: x is None)
        [1, None]
        >>> flatten_as(tree_structure((0, [0])), (1, (2,)))
        Traceback (most recent call last):
            ...
        ValueError: tree structure PyTreeDef((*, (*,))) does not match PyTreeDef((*, [*])): ...
    """
    leaves, got = tree_flatten(tree, is_leaf)
    if got == treedef:  # the common case: one flatten and one comparison
        return leaves
    out: list = []
    try:
        treedef._up_to(tree, out, "", is_leaf or _never)
    except _Mismatch as e:
        raise ValueError(f"tree structure {got!r} does not match {treedef!r}: {e}") from None
    return out  # differs only where is_leaf let a leaf stand for a None node


def _never(_: Any) -> bool:
    return False


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a tree of structure ``treedef`` from ``leaves``; ValueError on a wrong count.

    Examples:
        >>> from diffkit.tree_util import tree_flatten, tree_unflatten
        >>> leaves, treedef = tree_flatten({"a": [3, None], "b": (1, 2)})
        >>> tree_unflatten(treedef, [10, 20, 30])
        {'a': [10, None], 'b': (20, 30)}
        >>> tree_unflatten(treedef, [10, 20])
        Traceback (most recent call last):
            ...
        ValueError: tree_unflatten: PyTreeDef({'a': [*, None], 'b': (*, *)}) expects 3 leaves, got 2
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree`` in flattening order.

    Examples:
        >>> from diffkit.tree_util import tree_leaves
        >>> tree_leaves({"b": (1, 2), "a": [3, None]})
        [3, 1, 2]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The :class:`PyTreeDef` of ``tree``.

    Examples:
        >>> from collections import namedtuple
        >>> from diffkit.tree_util import tree_structure
        >>> Point = namedtuple("Point", "x y")
        >>> tree_structure((1, [2, Point(3, 4)]))
        PyTreeDef((*, [*, Point(x=*, y=*)]))
    """
    return tree_flatten(tree, is_leaf)[1]


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The treedefs of the root node's immediate children.

    Examples:
        >>> from diffkit.tree_util import tree_structure, treedef_children
        >>> treedef_children(tree_structure((1, [2, 3])))
        [PyTreeDef(*), PyTreeDef([*, *])]
    """
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` is the structure of a single leaf.

    Examples:
        >>> from diffkit.tree_util import tree_structure, treedef_is_leaf
        >>> treedef_is_leaf(tree_structure(np.ones(3))), treedef_is_leaf(tree_structure((1.0,)))
        (True, False)
    """
    return treedef.node is None


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leafwise: ``f(leaf, *matching entries of rest)``, keeping ``tree``'s shape.

    Each tree in ``rest`` must have ``tree``'s structure, or have it as a prefix (then ``f``
    gets the whole subtree found where ``tree`` has a leaf).

    Examples:
        >>> from diffkit.tree_util import tree_map
        >>> tree_map(lambda x, y: x + y, (1, {"a": 2}), (10, {"a": 20}))
        (11, {'a': 22})
        >>> tree_map(lambda x, y: (x, y), (1, 2), ([5, 6], 7))    # [5, 6] where tree has a leaf
        ((1, [5, 6]), (2, 7))
        >>> tree_map(lambda x, y: x + y, (1, 2), (1, 2, 3))
        Traceback (most recent call last):
            ...
        ValueError: tree structure PyTreeDef((*, *, *)) does not match PyTreeDef((*, *)): ...
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    columns = [leaves] + [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(*columns)])


def broadcast_prefix(prefix_tree: Any, full_tree: Any,
                     is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """One entry of ``prefix_tree`` per leaf of ``full_tree``.

    A leaf of the prefix applies to every leaf of the subtree below it, so
    ``broadcast_prefix((0, None), (x, {'a': y, 'b': z}))`` is ``[0, None, None]``. ``None`` in
    the prefix is a leaf (as in vmap's ``in_axes``: "not mapped"); ``is_leaf`` marks further
    prefix leaves and is also used to count the leaves of ``full_tree``.

    Examples:
        >>> from diffkit.tree_util import broadcast_prefix
        >>> broadcast_prefix((0, None), (np.ones(2), {"a": 2.0, "b": 3.0}))
        [0, None, None]
        >>> broadcast_prefix((0, None, 1), (np.ones(2), {"a": 2.0, "b": 3.0}))
        Traceback (most recent call last):
            ...
        ValueError: pytree prefix PyTreeDef((*, *, *)) does not match the structure ...
    """
    prefix_is_leaf = _is_none if is_leaf is None else (lambda x: x is None or is_leaf(x))
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, prefix_is_leaf)
    subtrees: list = []
    try:
        prefix_def._up_to(full_tree, subtrees, "")
    except _Mismatch as e:
        raise ValueError(f"pytree prefix {prefix_def!r} does not match the structure "
                         f"{tree_structure(full_tree, is_leaf)!r}: {e}") from None
    out: list = []
    for p, sub in zip(prefix_leaves, subtrees):
        out.extend([p] * tree_structure(sub, is_leaf).num_leaves)
    return out


def _is_none(x: Any) -> bool:
    return x is None


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef, tree: Any) -> Any:
    """Turn a tree of structure outer-of-inner into one of structure inner-of-outer.

    E.g. a Jacobian ``{'out1': (dA, dB), 'out2': (dC, dD)}`` with outer ``{...}`` and inner
    ``(*, *)`` becomes ``({'out1': dA, 'out2': dC}, {'out1': dB, 'out2': dD})``.

    Examples:
        >>> from diffkit.tree_util import tree_structure, tree_transpose
        >>> outer = tree_structure({"out1": 0, "out2": 0})
        >>> inner = tree_structure((0, 0))
        >>> tree_transpose(outer, inner, {"out1": ("dA", "dB"), "out2": ("dC", "dD")})
        ({'out1': 'dA', 'out2': 'dC'}, {'out1': 'dB', 'out2': 'dD'})
    """
    columns = []
    for sub in outer_treedef.flatten_up_to(tree):
        leaves, treedef = tree_flatten(sub)
        if treedef != inner_treedef:
            raise ValueError(f"tree_transpose: expected every subtree at a leaf of "
                             f"{outer_treedef!r} to have structure {inner_treedef!r}, "
                             f"got {treedef!r}")
        columns.append(leaves)
    return inner_treedef.unflatten(
        [outer_treedef.unflatten([col[j] for col in columns])
         for j in range(inner_treedef.num_leaves)])
