"""The plugins of a ``plugin.path`` entry, by Kafka Connect's layout rule.

Each ``plugin.path`` entry is a directory *of plugins*. Each immediate subdirectory is one
plugin: a Python package (it has ``__init__.py``) is imported by its name; any other
subdirectory is the import root of one plugin, holding its modules and the libraries it
bundles (``connectors/acme-source/{acme_source.py,somelib/}``). A ``*.py`` file directly in
the entry is a plugin of its own. Names starting with ``_`` or ``.`` are skipped
(``__pycache__``, hidden files).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PluginLocation", "plugin_locations"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PluginLocation:
    """One plugin: ``path`` is its subdirectory, package or ``*.py`` file; ``root`` is its
    import root; ``module`` names a package or module directly in the entry (``None`` for a
    plugin subdirectory, which owns everything under its root)."""

    path: Path
    root: Path
    module: str | None

    def modules(self) -> list[str]:
        """The top-level modules the registry imports to find the plugin's classes."""
        if self.module is not None:
            return [self.module]
        return [name for name, _ in _modules_in(self.root)]


def _modules_in(directory: Path) -> list[tuple[str, Path]]:
    """The ``*.py`` modules and packages directly in ``directory``, by name."""
    found = []
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith(("_", ".")):
            continue
        if entry.suffix == ".py" and entry.is_file():
            found.append((entry.stem, entry))
        elif entry.is_dir() and (entry / "__init__.py").is_file():
            found.append((entry.name, entry))
    return found


def plugin_locations(entry: str | Path) -> list[PluginLocation]:
    """The plugins of one ``plugin.path`` entry, in name order (empty if it is no directory)."""
    directory = Path(entry)
    if not directory.is_dir():
        log.warning("plugin.path entry %s is not a directory; skipped", directory)
        return []
    modules = dict(_modules_in(directory))
    locations = []
    for path in sorted(directory.iterdir()):
        if path.name.startswith(("_", ".")):
            continue
        module = path.stem if path.suffix == ".py" else path.name
        if modules.get(module) == path:
            locations.append(PluginLocation(path, directory, module))
        elif path.is_dir():
            locations.append(PluginLocation(path, path, None))
    return locations
