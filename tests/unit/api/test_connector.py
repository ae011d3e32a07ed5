"""Contracts of Connector, Task and Config (sparkcat.api.connector)."""

from __future__ import annotations

import pytest

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.api.connector import Config, Connector, ConnectorContext, Task


class _Context(ConnectorContext):
    def __init__(self) -> None:
        self.reconfigurations = 0
        self.errors: list[BaseException] = []

    def request_task_reconfiguration(self) -> None:
        self.reconfigurations += 1

    def raise_error(self, exc: BaseException) -> None:
        self.errors.append(exc)


class _Task(Task):
    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass


class _Connector(Connector):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.calls.append(f"start:{props.get('topic')}")

    def task_class(self) -> type[Task]:
        return _Task

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"id": str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        self.calls.append("stop")

    def config(self) -> ConfigDef:
        return ConfigDef().define("topic", ConfigType.STRING, importance=Importance.HIGH)


def test_abstract_connector_cannot_be_instantiated() -> None:
    with pytest.raises(TypeError):
        Connector()  # type: ignore[abstract]
    with pytest.raises(TypeError):
        Task()  # type: ignore[abstract]


def test_initialize_keeps_the_context() -> None:
    connector, context = _Connector(), _Context()
    connector.initialize(context)
    connector.context.request_task_reconfiguration()
    assert context.reconfigurations == 1


def test_reconfigure_stops_then_starts() -> None:
    connector = _Connector()
    connector.reconfigure({"topic": "b"})
    assert connector.calls == ["stop", "start:b"]


def test_default_validate_uses_the_config_def() -> None:
    result = _Connector().validate({})
    assert isinstance(result, Config)
    values = {v.name: v for v in result.config_values}
    assert values["topic"].error_messages, "a required key without value is an error"
    ok = {v.name: v for v in _Connector().validate({"topic": "x"})}
    assert ok["topic"].error_messages == []
    assert ok["topic"].value == "x"
    assert len(result) == 1


def test_config_equality() -> None:
    assert Config([]) == Config(())
    assert Config([]).config_values == []
