"""Escape diagnosis: where a traced value left diffkit, and what to write there instead.

NumPy's C code calls the conversion guards (``__array__``, ``__float__`` ...; see
``conversions.py``) directly, so the frame right above a guard is the Python code whose
instruction asked for the conversion: the user's own line (``np.asarray(t)``, ``float(t)``,
``y[i] = t``) or a NumPy/SciPy function that coerces its input. ``Site`` finds the first
frame outside diffkit, NumPy and SciPy (the user's line); ``array_escape``,
``scalar_escape`` and ``in_place_call_error`` pick the fix from what that instruction was
and name the replacement in ``diffkit.numpy`` or ``diffkit.scipy`` when there is one.
"""

import ast
import builtins
import dis
import importlib
import inspect
import linecache
import sys

import numpy as np

from .. import numpy as dnp
from ..core.concrete import concrete_value
from ..core.source_info import first_outside
from ..errors import NoRuleError, TracerConversionError

_LIBRARIES = frozenset({"diffkit", "numpy", "scipy", "pandas"})


def _package(frame):
    return (frame.f_globals.get("__name__") or "").partition(".")[0]


def _in_library_module(frame):
    return _package(frame) in _LIBRARIES


_NO_POSITIONS = (None, None, None, None)
STORES = frozenset({"STORE_SUBSCR", "STORE_SLICE"})   # y[i] = t; y[a:b] = t (3.12+)


def instruction(frame):
    """``(opname, (line, end_line, col, end_col))`` of the instruction ``frame`` executes
    (the positions are all None before Python 3.11)."""
    code, offset = frame.f_code, frame.f_lasti
    if offset < 0:
        return None, _NO_POSITIONS
    opcodes = code.co_code
    # a Python-level call leaves f_lasti on the call's inline cache entries
    while offset > 0 and dis.opname[opcodes[offset]] == "CACHE":
        offset -= 2
    opname = dis.opname[opcodes[offset]]
    if not hasattr(code, "co_positions"):
        return opname, _NO_POSITIONS
    return opname, list(code.co_positions())[offset // 2]


def _source(filename, positions):
    """The source text spanned by ``positions`` (columns count UTF-8 bytes), or None."""
    line, end_line, col, end_col = positions
    if None in positions:
        return None
    lines = [linecache.getline(filename, n).encode() for n in range(line, end_line + 1)]
    if line == end_line:
        return lines[0][col:end_col].decode(errors="replace")
    return b"".join([lines[0][col:], *lines[1:-1], lines[-1][:end_col]]).decode(errors="replace")


def _parse(text):
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, AttributeError):
        return None


def _calls_in_order(node):
    """The calls in ``node`` in evaluation order (arguments before the call using them)."""
    for child in ast.iter_child_nodes(node):
        yield from _calls_in_order(child)
    if isinstance(node, ast.Call):
        yield node


def _call_on_line(frame):
    """Before Python 3.11 there are no column positions: take the first call on the frame's
    line that runs C code (a builtin, ufunc or NumPy dispatcher, not a Python function) or
    one of the conversion methods."""
    statement = _parse_statement(linecache.getline(frame.f_code.co_filename, frame.f_lineno))
    for node in _calls_in_order(statement) if statement is not None else ():
        callee = _resolve(node.func, frame)
        if callee is not None and not inspect.isfunction(callee):
            return callee, node
        if isinstance(node.func, ast.Attribute) and node.func.attr in _CONVERSION_METHODS:
            return callee, node
    return None, None


_CONVERSION_METHODS = frozenset({"item", "tolist", "__array__", "__float__", "__int__"})


def _parse_statement(text):
    try:
        return ast.parse(text.strip()).body[0]
    except (SyntaxError, ValueError, AttributeError, IndexError):
        return None


def _resolve(node, frame):
    """The object a dotted name (``math.sin``, ``np.asarray``) stands for in ``frame``, or
    None. Only names and attributes are looked up: nothing is called."""
    if isinstance(node, ast.Name):
        for namespace in (frame.f_locals, frame.f_globals, builtins.__dict__):
            if node.id in namespace:
                return namespace[node.id]
        return None
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, frame)
        return None if base is None else getattr(base, node.attr, None)
    return None


