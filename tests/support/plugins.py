"""Plugins laid out as a user installs them under ``plugin.path`` (Kafka's layout).

:func:`versioned_plugin` writes one plugin subdirectory, ``<entry>/<name>/``, holding a
connector module and its own bundled copy of the library ``somelib`` at ``version``. The
connector's ``version()`` is ``somelib``'s version, imported when the module loads; each
record its task polls says which ``somelib`` the module saw at import time and which one an
import inside ``poll()`` finds at run time: ``"<name> import=<v> lazy=<v>"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CONNECTOR = """
import time

import somelib
from sparkcat.api import ConfigDef, SourceConnector, SourceRecord, SourceTask
from sparkcat.api.data import STRING_SCHEMA


class {cls}SourceConnector(SourceConnector):
    def version(self):
        return str(somelib.VERSION)

    def start(self, props):
        self._props = dict(props)

    def task_class(self):
        return {cls}SourceTask

    def task_configs(self, max_tasks):
        return [dict(self._props) for _ in range(max_tasks)]

    def config(self):
        return ConfigDef()

    def stop(self):
        pass


def lazy_version():
    import somelib.extra

    return somelib.extra.LATE


class {cls}SourceTask(SourceTask):
    def version(self):
        return "1.0"

    def start(self, props):
        self._topic = props["topic"]
        self._sent = 0

    def poll(self):
        time.sleep(0.05)
        value = "{name} import=%s lazy=%s" % (somelib.VERSION, lazy_version())
        self._sent += 1
        return [SourceRecord({{"p": "{name}"}}, {{"n": self._sent}}, self._topic, None,
                             None, None, STRING_SCHEMA, value)]

    def stop(self):
        pass
"""


def module_name(name: str) -> str:
    """The connector module of plugin ``name`` (``acme-a`` → ``acme_a``)."""
    return name.replace("-", "_")


def class_prefix(name: str) -> str:
    """The class-name prefix of plugin ``name`` (``acme-a`` → ``AcmeA``)."""
    return "".join(part.capitalize() for part in name.split("-"))


def versioned_plugin(entry: Path, name: str, version: int) -> Path:
    """Write plugin ``entry/name/`` bundling ``somelib`` ``version`` (see the module docs)."""
    root = entry / name
    (root / "somelib").mkdir(parents=True)
    (root / "somelib" / "__init__.py").write_text(f"VERSION = {version}\n")
    # A relative import inside the bundled library, run only when the task first polls.
    (root / "somelib" / "extra.py").write_text("from . import VERSION\n\nLATE = VERSION\n")
    (root / f"{module_name(name)}.py").write_text(
        CONNECTOR.format(cls=class_prefix(name), name=name)
    )
    return root


def source_connector(name: str) -> str:
    """The ``module:Class`` name of plugin ``name``'s source connector."""
    return f"{module_name(name)}:{class_prefix(name)}SourceConnector"


def source_task(name: str) -> str:
    """The ``module:Class`` name of plugin ``name``'s source task."""
    return f"{module_name(name)}:{class_prefix(name)}SourceTask"


def topic_values(servers: str, topic: str, expected: int, timeout_s: float = 20.0) -> list[str]:
    """The values of ``topic``'s messages as strings, once ``expected`` arrived (or timed out)."""
    import time

    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": "plugin-layout-tests",
                         "enable.auto.commit": "false"})  # fmt: skip
    deadline = time.monotonic() + timeout_s
    try:
        partitions: dict[int, Any] = {}
        while not partitions and time.monotonic() < deadline:  # the task creates it
            found = consumer.list_topics(topic, timeout=10).topics.get(topic)
            partitions = dict(found.partitions) if found is not None and not found.error else {}
            time.sleep(0.2)
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        values: list[str] = []
        while len(values) < expected and time.monotonic() < deadline:
            values.extend(
                m.value().decode() for m in consumer.consume(1000, 0.2) if m.error() is None
            )
        return values
    finally:
        consumer.close()
