"""Connector plans as a herder hands them to the engine, for the engine tests that play the
herder: the FileStream connectors and the test plugins' recording source."""

from __future__ import annotations

from pathlib import Path

from sparkcat.runtime.engine_api import ConnectorPlan

FILE_SOURCE = "sparkcat.connectors.file:FileStreamSourceTask"
FILE_SINK = "sparkcat.connectors.file:FileStreamSinkTask"
RECORDING = "sparkcat_test_plugins:RecordingSourceTask"


def file_source(name: str, path: Path, topic: str, **extra: str) -> ConnectorPlan:
    """A FileStreamSource of ``path`` into ``topic``, one task; ``extra`` connector keys."""
    config = {"name": name, "connector.class": "FileStreamSource", "file": str(path),
              "topic": topic, **extra}  # fmt: skip
    return ConnectorPlan(name, "source", config, [dict(config, **{"task.class": FILE_SOURCE})])


def file_sink(name: str, path: Path, topic: str, **extra: str) -> ConnectorPlan:
    """A FileStreamSink of ``topic`` into ``path``, one task; ``extra`` connector keys."""
    config = {"name": name, "connector.class": "FileStreamSink", "file": str(path),
              "topics": topic, **extra}  # fmt: skip
    return ConnectorPlan(name, "sink", config, [dict(config, **{"task.class": FILE_SINK})])


def recording(
    name: str, events: Path, topic: str, tasks: int = 1, generation: int = 0, **extra: str
) -> ConnectorPlan:
    """The test plugins' RecordingSourceConnector (``plugins_dir`` on ``sys.path``): its tasks
    append what happens to them to ``events``."""
    config = {
        "name": name,
        "connector.class": "sparkcat_test_plugins:RecordingSourceConnector",
        "topic": topic,
        "events.file": str(events),
        **extra,
    }
    task_configs = [
        dict(config, **{"task.class": RECORDING, "task.id": str(i)}) for i in range(tasks)
    ]
    return ConnectorPlan(name, "source", config, task_configs, generation=generation)