class Site:
    """Where a conversion was asked for.

    ``direct`` is the Python frame whose instruction triggered it, ``user`` the first frame
    outside diffkit, NumPy and SciPy (None if there is none), ``library`` the NumPy and SciPy
    frames in between, innermost first."""

    def __init__(self, direct):
        self.direct = direct
        self.user, passed = first_outside(direct, _in_library_module)
        library, frame = [], direct
        for _ in range(passed):
            if _package(frame) != "diffkit":
                library.append(frame)
            frame = frame.f_back
        self.library = library
        self.opname, positions = instruction(direct)
        self.text = _source(direct.f_code.co_filename, positions)

    def location(self):
        """The user's line, formatted as in a traceback."""
        frame = self.user or self.direct
        filename, lineno = frame.f_code.co_filename, frame.f_lineno
        line = linecache.getline(filename, lineno).strip()
        where = f'  File "{filename}", line {lineno}, in {frame.f_code.co_name}'
        return where + (f"\n    {line}" if line else "")

    def call(self, frame=None):
        """``(callee, node)`` of the call expression ``frame`` (the direct frame by default)
        is running, or ``(None, None)``."""
        frame = frame or self.direct
        text = self.text
        if frame is not self.direct:
            text = _source(frame.f_code.co_filename, instruction(frame)[1])
        if text is None:
            return _call_on_line(frame)
        node = _parse(text)
        if not isinstance(node, ast.Call):
            return None, None
        return _resolve(node.func, frame), node

    def what(self, call, default):
        """The source text of what the user wrote (``np.asarray(t)``), else ``default``."""
        return self.text or (_text(call, default) if call is not None else default)

    def user_statement(self):
        """The parsed statement on the user's line, or None."""
        frame = self.user or self.direct
        return _parse_statement(linecache.getline(frame.f_code.co_filename, frame.f_lineno))


def escape_error(tracer, site, what, fix):
    traced = f"(shape {tracer.shape}, traced by {tracer._trace.name})"
    if concrete_value(tracer) is None:    # under vmap: a batch, not one value
        problem = f"would turn a batched traced value {traced} into plain numbers"
    else:
        problem = f"would drop the derivative of a traced value {traced}"
    return TracerConversionError(f"{what} {problem}, at\n{site.location()}\n{fix}")


def _text(node, default):
    try:
        return ast.unparse(node)
    except Exception:  # any node ast cannot print: fall back to a placeholder
        return default


# what to write instead, case by case

_KEEP_TRACED = (
    "Keep the value traced: NumPy functions and operators applied to it directly (np.sin(t), "
    "np.sum(t), A @ t) keep the derivative, as do the diffkit.numpy functions "
    "(import diffkit.numpy as dnp); use dk.stop_gradient(t) where no derivative is wanted.")

_IN_PLACE = (
    "A NumPy array stores plain numbers, so writing a traced value into it loses the "
    "derivative. Build the array functionally instead: collect the values and call "
    "np.stack(values), join pieces with np.concatenate([y[:i], t, y[j:]]), or pick with "
    "np.where(mask, t, y); for an array that is itself traced (computed from traced values), "
    "{array} = {array}.at[{index}].{update} returns the updated copy.")

_MAP_INSTEAD = (
    "{name} calls the function on plain numbers (it converts its input with np.asarray "
    "first), so the derivative is lost. Write the function with array operations, which act "
    "on whole arrays (np.sin(x) * x is already elementwise), or map it with "
    "dk.vmap(f)(t) (dk.vmap(f, in_axes=...) for another axis).")

_OUT_BUFFER = (
    "An out= buffer is written in place, which a traced result cannot be. Use the returned "
    "value instead: y = {call} (no out=); where y is itself traced and other names must see "
    "the change, as out=y would give, write y[...] = {call} (methods take out= a traced "
    "array: y.clip(lo, hi, out=y)); to fill part of an array, build it with "
    "np.stack/np.concatenate, or update a traced array with y = y.at[index].set(value).")


_AT_METHODS = {ast.Add: "add", ast.Mult: "multiply"}


def _in_place_fix(site):
    """The in-place fix, in the names the user's ``y[i] = t`` (or ``y[i] += t``) uses."""
    array, index, update = "y", "i", "set(t)"
    statement = site.user_statement()
    if isinstance(statement, ast.Assign) and isinstance(statement.targets[-1], ast.Subscript):
        target = statement.targets[-1]
        update = f"set({_text(statement.value, 't')})"
    elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Subscript):
        target = statement.target
        method = _AT_METHODS.get(type(statement.op))
        value = _text(statement.value, "t")
        update = (f"{method}({value})" if method else
                  f"set({_text(ast.BinOp(target, statement.op, statement.value), 'y[i] op t')})")
    else:
        return _IN_PLACE.format(array=array, index=index, update=update)
    array, index = _text(target.value, array), _text(target.slice, index)
    return _IN_PLACE.format(array=array, index=index, update=update)


