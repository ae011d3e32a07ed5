from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.support.plugins import source_task, versioned_plugin

from sparkcat.api.config._types import class_name as config_class_name
from sparkcat.api.converter import Converter, HeaderConverter
from sparkcat.api.errors import ConnectError
from sparkcat.runtime.errors.operator import class_name as error_class_name
from sparkcat.runtime.isolation.plugins import (
    BUILTINS,
    PluginRegistry,
    default_registry,
    pruned_name,
    simple_name,
)

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


@pytest.mark.parametrize(
    "name",
    [FILE_SOURCE, "FileStreamSourceConnector", "FileStreamSource",
     "sparkcat.connectors.file:FileStreamSourceConnector",
     "sparkcat.connectors.file.FileStreamSourceConnector"],
)  # fmt: skip
def test_connector_names_resolve_to_one_class(name: str) -> None:
    registry = PluginRegistry()
    expected = registry.resolve(FILE_SOURCE, "source")
    assert registry.resolve(name, "connector") is expected
    assert registry.resolve(name, "source") is expected


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("org.apache.kafka.connect.json.JsonConverter", "converter"),
        ("JsonConverter", "converter"),
        ("Json", "converter"),
        ("StringConverter", "header_converter"),
        ("SimpleHeaderConverter", "header_converter"),
    ],
)
def test_converter_aliases(name: str, kind: str) -> None:
    cls = PluginRegistry().resolve(name, kind)
    assert issubclass(cls, Converter if kind == "converter" else HeaderConverter)


def test_nested_key_value_need_the_full_name() -> None:
    registry = PluginRegistry()
    value = registry.resolve(
        "org.apache.kafka.connect.transforms.InsertField$Value", "transformation"
    )
    assert value.__qualname__ == "InsertField.Value"
    with pytest.raises(ConnectError, match="which name matches Value"):
        registry.resolve("Value", "transformation")


def test_kind_is_checked() -> None:
    with pytest.raises(ConnectError) as info:
        PluginRegistry().resolve("JsonConverter", "connector")
    message = str(info.value)
    assert message.startswith(
        "Failed to find any class that implements Connector and which name matches JsonConverter, "
        "available connectors are: PluginDesc{klass=class "
    )
    assert f"name='{FILE_SOURCE}'" in message
    assert "type=source, typeName='source', location='classpath'}" in message


def test_unknown_converter_message() -> None:
    pattern = r"implements Converter and which name matches Nope, available converters are: "
    with pytest.raises(ConnectError, match=pattern + r".*JsonConverter"):
        PluginRegistry().resolve("Nope", "converter")


def test_names() -> None:
    assert simple_name("org.apache.kafka.connect.transforms.Cast$Key") == "Key"
    assert pruned_name("org.apache.kafka.connect.json.JsonConverter", "converter") == "Json"
    assert pruned_name("a.SimpleHeaderConverter", "header_converter") == "Simple"
    assert pruned_name("a.FileStreamSinkConnector", "sink") == "FileStreamSink"
    assert pruned_name("a.Filter", "transformation") == "Filter"


def test_builtin_table_covers_every_smt_variant() -> None:
    names = {b.class_name.rsplit(".", 1)[-1] for b in BUILTINS}
    assert {"InsertField$Key", "InsertField$Value", "Filter", "RegexRouter"} <= names
    assert {"TopicNameMatches", "HasHeaderKey", "RecordIsTombstone"} <= names


def test_class_name_maps_builtins_back_to_kafka_names() -> None:
    registry = PluginRegistry()
    task = registry.resolve("org.apache.kafka.connect.file.FileStreamSourceTask", "task")
    assert registry.class_name(task) == "org.apache.kafka.connect.file.FileStreamSourceTask"
    assert (
        registry.class_name(PluginRegistry) == "sparkcat.runtime.isolation.plugins:PluginRegistry"
    )


def test_listing_order_and_kinds() -> None:
    listed = PluginRegistry().plugins()
    kinds = [d.kind for d in listed]
    assert kinds.index("sink") < kinds.index("source") < kinds.index("transformation")
    assert kinds.index("predicate") < kinds.index("converter") < kinds.index("header_converter")
    sinks = [d.class_name for d in listed if d.kind == "sink"]
    assert sinks == sorted(sinks)


def test_plugin_path_directory(tmp_path: Path) -> None:
    (tmp_path / "my_converters_mod.py").write_text(
        textwrap.dedent(
            """
            from sparkcat.api.converter import Converter

            class ShoutConverter(Converter):
                def configure(self, configs, is_key): pass
                def from_connect_data(self, topic, schema, value, headers=None): return b""
                def to_connect_data(self, topic, data, headers=None): return None
            """
        )
    )
    registry = PluginRegistry([tmp_path])
    cls = registry.resolve("ShoutConverter", "converter")
    assert registry.resolve("Shout", "converter") is cls
    assert registry.resolve("my_converters_mod.ShoutConverter", "converter") is cls
    assert any(d.class_name == "my_converters_mod.ShoutConverter" for d in registry.plugins())


