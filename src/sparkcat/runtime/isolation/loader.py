"""Plugin isolation in one Python process: each plugin imports from its own module table.

Kafka Connect gives every plugin a class loader of its own, so two connectors may bundle
different versions of one library. Python has one ``sys.modules`` per process, so
:class:`PluginLoader` gives each plugin a *namespace* of its own instead:

- A plugin's modules are imported under a private top-level package,
  ``_sparkcat_plugin_<dir>_<hash>``, whose ``__path__`` is the plugin's import root: the
  plugin's ``acme_source`` is ``sys.modules["_sparkcat_plugin_acme_source_1a2b3c4d5e.acme_source"]``
  and its bundled ``somelib`` sits next to it. Another plugin's ``somelib`` lives under
  another namespace, so both copies coexist in one process, also while both connectors'
  tasks run at the same time on different threads.
- Every module loaded from the plugin gets the plugin's own ``__builtins__``: a copy of the
  builtins whose ``__import__`` maps the names the plugin holds (any module or package found
  in its import root) into its namespace, and leaves everything else (``sparkcat``, the
  standard library, the environment's packages) to the process's shared import. Python
  looks ``__import__`` up in the builtins of the running function's module, so ``import
  somelib`` at module level and inside a function called much later both get the plugin's
  copy, and relative imports work unchanged.
- ``sparkcat`` and the standard library are always shared (as Kafka shares the Connect API
  and the JDK with every plugin), so plugin classes subclass the one :mod:`sparkcat.api`.

Limits (what the namespace does not cover):

- Imports that bypass ``__import__``: ``importlib.import_module("somelib")``,
  ``importlib.resources``/``importlib.metadata`` lookups by the bundled name, and reading
  ``sys.modules["somelib"]`` see the shared environment, not the plugin.
- Compiled extensions import by their real names and cannot be loaded twice in a process;
  bundle pure-Python libraries (compiled ones come from the Python environment).
- Classes and loggers of a plugin carry the namespaced module name (``__module__``,
  ``logging.getLogger(__name__)``); the plugin registry maps class names back
  (:func:`public_module_name`) wherever it names a class.
"""

from __future__ import annotations

import builtins
import hashlib
import importlib
import re
import sys
import threading
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder, SourceFileLoader, SourcelessFileLoader
from pathlib import Path
from types import ModuleType
from typing import Any

from sparkcat.api.config._types import PLUGIN_NAMESPACE_PREFIX

__all__ = ["PluginLoader", "plugin_loader", "public_module_name"]

_PREFIX = PLUGIN_NAMESPACE_PREFIX
# Never taken from a plugin: the framework and the standard library are shared by all.
_SHARED = frozenset({"sparkcat", "__main__"}) | sys.stdlib_module_names