# SciPy functions that coerce their inputs: name the one the user called and the
# diffkit.scipy function of the same name.

def _public_module(name):
    """``scipy.linalg._matfuncs`` -> ``scipy.linalg``."""
    parts = []
    for part in name.split("."):
        if part.startswith("_"):
            break
        parts.append(part)
    return ".".join(parts)


def _scipy_public(module, name, owner):
    """``(submodule, name)`` if ``scipy.<submodule>.<name>`` exists, else None. ``owner`` is
    the object a method is bound to: a distribution makes the name ``norm.logpdf``."""
    module = _public_module(module)
    owner_module = type(owner).__module__ if owner is not None else ""
    if owner_module.startswith("scipy.stats"):
        instance = getattr(owner, "name", None) or type(owner).__name__.removesuffix("_gen")
        module, name = "scipy.stats", f"{instance}.{name}"
    if not module.startswith("scipy.") or module.count(".") != 1 or name.startswith("_"):
        return None
    if _lookup(sys.modules.get(module), name) is None:
        return None
    return module.split(".")[1], name


def _scipy_name(frame):
    """``("linalg", "expm")`` or ``("stats", "norm.logpdf")`` for a frame running a public
    SciPy function or distribution method, else None. A SciPy decorator's wrapper frame
    (``stats.skew`` runs in ``axis_nan_policy_wrapper``) is named by the public function it
    wraps, found among its local variables."""
    found = _scipy_public(frame.f_globals.get("__name__", ""), frame.f_code.co_name,
                          frame.f_locals.get("self"))
    if found is None and "wrapper" in frame.f_code.co_name:
        for value in frame.f_locals.values():
            if inspect.isfunction(value) and (value.__module__ or "").startswith("scipy."):
                found = _scipy_public(value.__module__, value.__name__, None)
                if found is not None:
                    break
    return found


def _lookup(namespace, dotted):
    for part in dotted.split("."):
        namespace = getattr(namespace, part, None)
        if namespace is None:
            return None
    return namespace


def _diffkit_scipy(submodule, name):
    # Imported only when an error names a SciPy function: diffkit.scipy loads SciPy's
    # integrate, signal, stats and optimize (about half a second), which `import diffkit`
    # does not need.
    try:
        namespace = importlib.import_module(f"diffkit.scipy.{submodule}")
    except ImportError:
        return None
    return f"diffkit.scipy.{submodule}.{name}" if _lookup(namespace, name) else None


def _scipy_callee(site):
    """``(submodule, name)`` of the SciPy function the user's line is calling, or None."""
    if site.user is None:
        return None
    callee, _ = site.call(site.user)
    if callee is None:
        return None
    return _scipy_public(getattr(callee, "__module__", None) or "",
                         getattr(callee, "__name__", ""), getattr(callee, "__self__", None))


