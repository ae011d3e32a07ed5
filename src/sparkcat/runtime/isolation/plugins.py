"""The plugin registry: turns the class names users write into Python classes.

:meth:`PluginRegistry.resolve` accepts, in this order:

1. a Kafka fully qualified class name of a built-in
   (``org.apache.kafka.connect.file.FileStreamSourceConnector``,
   ``org.apache.kafka.connect.transforms.InsertField$Value``);
2. an alias, computed as Kafka's ``PluginUtils.computeAliases`` does: a plugin's simple class
   name and its *pruned* name (the simple name minus its type suffix: ``Connector`` for
   connectors, ``Converter``, ``HeaderConverter``, ``Transformation``, ``Predicate``,
   ``ConfigProvider``) when exactly one plugin has it. Nested classes (``$Key``/``$Value``)
   have the simple names ``Key``/``Value``, which are ambiguous, so they need the full name
   — as in Kafka. Connectors are also found by ``name + "Connector"``;
3. ``module:Qualified.Name`` (``sparkcat.transforms.insert_field:InsertField.Value``);
4. an entry point name of group ``sparkcat.plugins`` (installed distributions);
5. a dotted Python path (``mypkg.mymodule.MyConnector``);
6. a class found in a ``plugin.path`` directory (see below), by dotted path or alias.

``plugin.path`` follows Kafka's layout (:mod:`sparkcat.runtime.isolation.layout`): each entry
is a directory of plugins; each subdirectory is one plugin (a package imported by its name, or
else the import root of one plugin's modules and the libraries it bundles), and a ``*.py`` file
directly in the entry is a plugin of its own. Each plugin imports from its own module table
(:mod:`sparkcat.runtime.isolation.loader`), so plugins that bundle different versions of one
library each see their own copy; ``sys.path`` is left alone. On the first lookup every
top-level module or package of every plugin is imported once, and the concrete classes it
defines that subclass a plugin ABC of :mod:`sparkcat.api` become plugins (their simple and
pruned names join the aliases). A module that fails to import is logged and skipped. Names
given as ``module:Class`` or dotted paths are looked up in the plugin that holds their
top-level module first (plugins in ``plugin.path`` order), then in the shared environment.

The registry is lazy: resolving ``JsonConverter`` imports only ``sparkcat.converters.json``.
A built-in whose pip extra is missing is listed, and refused naming it (:mod:`.extras`).
Resolved classes are checked against the ABC of the requested kind; a name that does not
resolve to a concrete class of that kind raises :class:`ConnectError` with Kafka's text
(``Failed to find any class that implements Connector and which name matches X, available
connectors are: PluginDesc{...}, ...``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import sparkcat
from sparkcat.api.errors import ConnectError
from sparkcat.runtime.isolation.extras import load_plugin
from sparkcat.runtime.isolation.layout import PluginLocation, plugin_locations
from sparkcat.runtime.isolation.loader import PluginLoader, plugin_loader, public_module_name

log = logging.getLogger(__name__)

Kind = Literal[
    "source",
    "sink",
    "connector",
    "converter",
    "header_converter",
    "transformation",
    "predicate",
    "config_provider",
    "task",
]
ENTRY_POINT_GROUP = "sparkcat.plugins"

# kind -> (api module, ABC name, Kafka interface name, plural used in messages, pruned suffix)
_KINDS: dict[str, tuple[str, str, str, str, str]] = {
    "connector": ("sparkcat.api.connector", "Connector", "Connector", "connectors", "Connector"),
    "source": ("sparkcat.api.source", "SourceConnector", "Connector", "connectors", "Connector"),
    "sink": ("sparkcat.api.sink", "SinkConnector", "Connector", "connectors", "Connector"),
    "converter": ("sparkcat.api.converter", "Converter", "Converter", "converters", "Converter"),
    "header_converter": (
        "sparkcat.api.converter",
        "HeaderConverter",
        "HeaderConverter",
        "header converters",
        "HeaderConverter",
    ),
    "transformation": (
        "sparkcat.api.transform",
        "Transformation",
        "Transformation",
        "transformations",
        "Transformation",
    ),
    "predicate": ("sparkcat.api.transform", "Predicate", "Predicate", "predicates", "Predicate"),
    "config_provider": (
        "sparkcat.api.config_provider",
        "ConfigProvider",
        "ConfigProvider",
        "config providers",
        "ConfigProvider",
    ),
    "task": ("sparkcat.api.connector", "Task", "Task", "tasks", "Task"),
}
# The kinds a plugin is listed (and aliased) as; "connector" is split into source/sink.
LISTED_KINDS = (
    "sink",
    "source",
    "transformation",
    "predicate",
    "converter",
    "header_converter",
    "config_provider",
)


@dataclass(frozen=True, slots=True)
class Builtin:
    """A built-in plugin: its Kafka class name, where it lives, and what kinds it is."""

    class_name: str
    target: str  # "module:Qualified.Name"
    kinds: tuple[str, ...]


def _builtins() -> tuple[Builtin, ...]:
    kafka = "org.apache.kafka.connect."
    both = ("converter", "header_converter")
    table = [
        Builtin(kafka + "file.FileStreamSourceConnector",
                "sparkcat.connectors.file:FileStreamSourceConnector", ("source",)),
        Builtin(kafka + "file.FileStreamSinkConnector",
                "sparkcat.connectors.file:FileStreamSinkConnector", ("sink",)),
        Builtin(kafka + "file.FileStreamSourceTask",
                "sparkcat.connectors.file.source_task:FileStreamSourceTask", ("task",)),
        Builtin(kafka + "file.FileStreamSinkTask",
                "sparkcat.connectors.file.sink_task:FileStreamSinkTask", ("task",)),
        Builtin("io.confluent.connect.jdbc.JdbcSourceConnector",
                "sparkcat.connectors.jdbc:JdbcSourceConnector", ("source",)),
        Builtin("io.confluent.connect.jdbc.JdbcSinkConnector",
                "sparkcat.connectors.jdbc:JdbcSinkConnector", ("sink",)),
        Builtin("io.confluent.connect.jdbc.source.JdbcSourceTask",
                "sparkcat.connectors.jdbc.source_task:JdbcSourceTask", ("task",)),
        Builtin("io.confluent.connect.jdbc.sink.JdbcSinkTask",
                "sparkcat.connectors.jdbc.sink_task:JdbcSinkTask", ("task",)),
        Builtin("io.confluent.connect.s3.S3SinkConnector",
                "sparkcat.connectors.storage:S3SinkConnector", ("sink",)),
        Builtin("io.confluent.connect.s3.S3SinkTask",
                "sparkcat.connectors.storage.sink_task:S3SinkTask", ("task",)),
        Builtin("sparkcat.connectors.storage.FileSystemSinkConnector",
                "sparkcat.connectors.storage:FileSystemSinkConnector", ("sink",)),
        Builtin("sparkcat.connectors.storage.FileSystemSinkTask",
                "sparkcat.connectors.storage.sink_task:FileSystemSinkTask", ("task",)),
        Builtin("sparkcat.connectors.spark.SparkSinkConnector",
                "sparkcat.engine.native_connectors:SparkSinkConnector", ("sink",)),
        Builtin("sparkcat.connectors.spark.SparkSinkTask",
                "sparkcat.engine.native_connectors:SparkSinkTask", ("task",)),
        Builtin("sparkcat.connectors.spark.SparkSourceConnector",
                "sparkcat.engine.native_connectors:SparkSourceConnector", ("source",)),
        Builtin("sparkcat.connectors.spark.SparkSourceTask",
                "sparkcat.engine.native_connectors:SparkSourceTask", ("task",)),
        Builtin(kafka + "mirror.MirrorSourceConnector",
                "sparkcat.connectors.mirror:MirrorSourceConnector", ("source",)),
        Builtin(kafka + "mirror.MirrorSourceTask",
                "sparkcat.connectors.mirror:MirrorSourceTask", ("task",)),
        Builtin(kafka + "mirror.MirrorCheckpointConnector",
                "sparkcat.connectors.mirror:MirrorCheckpointConnector", ("source",)),
        Builtin(kafka + "mirror.MirrorCheckpointTask",
                "sparkcat.connectors.mirror:MirrorCheckpointTask", ("task",)),
        Builtin(kafka + "mirror.MirrorHeartbeatConnector",
                "sparkcat.connectors.mirror:MirrorHeartbeatConnector", ("source",)),
        Builtin(kafka + "mirror.MirrorHeartbeatTask",
                "sparkcat.connectors.mirror:MirrorHeartbeatTask", ("task",)),
        Builtin("io.debezium.connector.postgresql.PostgresConnector",
                "sparkcat.connectors.debezium.postgres:PostgresConnector", ("source",)),
        Builtin("io.debezium.connector.postgresql.PostgresConnectorTask",
                "sparkcat.connectors.debezium.postgres:PostgresConnectorTask", ("task",)),
        Builtin("io.debezium.connector.mysql.MySqlConnector",
                "sparkcat.connectors.debezium.mysql:MySqlConnector", ("source",)),
        Builtin("io.debezium.connector.mysql.MySqlConnectorTask",
                "sparkcat.connectors.debezium.mysql:MySqlConnectorTask", ("task",)),
        Builtin("io.debezium.connector.mariadb.MariaDbConnector",
                "sparkcat.connectors.debezium.mysql:MariaDbConnector", ("source",)),
        Builtin("io.debezium.connector.mariadb.MariaDbConnectorTask",
                "sparkcat.connectors.debezium.mysql:MariaDbConnectorTask", ("task",)),
        Builtin(kafka + "json.JsonConverter", "sparkcat.converters.json:JsonConverter", both),
        Builtin(kafka + "storage.StringConverter", "sparkcat.converters.string:StringConverter",
                both),
        Builtin(kafka + "converters.ByteArrayConverter",
                "sparkcat.converters.bytes:ByteArrayConverter", both),
        Builtin(kafka + "storage.SimpleHeaderConverter",
                "sparkcat.converters.simple_header:SimpleHeaderConverter", ("header_converter",)),
        Builtin("io.confluent.connect.avro.AvroConverter",
                "sparkcat.converters.avro:AvroConverter", ("converter",)),
        Builtin("io.confluent.connect.json.JsonSchemaConverter",
                "sparkcat.converters.json_schema:JsonSchemaConverter", ("converter",)),
        Builtin("io.confluent.connect.protobuf.ProtobufConverter",
                "sparkcat.converters.protobuf:ProtobufConverter", ("converter",)),
        Builtin("io.debezium.transforms.ExtractNewRecordState",
                "sparkcat.transforms.extract_new_record_state:ExtractNewRecordState",
                ("transformation",)),
    ]  # fmt: skip
    for number in ("Short", "Integer", "Long", "Float", "Double", "Boolean"):
        table.append(
            Builtin(
                f"{kafka}converters.{number}Converter",
                f"sparkcat.converters.numbers:{number}Converter",
                both,
            )
        )
    key_value = [
        "Cast",
        "ExtractField",
        "Flatten",
        "HeaderFrom",
        "HoistField",
        "InsertField",
        "MaskField",
        "ReplaceField",
        "SetSchemaMetadata",
        "TimestampConverter",
    ]
    single = [
        "DropHeaders",
        "Filter",
        "InsertHeader",
        "RegexRouter",
        "TimestampRouter",
        "ValueToKey",
    ]
    for smt in key_value:
        for variant in ("Key", "Value"):
            table.append(
                Builtin(
                    f"{kafka}transforms.{smt}${variant}",
                    f"sparkcat.transforms.{_snake(smt)}:{smt}.{variant}",
                    ("transformation",),
                )
            )
    for smt in single:
        table.append(
            Builtin(
                f"{kafka}transforms.{smt}",
                f"sparkcat.transforms.{_snake(smt)}:{smt}",
                ("transformation",),
            )
        )
    for predicate in ("TopicNameMatches", "HasHeaderKey", "RecordIsTombstone"):
        table.append(
            Builtin(
                f"{kafka}transforms.predicates.{predicate}",
                f"sparkcat.transforms.predicates.{_snake(predicate)}:{predicate}",
                ("predicate",),
            )
        )
    for provider, module in (
        ("FileConfigProvider", "file"),
        ("DirectoryConfigProvider", "directory"),
        ("EnvVarConfigProvider", "env_var"),
    ):
        table.append(
            Builtin(
                f"org.apache.kafka.common.config.provider.{provider}",
                f"sparkcat.runtime.config_provider.{module}:{provider}",
                ("config_provider",),
            )
        )
    return tuple(table)


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))


BUILTINS: tuple[Builtin, ...] = _builtins()


def simple_name(class_name: str) -> str:
    """Java's ``getSimpleName`` of a class name (``a.b.InsertField$Value`` → ``Value``)."""
    return class_name.replace(":", ".").rsplit(".", 1)[-1].rsplit("$", 1)[-1]


