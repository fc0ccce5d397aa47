"""``install()``: make ``import autograd`` resolve to ``diffkit.compat.autograd``.

For code that cannot be edited (a library importing ``autograd`` itself), ``install()``
puts a finder first on ``sys.meta_path`` that answers every ``autograd`` and
``autograd.<name>`` import with the module ``diffkit.compat.autograd.<name>`` itself (the
same module object under both names, so ``isinstance`` checks and module state agree).
A submodule diffkit does not provide raises ``ModuleNotFoundError`` naming it.
``uninstall()`` removes the finder and every ``autograd`` entry it put in
``sys.modules``, so a real autograd (if installed) imports again afterwards.

Call ``install()`` before the code that imports autograd: a real autograd imported
earlier keeps its objects in that code, so ``install()`` refuses to mix the two.
"""

import importlib
import importlib.abc
import importlib.machinery
import sys

from ...errors import DiffkitError

__all__ = ["install", "uninstall", "installed"]

ALIAS = "autograd"
TARGET = __name__.rpartition(".")[0]  # diffkit.compat.autograd


class AutogradAlreadyImportedError(DiffkitError, ImportError):
    """``install()`` was called after a real autograd had been imported."""


def _target_name(fullname):
    return TARGET + fullname[len(ALIAS):]


def _is_alias(fullname):
    return fullname == ALIAS or fullname.startswith(ALIAS + ".")


class _AliasLoader(importlib.abc.Loader):
    """Loads an ``autograd`` name as the already imported diffkit module."""

    def __init__(self, module):
        self.module = module
        self.own_spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # the import system stamped the alias's spec on the module: give it its own back,
        # so the module keeps importing its relatives (and reloads) under its real name
        module.__spec__ = self.own_spec


class AutogradFinder(importlib.abc.MetaPathFinder):
    """The meta-path finder ``install()`` puts first: ``autograd[.x]`` is
    ``diffkit.compat.autograd[.x]``."""

    def find_spec(self, fullname, path=None, target=None):
        if not _is_alias(fullname):
            return None
        target_name = _target_name(fullname)
        try:
            module = importlib.import_module(target_name)
        except ModuleNotFoundError as error:
            if error.name != target_name:
                raise
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: diffkit.compat.autograd (installed as "
                f"'autograd') has no counterpart of it. It provides autograd's public API; "
                "see docs/guide/autograd.md for what it covers.", name=fullname) from None
        is_package = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              is_package=is_package)


_finder = None


def installed():
    """Whether ``import autograd`` resolves to ``diffkit.compat.autograd`` now."""
    return _finder is not None and _finder in sys.meta_path


def install():
    """Make ``import autograd`` (and its submodules) resolve to ``diffkit.compat.autograd``
    from now on, until ``uninstall()``. Idempotent. Raises
    ``AutogradAlreadyImportedError`` if a real autograd is already imported."""
    global _finder
    if installed():
        return
    real = [name for name, module in list(sys.modules.items())
            if _is_alias(name) and module is not None
            and not getattr(module, "__name__", "").startswith(TARGET)]
    if real:
        raise AutogradAlreadyImportedError(
            f"a real autograd is already imported ({', '.join(sorted(real)[:3])}...): code "
            "that imported it keeps autograd's own objects. Call "
            "diffkit.compat.autograd.install() before anything imports autograd (e.g. at "
            "the top of the program or in a conftest.py).")
    _finder = AutogradFinder()
    sys.meta_path.insert(0, _finder)


def uninstall():
    """Undo ``install()``: ``import autograd`` finds the real autograd again (if any).
    Modules that already imported the alias keep the objects they hold."""
    global _finder
    if _finder is not None and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    _finder = None
    for name, module in list(sys.modules.items()):
        if _is_alias(name) and getattr(module, "__name__", "").startswith(TARGET):
            del sys.modules[name]