def test_default_registry_is_cached() -> None:
    assert default_registry(()) is default_registry([])


def test_resolving_a_converter_does_not_import_transforms() -> None:
    code = (
        "import sys; from sparkcat.runtime.isolation.plugins import default_registry;"
        "default_registry().resolve('JsonConverter', 'converter');"
        "print(any(m.startswith('sparkcat.transforms') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_plugin_subdirectory_is_the_import_root_of_its_modules(tmp_path: Path) -> None:
    entry = tmp_path / "connectors"
    root = versioned_plugin(entry, "acme-source", 1)
    (root / "acme_source.py").write_text(
        "from acme_helpers import BASE\n" + (root / "acme_source.py").read_text()
    )
    (root / "acme_helpers.py").write_text("BASE = 'a module next to the connector'\n")
    registry = PluginRegistry([entry])

    cls = registry.resolve("acme_source:AcmeSourceSourceConnector", "connector")
    assert registry.resolve("AcmeSourceSource", "source") is cls
    assert registry.resolve("acme_source.AcmeSourceSourceConnector", "source") is cls
    task = registry.resolve("acme_source:AcmeSourceSourceTask", "task")
    # task.class as the herder writes it: the name an executor's registry resolves again.
    assert registry.class_name(task) == "acme_source:AcmeSourceSourceTask"
    (listed,) = [d for d in registry.plugins("connector") if "Acme" in d.class_name]
    assert (listed.class_name, listed.version) == ("acme_source.AcmeSourceSourceConnector", "1")
    assert listed.location == str(root)
    # Messages, CLASS config values and DLQ headers name it as its user does.
    assert config_class_name(cls) == "acme_source:AcmeSourceSourceConnector"
    assert error_class_name(cls) == "acme_source.AcmeSourceSourceConnector"


def test_sibling_plugins_each_see_their_own_bundled_library(tmp_path: Path) -> None:
    entry = tmp_path / "connectors"
    versioned_plugin(entry, "acme-a", 1)
    versioned_plugin(entry, "acme-b", 2)
    registry = PluginRegistry([entry])

    versions = {d.class_name: d.version for d in registry.plugins("source")}
    tasks = [registry.resolve(source_task(n), "task")() for n in ("acme-a", "acme-b", "acme-a")]
    # Both plugins' tasks polling at once, in one process: each import finds its own copy.
    with ThreadPoolExecutor(3) as pool:
        polled = list(pool.map(poll_once, tasks))

    assert versions["acme_a.AcmeASourceConnector"] == "1"
    assert versions["acme_b.AcmeBSourceConnector"] == "2"
    assert polled == ["acme-a import=1 lazy=1", "acme-b import=2 lazy=2", "acme-a import=1 lazy=1"]
    # Nothing leaked into the shared environment.
    assert "somelib" not in sys.modules
    assert not any(str(entry) in p for p in sys.path)


def poll_once(task: Any) -> str:
    task.start({"topic": "t"})
    (record,) = task.poll()
    return str(record.value)


def test_threads_resolving_a_package_with_a_circular_import_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shape of sparkcat.connectors.jdbc: the package's __init__ imports its modules, and
    # they import the package back. A task host resolves such classes for many leases on
    # threads at the same moment; a thread that finds the package half imported by another
    # goes straight into its module, and the two deadlock in Python's import locks.
    import threading

    monkeypatch.syspath_prepend(str(tmp_path))
    for round_ in range(3):
        package = tmp_path / f"circ{round_}"
        package.mkdir()
        (package / "__init__.py").write_text(
            "import time\ntime.sleep(0.05)\n"
            + "".join(f"from circ{round_}.mod{i} import Task{i}\n" for i in range(4))
        )
        (package / "shared.py").write_text("VALUE = 1\n")
        for i in range(4):
            (package / f"mod{i}.py").write_text(
                textwrap.dedent(f"""
                import time
                time.sleep(0.02)
                from circ{round_} import shared
                from sparkcat.api import SourceTask
                class Task{i}(SourceTask):
                    def version(self): return str(shared.VALUE)
                    def start(self, props): pass
                    def poll(self): return None
                    def stop(self): pass
            """)
            )
        registry = PluginRegistry()
        barrier = threading.Barrier(4)

        def resolve(i: int, registry: PluginRegistry = registry, b: Any = barrier) -> str:
            b.wait()
            time.sleep(0.01 * i)  # the first thread is inside __init__ when the others start
            return registry.resolve(f"circ{round_}.mod{i}.Task{i}", "task").__name__  # noqa: B023

        with ThreadPoolExecutor(4) as pool:
            assert list(pool.map(resolve, range(4))) == [f"Task{i}" for i in range(4)]