def pruned_name(class_name: str, kind: str) -> str:
    """The simple name minus the kind's suffix when it has one (``JsonConverter`` → ``Json``)."""
    simple = simple_name(class_name)
    suffix = _KINDS[kind][4]
    pos = simple.rfind(suffix)
    return simple[:pos] if pos > 0 else simple


@dataclass(frozen=True, slots=True)
class PluginDesc:
    """One listed plugin, as ``GET /connector-plugins`` shows it."""

    class_name: str
    kind: str
    version: str
    target: str
    location: str = "classpath"

    def __str__(self) -> str:
        return (
            f"PluginDesc{{klass=class {self.class_name}, name='{self.class_name}', "
            f"version='{self.version}', encodedVersion={self.version}, type={self.kind}, "
            f"typeName='{self.kind}', location='{self.location}'}}"
        )


# Plugins are imported one at a time per process. A task host runs many leases on threads,
# and two threads importing the two halves of a package with a circular import (a package
# whose __init__ imports a module that imports the package) deadlock in Python's per-module
# import locks; Python breaks the deadlock by handing one of them a partially initialised
# module, and its import fails.
_IMPORT_LOCK = threading.RLock()


def load_target(target: str, import_module: Any = importlib.import_module) -> type:
    """Import ``module:Qualified.Name`` (with ``import_module``) and return what it names."""
    module_name, _, qualname = target.partition(":")
    obj: object = import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, type):
        raise TypeError(f"{target} is not a class")
    return obj