# The SciPy functions verified to differentiate unchanged once SciPy's array-API support is
# on (SCIPY_ARRAY_API=1 before SciPy is imported): the list tests/scipy/
# test_array_api_scipy.py runs. An error recommends the variable for these only, so it
# never sends the user down a route that fails the same way (signal.lfilter, simpson and
# the distributions convert with np.asarray whatever the variable says).
ARRAY_API_FUNCTIONS = frozenset({
    "optimize.rosen", "special.softmax", "special.log_softmax", "special.logsumexp",
    "special.entr", "special.xlogy", "special.erf", "special.gammaln", "special.expit",
    "special.i0e", "stats.skew", "stats.kurtosis", "stats.moment", "stats.gmean",
    "stats.hmean", "stats.pmean", "stats.entropy", "stats.sem", "stats.trim_mean",
    "stats.zscore", "stats.differential_entropy", "integrate.trapezoid",
    "integrate.cumulative_trapezoid", "fft.rfft", "cluster.vq.whiten", "signal.convolve",
    "stats.variation", "stats.pearsonr",
    # statistics that make constants with xp.asarray and compare them with traced values
    "stats.tmean", "stats.iqr", "stats.median_abs_deviation", "stats.quantile",
    "stats.ttest_1samp", "stats.ttest_ind", "stats.ttest_rel", "stats.jarque_bera",
    "stats.chisquare", "stats.power_divergence", "stats.bartlett", "stats.normaltest",
    # and the further ones the same test runs (its BEYOND list)
    "fft.fft", "fft.fftn", "fft.fftshift", "fft.hfft", "fft.ifft", "fft.ihfft", "fft.irfft",
    "fft.rfftn", "integrate.romb", "signal.correlate", "signal.fftconvolve",
    "signal.hilbert", "signal.oaconvolve", "special.bdtr", "special.bdtrc", "special.bdtri",
    "special.betainc", "special.betaincc", "special.betaincinv", "special.betaln",
    "special.binom", "special.boxcox", "special.boxcox1p", "special.cbrt", "special.chdtr",
    "special.chdtrc", "special.chdtri", "special.cosm1", "special.ellipk",
    "special.ellipkm1", "special.erfc", "special.erfcx", "special.erfinv", "special.exp1",
    "special.exp10", "special.exp2", "special.expi", "special.expn", "special.exprel",
    "special.fdtr", "special.fdtrc", "special.fdtri", "special.gamma", "special.gammainc",
    "special.gammaincc", "special.gammainccinv", "special.gammaincinv", "special.gammasgn",
    "special.gdtr", "special.gdtrc", "special.huber", "special.hyp1f1", "special.i0",
    "special.i1", "special.i1e", "special.inv_boxcox", "special.j0", "special.j1",
    "special.k0", "special.k0e", "special.k1", "special.k1e", "special.kl_div",
    "special.log_ndtr", "special.loggamma", "special.logit", "special.lpmv",
    "special.nbdtr", "special.nbdtrc", "special.nbdtri", "special.ndtr", "special.ndtri",
    "special.pdtr", "special.pdtrc", "special.pdtri", "special.poch", "special.polygamma",
    "special.pseudo_huber", "special.psi", "special.radian", "special.rel_entr",
    "special.rgamma", "special.sinc", "special.softplus", "special.spence", "special.stdtr",
    "special.stdtrit", "special.xlog1py", "special.y0", "special.y1", "special.yn",
    "special.zeta", "special.zetac", "stats.circmean", "stats.circstd", "stats.circvar",
    "stats.describe", "stats.directional_stats", "stats.gstd", "stats.gzscore",
    "stats.kstat", "stats.kstatvar", "stats.kurtosistest", "stats.lmoment",
    "stats.sigmaclip", "stats.skewtest", "stats.tsem", "stats.tstd", "stats.tvar",
    "stats.zmap",
})


def _array_api_on():
    """Whether the SciPy in use was imported with SCIPY_ARRAY_API=1."""
    return bool(getattr(sys.modules.get("scipy._lib._array_api"), "SCIPY_ARRAY_API", False))


def _converter(site):
    """``((submodule, name), frame)`` of the SciPy function that converted the traced value:
    the outermost public SciPy function among the NumPy and SciPy frames that called the
    conversion directly. A diffkit frame ends the search: in ``minimize(rosen, x0,
    jac=dk.grad(rosen))`` the culprit is ``rosen`` (called by ``dk.grad``), not
    ``minimize``. (None, None) when no SciPy function is among them."""
    found = frame_found = None
    frame = site.direct
    while frame is not None and _package(frame) in ("numpy", "scipy"):
        name = _scipy_name(frame) if _package(frame) == "scipy" else None
        if name is not None:
            found, frame_found = name, frame
        frame = frame.f_back
    if found is None or (frame is site.user and site.user is not None):
        called = _scipy_callee(site)   # the SciPy function the user's own line calls
        if called is not None:
            return called, frame_found if called == found else None
    if found is None:   # the outermost public SciPy function among all library frames
        for frame in reversed(site.library):
            name = _scipy_name(frame) if _package(frame) == "scipy" else None
            if name is not None:
                return name, frame
    return found, frame_found


