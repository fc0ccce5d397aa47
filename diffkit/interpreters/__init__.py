"""The engines that give primitives a meaning beyond plain NumPy: forward mode (dual numbers,
``forward.py``), reverse mode (a tape, ``reverse.py``) and batching (``batching.py``); also
staging for ``jit`` and ``linearize`` (``staging.py``, into the IR of ``ir.py``), sparsity
detection (``sparsity.py``) and Taylor mode (``taylor.py``, and ``collapsed.py`` for the
differential operators).

Every engine has the same three parts, and a new transformation (a staging interpreter, say)
follows the same shape:

1. A ``Tracer`` subclass (``diffkit.core.trace``) holding what the engine tracks for one
   value: a primal and its tangent, a primal and its tape slot, a batched value. It answers
   ``shape`` and ``dtype`` as the value it stands for (``PrimalTracer`` does this for a
   tracer that keeps its value as ``primal``).
2. A ``Trace`` subclass with a ``name`` (used in error messages) and two methods that
   ``bind`` calls when one of its tracers is the innermost among a primitive's arguments:

   - ``process(prim, args, params)``: unwrap its own tracers among ``args`` (the others are
     constants or values of enclosing transformations), run the primitive's rule for this
     engine (``prim.jvp``, a tape entry for ``prim.vjp``, ``prim.batch``) on the unwrapped
     values, binding primitives again so enclosing transformations see them, and wrap the
     results (a tuple when ``prim.multiple_results``);
   - ``process_custom(call, args)``: the same for a function with user-defined rules (a
     call record from ``diffkit.custom``), returning a tuple of outputs.

3. A ``*_flat`` entry point (``jvp_flat``, ``vjp_flat``, ``stage_flat``/``linearize_flat``,
   ``batch_flat``, ``jet_flat``, ``collapsed_flat``): it opens a trace with ``new_trace``,
   wraps the flat list of inputs in tracers, calls a function of flat lists, unwraps the
   outputs (an output that is not its own tracer does not depend on the inputs: its
   derivative is a symbolic zero, or it is unbatched), checks that no traced value of a
   finished transformation escapes, and returns flat lists. Symbolic zeros stay symbolic:
   the caller materialises them where it needs arrays.

``diffkit.api`` puts pytrees, ``argnums``, ``has_aux`` and the argument checks around these
entry points; ``diffkit.custom`` calls them directly on flat lists.
"""
