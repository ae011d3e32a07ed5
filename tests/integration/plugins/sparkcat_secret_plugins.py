"""Test-only plugins for config providers, loaded through ``plugin.path``.

``SecretSourceConnector`` has a PASSWORD key ``token`` and a STRING key ``user``. Its
``start`` (on the worker) and its task's ``start`` (on a Spark executor) each write what they
received to ``<proof.dir>/connector`` and ``<proof.dir>/task-<n>``, so a test can check that
both saw resolved values while nothing else did. The task emits one record per poll with a
counter as its source offset (never the secret).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from sparkcat.api import ConfigDef, SourceConnector, SourceRecord, SourceTask
from sparkcat.api.config import ConfigType, Importance
from sparkcat.api.data import STRING_SCHEMA

_KEYS = ("token", "user", "topic")


def _prove(props: dict[str, str], name: str) -> None:
    seen = {key: props.get(key) for key in _KEYS}
    Path(props["proof.dir"], name).write_text(json.dumps(seen), encoding="utf-8")


class SecretSourceConnector(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        _prove(self._props, "connector")

    def task_class(self) -> type[SourceTask]:
        return SecretSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props, **{"task.id": str(i)}) for i in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("token", ConfigType.PASSWORD, None, None, Importance.HIGH, "A secret.")
            .define("user", ConfigType.STRING, None, None, Importance.HIGH, "A user name.")
        )


class SecretSourceTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        self._task = props.get("task.id", "0")
        stored = self.context.offset_storage_reader().offset({"task": self._task})
        self._next = int(stored["n"]) + 1 if stored else 0
        _prove(self._props, f"task-{self._task}")

    def poll(self) -> list[SourceRecord] | None:
        time.sleep(0.2)
        record: Any = SourceRecord(
            {"task": self._task}, {"n": self._next}, self._props["topic"], None,
            None, None, STRING_SCHEMA, f"tick-{self._next}",
        )  # fmt: skip
        self._next += 1
        return [record]

    def stop(self) -> None:
        pass


__all__ = ["SecretSourceConnector", "SecretSourceTask"]