def _works_for_call(replacement, original, frame, call=None):
    """Whether the diffkit.scipy function ``replacement`` takes every argument the running
    SciPy ``frame`` got with a value other than its default; without the frame (the
    conversion ran in compiled code), every argument of the user's call expression ``call``
    (unknown: True)."""
    try:
        theirs = inspect.signature(original).parameters
        # the function under the namespace's wrapper: the wrapper shows SciPy's signature
        # and refuses the keywords the function does not take
        ours = inspect.signature(getattr(replacement, "diffkit_function", replacement))
        ours = ours.parameters
    except (TypeError, ValueError):
        return True
    if any(p.kind is p.VAR_KEYWORD for p in ours.values()):
        return True
    if frame is None or not set(theirs) <= set(frame.f_code.co_varnames):
        # no frame, or a wrapper's (SciPy's decorators take *args, **kwargs): the call
        return call is None or _call_fits(call, ours)
    for name, p in theirs.items():
        if name in ours or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or name == "self":
            continue
        value = frame.f_locals.get(name, p.default)
        if p.default is p.empty or value is not p.default:
            return False
    return True


def _user_call(site, found):
    """The call expression on the user's line when it calls the SciPy function ``found``
    itself, else None."""
    if site.user is None:
        return None
    callee, node = site.call(site.user)
    if callee is None or node is None:
        return None
    name = _scipy_public(getattr(callee, "__module__", None) or "",
                         getattr(callee, "__name__", ""), getattr(callee, "__self__", None))
    return node if name == found else None