def _load_dotted(name: str, import_module: Any = importlib.import_module) -> type | None:
    """Resolve ``a.b.C`` (or ``a.b.C.Nested``) by importing the longest module prefix."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            target = ".".join(parts[:cut]) + ":" + ".".join(parts[cut:])
            return load_plugin(name, target, load_target, import_module)
        except ModuleNotFoundError as exc:
            if exc.name is not None and not ".".join(parts[:cut]).startswith(exc.name):
                raise  # the module exists but one of its own imports is missing
        except (AttributeError, TypeError):
            return None
    return None


def kind_base(kind: str) -> type:
    """The ABC of :mod:`sparkcat.api` that plugins of ``kind`` subclass."""
    if kind not in _KINDS:
        raise ValueError(f"Unknown plugin kind {kind!r}")
    module, attr = _KINDS[kind][:2]
    return load_target(f"{module}:{attr}")


class PluginRegistry:
    """Resolves plugin names to classes (see the module docs). Thread-safe."""

    def __init__(
        self,
        plugin_path: Iterable[str | Path] = (),
        builtins: Sequence[Builtin] = BUILTINS,
        entry_point_group: str = ENTRY_POINT_GROUP,
    ) -> None:
        self._plugin_path = tuple(str(p) for p in plugin_path)
        self._builtins = {b.class_name: b for b in builtins}
        self._group = entry_point_group
        self._lock = threading.RLock()
        self._discovered: dict[str, tuple[type, str]] | None = None  # name -> (class, location)
        self._plugins: list[tuple[PluginLocation, PluginLoader]] | None = None
        self._aliases: dict[str, str] | None = None

    # -- resolution -------------------------------------------------------------------------
    def resolve(self, name: str, kind: str) -> type:
        """The concrete class of ``kind`` that ``name`` stands for; ``ConnectError`` if none."""
        name = name.strip()
        base = kind_base(kind)
        try:
            with _IMPORT_LOCK:
                cls = self.find(name, kind)
        except (ImportError, AttributeError, TypeError) as exc:
            raise ConnectError(self._not_found_message(name, kind)) from exc
        if cls is None or not issubclass(cls, base) or inspect.isabstract(cls):
            raise ConnectError(self._not_found_message(name, kind))
        return cls

    def find(self, name: str, kind: str = "connector") -> type | None:
        """The class ``name`` stands for, without checking its kind (``None`` if unknown)."""
        name = name.strip()
        builtin = self._builtins.get(name)
        if builtin is not None:
            return load_plugin(builtin.class_name, builtin.target, load_target)
        aliases = self._alias_table()
        candidates = (
            [name, name + "Connector"] if kind in ("connector", "source", "sink") else [name]
        )
        for candidate in candidates:
            if candidate in aliases:
                return self._load_known(aliases[candidate])
        if ":" in name:
            try:
                return load_plugin(name, name, load_target, self._importer(name))
            except (ImportError, AttributeError, TypeError):
                return None
        found = self._entry_point(name)
        if found is not None:
            return found
        if not name or name.startswith(".") or name.endswith("."):
            return None
        if "." in name:
            dotted = _load_dotted(name, self._importer(name))
            if dotted is not None:
                return dotted
        return None

    def _importer(self, name: str) -> Any:
        """How to import the module of ``name``: from the first plugin holding its top-level
        module, else from the shared environment."""
        top = name.split(":")[0].split(".")[0]
        for _, loader in self._plugin_loaders():
            if loader.owns(top):
                return loader.import_module
        return importlib.import_module

    def _plugin_loaders(self) -> list[tuple[PluginLocation, PluginLoader]]:
        """Every plugin of ``plugin.path`` in order, with its loader (nothing imported)."""
        with self._lock:
            if self._plugins is None:
                self._plugins = [
                    (location, plugin_loader(location.root, _names(location.module)))
                    for directory in self._plugin_path
                    for location in plugin_locations(directory)
                ]
            return self._plugins

    def _load_known(self, class_name: str) -> type:
        builtin = self._builtins.get(class_name)
        if builtin is not None:
            return load_plugin(builtin.class_name, builtin.target, load_target)
        return self._discover()[class_name][0]

    def _entry_point(self, name: str) -> type | None:
        for entry in metadata.entry_points(group=self._group):
            if entry.name == name:
                loaded = entry.load()
                return loaded if isinstance(loaded, type) else None
        return None

    # -- aliases and plugin.path discovery ---------------------------------------------------
    def _alias_table(self) -> dict[str, str]:
        with self._lock:
            if self._aliases is None:
                owners: dict[str, set[str]] = {}
                named: list[tuple[str, str]] = [
                    (b.class_name, kind)
                    for b in self._builtins.values()
                    for kind in b.kinds
                    if kind != "task"
                ]
                for class_name, (cls, _) in self._discover().items():
                    named.extend((class_name, kind) for kind in _kinds_of(cls))
                for class_name, kind in named:
                    for alias in (simple_name(class_name), pruned_name(class_name, kind)):
                        owners.setdefault(alias, set()).add(class_name)
                self._aliases = {a: next(iter(c)) for a, c in owners.items() if len(c) == 1}
            return self._aliases

    def _discover(self) -> dict[str, tuple[type, str]]:
        with self._lock:
            if self._discovered is None:
                self._discovered = {}
                for location, loader in self._plugin_loaders():
                    self._scan_plugin(location, loader)
            return self._discovered

    def _scan_plugin(self, location: PluginLocation, loader: PluginLoader) -> None:
        assert self._discovered is not None
        for module_name in location.modules():
            try:
                imported = loader.import_module(module_name)
            except Exception:
                log.exception("Could not import plugin module %s of %s", module_name, location.path)
                continue
            own = imported.__name__
            for _, obj in inspect.getmembers(imported, inspect.isclass):
                defined_here = obj.__module__ == own or obj.__module__.startswith(own + ".")
                if defined_here and _kinds_of(obj):
                    class_name = f"{public_module_name(obj.__module__)}.{obj.__qualname__}"
                    self._discovered[class_name] = (obj, str(location.path))

    # -- listing ----------------------------------------------------------------------------
    def plugins(self, kind: str | None = None) -> list[PluginDesc]:
        """Every known plugin (of ``kind`` if given: a listed kind or ``"connector"``).

        Imports each plugin (to read connector versions), so it is meant for the REST API's
        ``GET /connector-plugins`` and error messages, not for hot paths. Order: Kafka's —
        sinks, sources, transformations, predicates, converters, header converters, config
        providers, each sorted by class name.
        """
        kinds = ("sink", "source") if kind == "connector" else (kind,) if kind else LISTED_KINDS
        found: dict[tuple[str, str], PluginDesc] = {}
        for builtin in self._builtins.values():
            for plugin_kind in builtin.kinds:
                if plugin_kind in kinds:
                    found[(plugin_kind, builtin.class_name)] = self._describe(
                        builtin.class_name, plugin_kind, builtin.target, "classpath"
                    )
        for class_name, (cls, location) in self._discover().items():
            for plugin_kind in _kinds_of(cls):
                if plugin_kind in kinds:
                    target = f"{public_module_name(cls.__module__)}:{cls.__qualname__}"
                    found[(plugin_kind, class_name)] = self._describe(
                        class_name, plugin_kind, target, location
                    )
        for entry in metadata.entry_points(group=self._group):
            try:
                cls = entry.load()
            except Exception:
                log.exception("Could not load plugin entry point %s", entry.name)
                continue
            for plugin_kind in _kinds_of(cls):
                if plugin_kind in kinds:
                    found[(plugin_kind, entry.name)] = self._describe(
                        entry.name, plugin_kind, entry.value, "classpath"
                    )
        order = {k: i for i, k in enumerate(LISTED_KINDS)}
        return sorted(found.values(), key=lambda d: (order.get(d.kind, len(order)), d.class_name))

    def _describe(self, class_name: str, kind: str, target: str, location: str) -> PluginDesc:
        version = sparkcat.__version__ if class_name in self._builtins else "undefined"
        if kind in ("source", "sink"):
            try:
                version = str(load_target(target, self._importer(target))().version())
            except Exception:
                log.debug("Could not read the version of %s", class_name, exc_info=True)
        return PluginDesc(class_name, kind, version, target, location)

    def _not_found_message(self, name: str, kind: str) -> str:
        interface, plural = _KINDS[kind][2], _KINDS[kind][3]
        listed = self.plugins("connector" if kind in ("source", "sink") else kind)
        if kind in ("connector", "source", "sink"):
            available = ", ".join(str(d) for d in listed)
        else:
            available = ", ".join(d.class_name for d in listed)
        return (
            f"Failed to find any class that implements {interface} and which name matches "
            f"{name}, available {plural} are: {available}"
        )

    def class_name(self, cls: type) -> str:
        """The name ``resolve`` maps back to ``cls``: a built-in's Kafka name, else
        ``module:QualName``. Used for ``task.class`` in task configs."""
        for builtin in self._builtins.values():
            module_name = builtin.target.partition(":")[0]
            if module_name in sys.modules:
                try:
                    if load_target(builtin.target) is cls:
                        return builtin.class_name
                except (ImportError, AttributeError, TypeError):
                    continue
        return f"{public_module_name(cls.__module__)}:{cls.__qualname__}"


def _names(module: str | None) -> frozenset[str] | None:
    return None if module is None else frozenset({module})


def _kinds_of(cls: object) -> list[str]:
    """The listed kinds ``cls`` is a concrete plugin of (empty if none)."""
    if not isinstance(cls, type) or inspect.isabstract(cls):
        return []
    kinds = []
    for kind in LISTED_KINDS:
        try:
            base = kind_base(kind)
        except (ImportError, AttributeError):
            continue
        if issubclass(cls, base) and cls is not base:
            kinds.append(kind)
    return kinds


@functools.lru_cache(maxsize=8)
def _cached_registry(plugin_path: tuple[str, ...]) -> PluginRegistry:
    return PluginRegistry(plugin_path)


def default_registry(plugin_path: Iterable[str | Path] = ()) -> PluginRegistry:
    """The process-wide registry for ``plugin_path`` (cheap: nothing is imported yet)."""
    return _cached_registry(tuple(str(p) for p in plugin_path))


__all__ = [
    "BUILTINS",
    "ENTRY_POINT_GROUP",
    "Builtin",
    "Kind",
    "PluginDesc",
    "PluginRegistry",
    "default_registry",
    "kind_base",
    "load_target",
    "pruned_name",
    "simple_name",
]