class PluginLoader:
    """One plugin's module table (see the module docs). Get one with :func:`plugin_loader`.

    ``root`` is the plugin's import root; ``names`` limits the plugin to these top-level
    modules (a ``*.py`` file or package directly in a ``plugin.path`` entry), ``None`` gives
    it everything importable from ``root`` (a plugin subdirectory and what it bundles).
    """

    def __init__(self, root: Path, names: frozenset[str] | None, namespace: str) -> None:
        self.root = root
        self.names = names
        self.namespace = namespace
        self.builtins = dict(builtins.__dict__)
        self.builtins["__import__"] = self._import
        self._owned: dict[str, bool] = {}

    def owns(self, top: str) -> bool:
        """Whether the top-level module ``top`` is this plugin's own."""
        owned = self._owned.get(top)
        if owned is None:
            if top in _SHARED or not top.isidentifier():
                owned = False
            elif self.names is not None:
                owned = top in self.names
            else:
                owned = PathFinder.find_spec(top, [str(self.root)]) is not None
            self._owned[top] = owned
        return owned

    def import_module(self, name: str) -> ModuleType:
        """The plugin's module ``name`` (as the plugin calls it: ``acme_source.config``)."""
        _install_finder()
        return importlib.import_module(f"{self.namespace}.{name}")

    def _import(
        self,
        name: str,
        globals: dict[str, Any] | None = None,
        locals: Any = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> ModuleType:
        top = name.partition(".")[0]
        if level or not self.owns(top):
            # Relative imports already resolve inside the namespace (``__package__`` is it).
            return builtins.__import__(name, globals, locals, fromlist or (), level)
        _install_finder()
        module = builtins.__import__(f"{self.namespace}.{name}", globals, locals, fromlist or ())
        # ``import a.b`` binds ``a``: the plugin's ``a``, not the namespace package.
        return module if fromlist else sys.modules[f"{self.namespace}.{top}"]


class _OwnBuiltinsSourceLoader(SourceFileLoader):
    def __init__(self, fullname: str, path: str, plugin: PluginLoader) -> None:
        super().__init__(fullname, path)
        self.plugin = plugin

    def exec_module(self, module: ModuleType) -> None:
        # Set before the code runs: every function the module defines captures it.
        module.__dict__["__builtins__"] = self.plugin.builtins
        super().exec_module(module)


class _OwnBuiltinsSourcelessLoader(SourcelessFileLoader):
    def __init__(self, fullname: str, path: str, plugin: PluginLoader) -> None:
        super().__init__(fullname, path)
        self.plugin = plugin

    def exec_module(self, module: ModuleType) -> None:
        module.__dict__["__builtins__"] = self.plugin.builtins
        super().exec_module(module)


class _PluginFinder(MetaPathFinder):
    """Finds the modules of plugin namespaces (and only those) with their plugin's loader."""

    def __init__(self) -> None:
        self.plugins: dict[str, PluginLoader] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        namespace, dot, _ = fullname.partition(".")
        plugin = self.plugins.get(namespace)
        if plugin is None:
            return None
        if not dot:  # the namespace itself: a package without code over the plugin's root
            package = ModuleSpec(namespace, None, is_package=True)
            package.submodule_search_locations = [str(plugin.root)]
            return package
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.origin is None:
            return spec
        if type(spec.loader) is SourceFileLoader:
            spec.loader = _OwnBuiltinsSourceLoader(fullname, spec.origin, plugin)
        elif type(spec.loader) is SourcelessFileLoader:
            spec.loader = _OwnBuiltinsSourcelessLoader(fullname, spec.origin, plugin)
        return spec


# Import hooks are process-wide by nature (sys.meta_path): one finder, one loader per plugin
# root, so every registry of the process shares a plugin's modules.
_FINDER = _PluginFinder()
_LOCK = threading.Lock()


def _install_finder() -> None:
    if _FINDER not in sys.meta_path:
        with _LOCK:
            if _FINDER not in sys.meta_path:
                # First: a namespace name must never reach the path-based finders.
                sys.meta_path.insert(0, _FINDER)


def plugin_loader(root: Path, names: frozenset[str] | None = None) -> PluginLoader:
    """The process's loader of the plugin at ``root`` (limited to ``names`` if given)."""
    root = Path(root).absolute()
    key = f"{root}\0{','.join(sorted(names or ()))}"
    slug = re.sub(r"\W", "_", root.name if names is None else "_".join(sorted(names)))[:40]
    namespace = f"{_PREFIX}{slug}_{hashlib.sha256(key.encode()).hexdigest()[:10]}"
    with _LOCK:
        plugin = _FINDER.plugins.get(namespace)
        if plugin is None:
            plugin = _FINDER.plugins[namespace] = PluginLoader(root, names, namespace)
    _install_finder()
    return plugin


def public_module_name(module_name: str) -> str:
    """``module_name`` as its plugin calls it (namespaced names lose their namespace)."""
    namespace, dot, rest = module_name.partition(".")
    if dot and namespace in _FINDER.plugins:
        return rest
    return module_name