def _call_fits(call, ours):
    """Whether a call expression passes only arguments the signature ``ours`` takes."""
    if any(isinstance(a, ast.Starred) for a in call.args) or \
            any(k.arg is None for k in call.keywords):
        return True   # *args or **kwargs: unknown
    positional = [p for p in ours.values() if p.kind in (p.POSITIONAL_ONLY,
                                                         p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in ours.values()):
        positional = call.args
    return len(call.args) <= len(positional) and all(k.arg in ours for k in call.keywords)


def _scipy_fix(site):
    """The fix for a SciPy function that coerced a traced value, or None if SciPy is not
    involved: the diffkit.scipy replacement when one exists and takes the call's arguments,
    SciPy's array-API support when that makes the function differentiate, else how to write
    it."""
    found, frame = _converter(site)
    if found is None:
        for frame in reversed(site.library):   # a SciPy frame without a public name
            if _package(frame) == "scipy":
                return _no_replacement("a SciPy function", False)
        return None
    what = f"scipy.{found[0]}.{found[1]}"
    replacement = _diffkit_scipy(*found)
    if replacement and not _works_for_call(
            _lookup(importlib.import_module(f"diffkit.scipy.{found[0]}"), found[1]),
            _lookup(sys.modules.get(f"scipy.{found[0]}"), found[1]), frame,
            _user_call(site, found)):
        replacement = None
    array_api = f"{found[0]}.{found[1]}" in ARRAY_API_FUNCTIONS and not _array_api_on()
    if replacement:
        fix = (f"{what} converts its inputs to plain NumPy arrays (np.asarray), so NumPy's "
               f"dispatch cannot reach diffkit. Use {replacement} instead (same arguments), "
               "which is differentiable.")
        return what, fix + (f" Alternatively: {_ARRAY_API_ROUTE.format(what=what)}"
                            if array_api else "")
    return _no_replacement(what, array_api)


_ARRAY_API_ROUTE = (
    "SciPy's array-API support makes it differentiable: set the environment variable "
    "SCIPY_ARRAY_API=1 before SciPy is first imported (in the shell, or "
    "os.environ[\"SCIPY_ARRAY_API\"] = \"1\" in the program's first lines, before any import "
    "of scipy); then {what} computes "
    "with the traced value's own namespace, diffkit.numpy, and differentiates unchanged.")


def _no_replacement(what, array_api):
    if array_api:
        return what, (f"{what} converts traced values to plain NumPy values and diffkit.scipy "
                      f"has no replacement for it. {_ARRAY_API_ROUTE.format(what=what)} "
                      "Otherwise write it with NumPy functions applied to the traced value, "
                      "or give it a derivative with dk.custom_vjp/dk.custom_jvp.")
    also = (" (it does so even with SCIPY_ARRAY_API=1: SciPy converts it with np.asarray "
            "whatever the setting)") if _array_api_on() else ""
    return what, (f"{what} converts traced values to plain NumPy values{also} and "
                  "diffkit.scipy has no replacement for it. Write it with NumPy functions "
                  "applied to the traced value, or give it a derivative with "
                  "dk.custom_vjp/dk.custom_jvp (docs/scipy.md lists the replacements that "
                  "exist).")


def _library_name(site):
    """The public name of the NumPy function the user's line called (``np.linalg.cond``),
    else of the outermost library frame."""
    callee, _ = site.call(site.user) if site.user is not None else (None, None)
    module = _public_module(getattr(callee, "__module__", None) or "")
    if module.startswith("numpy") and hasattr(callee, "__name__"):
        name = callee.__name__
    else:
        frame = site.library[-1]
        module = _public_module(frame.f_globals.get("__name__", ""))
        name = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
    module = "np" + module[len("numpy"):] if module.startswith("numpy") else module
    return f"{module}.{name}"


def _library_escape(site):
    """``(what, fix)`` when NumPy, SciPy or pandas code (not the user's line) converted the
    value."""
    pandas = [f for f in site.library if _package(f) == "pandas"]
    if pandas:
        name = f"pandas' {pandas[-1].f_code.co_name}"   # the outermost: what the user called
        return name, (
            "A pandas object's own method or operator (series @ t, df.dot(t), s.where(...)) "
            "reads the traced value with np.asarray. Put the traced value first (t @ series, "
            "t * df), or call the diffkit.numpy function (dnp.matmul(series, t), "
            "dnp.dot(df, t); import diffkit.numpy as dnp): they read the pandas object as "
            "NumPy does and keep the derivative.")
    for frame in site.library:
        if isinstance(frame.f_locals.get("self"), np.vectorize):
            return "np.vectorize", _MAP_INSTEAD.format(name="np.vectorize")
    scipy = _scipy_fix(site)
    if scipy is not None:
        return scipy
    name = _library_name(site)
    counterpart = _diffkit_numpy_name(name)
    if counterpart is not None and name in _WRITES_IN_PLACE:
        return name, (
            f"{name} writes into its first argument in place, a NumPy array here, which "
            f"cannot hold a traced value. Call {counterpart}(..., inplace=False) instead "
            "(import diffkit.numpy as dnp): it returns the new array, traced, and keeps the "
            "derivative; or start from a traced array, which NumPy's function writes into.")
    if counterpart is not None:
        return name, (
            f"NumPy converts the arguments of {name} to plain arrays before its dispatch can "
            "reach diffkit (a list or tuple holding traced values, or a traced value where "
            f"NumPy reads numbers). Call {counterpart} instead (import diffkit.numpy as dnp): "
            "it takes the same arguments, lists of traced values included, and keeps the "
            "derivative; or build one traced array first with np.stack([...]).")
    return name, (f"{name} converts its input with np.asarray, so it has no diffkit rule. "
                  "Use the diffkit.numpy function that computes the same thing, or define "
                  "the derivative yourself with dk.custom_vjp/dk.custom_jvp.")


# NumPy functions writing into their first argument whose diffkit.numpy counterparts return
# the new array with inplace=False
_WRITES_IN_PLACE = frozenset({"np.fill_diagonal", "np.put_along_axis"})


def _diffkit_numpy_name(name):
    """``'diffkit.numpy.mean'`` for ``'np.mean'`` when diffkit.numpy has its own
    differentiable function of that name, else None."""
    if not name.startswith("np."):
        return None
    obj = dnp
    for part in name[3:].split("."):
        obj = getattr(obj, part, None)
    module = getattr(obj, "__module__", None) or ""
    if obj is None or not callable(obj) or not module.startswith("diffkit"):
        return None
    return f"diffkit.numpy.{name[3:]}"


_BUILDERS = (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)


def array_escape(site):
    """``(what, fix)`` for ``np.asarray(t)``, ``np.array([t0, t1])``, ``t.__array__()``..."""
    if site.library:
        return _library_escape(site)
    if site.opname in STORES:
        return "Writing into a NumPy array in place", _in_place_fix(site)
    _, call = site.call()
    what = site.what(call, "np.asarray")
    if call is not None and call.args and isinstance(call.args[0], _BUILDERS):
        values = _text(call.args[0], "[t0, t1]")
        return what, (f"np.array/np.asarray of a list makes plain numbers of the traced "
                      f"values in it. Build the array with np.stack({values}) instead (or "
                      "np.concatenate for pieces), which keeps the derivative.")
    return what, _KEEP_TRACED


_PYTHON_NUMBER = {"float": "float", "int": "int", "complex": "complex",
                  "operator.index": "int", ".tolist": "list of numbers"}


def scalar_escape(site, kind):
    """``(what, fix)`` for ``float(t)``, ``t.item()``, ``math.sin(t)``..."""
    if site.library:
        return _library_escape(site)
    if site.opname in STORES:
        return "Writing into a NumPy array in place", _in_place_fix(site)
    callee, call = site.call()
    what = site.what(call, f"{kind}()")
    if f"{kind}(" not in what and getattr(callee, "__module__", None) not in ("math", "cmath"):
        what = f"{what} (which calls {kind}())"
    arg = _text(call.args[0], "t") if call is not None and call.args else "t"
    if kind in (".item", ".tolist") and isinstance(getattr(call, "func", None), ast.Attribute):
        arg = _text(call.func.value, "t")
    constant = _constant_hint(arg)
    if getattr(callee, "__module__", None) in ("math", "cmath"):
        name = callee.__name__
        numpy_call = f"np.{name}({arg})" if hasattr(np, name) else "the NumPy function"
        return what, (f"{callee.__module__}.{name} works on Python numbers only. Use "
                      f"{numpy_call} instead, which keeps the derivative. {constant}")
    number = _PYTHON_NUMBER.get(kind, "number")
    return what, (f"Keep it an array: arrays work wherever a Python {number} does, and "
                  f"NumPy functions (np.sin({arg}) rather than math.sin) keep the derivative. "
                  f"{constant}")


def _constant_hint(arg):
    """How to get a constant of ``arg`` (the source text of the traced argument)."""
    if arg.replace(" ", "").startswith(("dk.stop_gradient(", "stop_gradient(",
                                        "diffkit.stop_gradient(")):
        return (f"{arg} is already a constant (its derivative is zero), but it is still a "
                "traced array under the transformation, and only an array can stand for it: "
                f"use {arg} itself where the number was wanted.")
    return (f"If a constant is really wanted, use dk.stop_gradient({arg}) in its place "
            "(it stays an array, with a zero derivative).")


def writes_out(out):
    """Whether an ``out=`` argument names a buffer (NumPy passes ufuncs a tuple)."""
    outs = out if isinstance(out, tuple) else (out,)
    return any(o is not None for o in outs)


def in_place_call_error(tracer, direct, name, method="__call__"):
    """The error for ``np.add(a, t, out=y)`` and ``np.add.at(y, i, t)``."""
    site = Site(direct)
    _, call = site.call()
    if method == "at":
        args = [_text(a, "?") for a in call.args] if call is not None else []
        array, index, value = (args + ["y", "i", "t"][len(args):])[:3]
        return escape_error(tracer, site, site.what(call, f"{name}.at"), (
            f"{name}.at writes into {array} in place, which a traced value cannot be. Use the "
            f"functional form: {array} = {array}.at[{index}].{name[3:]}({value}) for a traced "
            f"{array} (repeated indices combine as with {name}.at), or build the result with "
            "np.stack/np.concatenate."))
    statement = None
    if call is None:
        statement = _parse_statement(site.text) if site.text else site.user_statement()
    if isinstance(statement, ast.AugAssign):   # y += t on an ndarray y
        target, value = _text(statement.target, "y"), _text(statement.value, "t")
        operator = _text(statement, "y += t").removeprefix(target).split("=")[0].strip()
        rebind = f"{target} = {target} {operator} {value}"
        return escape_error(tracer, site, _text(statement, "y += t"), (
            f"Augmented assignment writes into the NumPy array {target} in place, which a "
            f"traced result cannot be. Write {rebind} instead: it makes a new, traced array."))
    what = site.what(call, f"{name}(..., out=...)")
    functional = f"{name}(...)"
    if call is not None:
        call.keywords = [k for k in call.keywords if k.arg != "out"]
        functional = _text(call, functional)
    return escape_error(tracer, site, what, _OUT_BUFFER.format(call=functional))




def raise_for_scipy_wrapper(ufunc, direct):
    """A SciPy function such as ``scipy.special.zeta`` that calls a private ufunc
    (``_zeta``) with no diffkit rule: point to the diffkit.scipy function instead."""
    site = Site(direct)
    if not site.library:
        return
    called = _scipy_callee(site) or next(
        filter(None, map(_scipy_name, reversed(site.library))), None)
    replacement = called and _diffkit_scipy(*called)
    if replacement:
        raise NoRuleError(
            f"scipy.{called[0]}.{called[1]} calls the ufunc {ufunc.__name__}, which has no "
            f"diffkit rule, at\n{site.location()}\nUse {replacement} instead (same "
            "arguments), which is differentiable.")
