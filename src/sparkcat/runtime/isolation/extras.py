"""Which pip extra of sparkcat installs the third-party libraries of which built-in plugins.

The core install (``pip install sparkcat``) runs the file connectors, the Kafka converters,
MirrorMaker and the Spark-native connectors; the other built-ins import libraries that come
with an extra (``pip install 'sparkcat[jdbc]'``). Without it they are still listed by
``GET /connector-plugins``; resolving one (validating or starting a connector that uses it,
or a task on an executor) raises :class:`MissingExtraError` naming the extra, instead of the
``ModuleNotFoundError`` of a library the user never chose.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sparkcat.api.errors import ConnectError

# Package of built-in plugins -> the extra that installs what it imports.
EXTRAS: dict[str, str] = {
    "sparkcat.connectors.jdbc": "jdbc",
    "sparkcat.connectors.storage": "s3",
    "sparkcat.connectors.debezium": "cdc",
    "sparkcat.converters.avro": "schema-registry",
    "sparkcat.converters.json_schema": "schema-registry",
    "sparkcat.converters.protobuf": "schema-registry",
    "sparkcat.converters.schema_registry": "schema-registry",
}


class MissingExtraError(ConnectError):
    """A built-in plugin whose extra is not installed."""


def extra_of(module: str) -> str | None:
    """The extra that the built-in plugin module ``module`` needs (``None``: the core)."""
    for package, extra in EXTRAS.items():
        if module == package or module.startswith(package + "."):
            return extra
    return None


def missing_extra(class_name: str, module: str, exc: ImportError) -> MissingExtraError | None:
    """The error to raise when importing ``module`` (of plugin ``class_name``) failed with
    ``exc``; ``None`` if it is not a library of the module's extra that is missing."""
    extra = extra_of(module)
    missing = exc.name or ""
    ours = missing == "sparkcat" or missing.startswith("sparkcat.")
    if extra is None or not isinstance(exc, ModuleNotFoundError) or ours:
        return None
    simple = class_name.replace(":", ".").rsplit(".", 1)[-1].rsplit("$", 1)[-1]
    return MissingExtraError(f"{simple} needs the '{extra}' extra: pip install 'sparkcat[{extra}]'")


def load_plugin(name: str, target: str, load: Callable[..., type], *args: Any) -> type:
    """``load(target, *args)`` (the registry's loader of ``module:Class`` targets), raising
    :class:`MissingExtraError` instead of the ``ImportError`` of a plugin whose extra is
    missing; ``name`` is the plugin's name as the user wrote it or as the registry lists it."""
    try:
        return load(target, *args)
    except ImportError as exc:
        error = missing_extra(name, target.partition(":")[0], exc)
        if error is None:
            raise
        raise error from exc


__all__ = ["EXTRAS", "MissingExtraError", "extra_of", "load_plugin", "missing_extra"]
